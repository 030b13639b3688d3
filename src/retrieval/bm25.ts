/**
 * In-process Okapi BM25 over chunks, partitioned by locale.
 *
 *   score(D, Q) = Σ_{t ∈ Q} idf(t) · tf(t,D)·(k1 + 1) / (tf(t,D) + k1·(1 − b + b·|D|/avgdl))
 *   idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))        (Lucene's: always > 0)
 *
 * N, df and avgdl are those of the document's locale partition; |D| counts the
 * analysed terms of D (stop words excluded). A query term that occurs twice
 * in the query counts twice (as duplicate clauses do in Lucene). Defaults
 * k1 = 1.2, b = 0.75; explicit 0 is respected.
 *
 * Each document is analysed with its own locale's analyzer (analyzer.ts), from
 * the analyzer set the index is built with (default: DEFAULT_ANALYZERS). A
 * query with a locale is analysed with that analyzer and searches only that
 * partition; a query without locale is analysed once per locale and searched
 * in every partition, and the hits are merged by score (ties by id).
 *
 * Index: per partition, an inverted index term → postings (document ordinals
 * and term frequencies, typed arrays once built) plus document lengths.
 * Search touches only the postings of the query's terms (no corpus scan) and
 * keeps the top N in a bounded heap.
 */
import { InvalidArgumentError } from "../errors.js";
import { isLocale, type Locale } from "../kb/types.js";
import { DEFAULT_ANALYZERS, type Analyzers } from "./analyzer.js";
import { assertNonNegativeFinite, assertPositiveInteger, compareIds } from "./fusion.js";
import type { Ranked } from "./types.js";

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

export interface BM25Params {
  /** Term-frequency saturation; default 1.2. Finite, ≥ 0. */
  k1?: number;
  /** Length normalisation; default 0.75. In [0, 1]. */
  b?: number;
}

/** What BM25 needs from a Chunk. */
export interface BM25Document {
  id: string;
  parentId: string;
  locale: Locale;
  text: string;
}

export interface BM25SearchOptions {
  /** How many hits at most (a positive integer). */
  topN: number;
  /** Search only this locale's partition, with its analyzer; every partition when absent. */
  locale?: Locale;
}

export interface BM25PartitionStats {
  documents: number;
  /** Distinct terms. */
  terms: number;
  /** Total postings (distinct (term, document) pairs). */
  postings: number;
  /** Total analysed tokens. */
  tokens: number;
  avgDocLength: number;
}

export interface BM25Stats {
  documents: number;
  k1: number;
  b: number;
  partitions: Partial<Record<Locale, BM25PartitionStats>>;
  /** Rough size of the index structures in bytes (typed arrays exact, maps and strings estimated). */
  approxBytes: number;
}

interface Postings {
  docs: Uint32Array;
  tfs: Uint32Array;
  idf: number;
}

/**
 * Accumulates one locale's postings while documents stream in (no per-document
 * maps, no retained term arrays): terms are interned to ids, and since
 * documents arrive in ordinal order a term's postings are appended in order,
 * its last posting being the current document's when the term repeats.
 */
class PartitionBuilder {
  readonly members: number[] = [];
  readonly lengths: number[] = [];
  readonly termIds = new Map<string, number>();
  readonly docs: number[][] = [];
  readonly tfs: number[][] = [];
  private readonly lastDoc: number[] = [];

  constructor(readonly locale: Locale) {}

  add(global: number, terms: readonly string[]): void {
    const ordinal = this.members.length;
    this.members.push(global);
    this.lengths.push(terms.length);
    for (const t of terms) {
      let id = this.termIds.get(t);
      if (id === undefined) {
        id = this.docs.length;
        this.termIds.set(t, id);
        this.docs.push([]);
        this.tfs.push([]);
        this.lastDoc.push(-1);
      }
      const tfs = this.tfs[id] as number[];
      if (this.lastDoc[id] === ordinal) {
        tfs[tfs.length - 1] = (tfs[tfs.length - 1] as number) + 1;
      } else {
        this.lastDoc[id] = ordinal;
        (this.docs[id] as number[]).push(ordinal);
        tfs.push(1);
      }
    }
  }
}

/** One locale's inverted index. Ordinals index `members`. */
class Partition {
  readonly postings = new Map<string, Postings>();
  /** Global document index of each ordinal. */
  readonly members: Uint32Array;
  readonly lengths: Uint32Array;
  readonly avgdl: number;
  readonly tokens: number;
  private postingCount = 0;
  /** Scratch accumulator reused across searches; only touched entries are read and reset. */
  private readonly scratch: Float64Array;
  private readonly seen: Uint8Array;
  readonly locale: Locale;

  constructor(builder: PartitionBuilder) {
    this.locale = builder.locale;
    const n = builder.members.length;
    this.members = Uint32Array.from(builder.members);
    this.lengths = Uint32Array.from(builder.lengths);
    let total = 0;
    for (const len of builder.lengths) total += len;
    this.tokens = total;
    this.avgdl = n === 0 ? 0 : total / n;
    for (const [t, id] of builder.termIds) {
      const docs = builder.docs[id] as number[];
      const df = docs.length;
      this.postingCount += df;
      this.postings.set(t, {
        docs: Uint32Array.from(docs),
        tfs: Uint32Array.from(builder.tfs[id] as number[]),
        idf: Math.log(1 + (n - df + 0.5) / (df + 0.5)),
      });
    }
    this.scratch = new Float64Array(n);
    this.seen = new Uint8Array(n);
  }

  get size(): number {
    return this.members.length;
  }

  stats(): BM25PartitionStats {
    return {
      documents: this.size,
      terms: this.postings.size,
      postings: this.postingCount,
      tokens: this.tokens,
      avgDocLength: this.avgdl,
    };
  }

  approxBytes(): number {
    let bytes = this.members.byteLength + this.lengths.byteLength + this.scratch.byteLength + this.seen.byteLength;
    for (const [t, p] of this.postings) bytes += 2 * t.length + 80 + p.docs.byteLength + p.tfs.byteLength;
    return bytes;
  }

  /** Scores the documents that contain at least one query term: [global doc, score] pairs. */
  score(terms: readonly string[], k1: number, b: number): { global: number; score: number }[] {
    const touched: number[] = [];
    const { scratch, seen, lengths } = this;
    const avgdl = this.avgdl;
    for (const t of terms) {
      const p = this.postings.get(t);
      if (p === undefined) continue;
      const { docs, tfs, idf } = p;
      for (let i = 0; i < docs.length; i++) {
        const d = docs[i] as number;
        const tf = tfs[i] as number;
        // avgdl > 0 whenever a posting exists (its document has ≥ 1 term).
        const norm = k1 * (1 - b + (b * (lengths[d] as number)) / avgdl);
        const s = (idf * tf * (k1 + 1)) / (tf + norm);
        if (seen[d] === 0) {
          seen[d] = 1;
          touched.push(d);
          scratch[d] = s;
        } else {
          scratch[d] = (scratch[d] as number) + s;
        }
      }
    }
    const out = touched.map((d) => ({ global: this.members[d] as number, score: scratch[d] as number }));
    for (const d of touched) {
      seen[d] = 0;
      scratch[d] = 0;
    }
    return out;
  }
}

export class BM25Index {
  readonly k1: number;
  readonly b: number;
  /** The analyzers documents were indexed with; queries go through the same ones. */
  readonly analyzers: Analyzers;
  private readonly ids: string[];
  private readonly parentIds: string[];
  /** Position of each document in id order: integer tie-break equal to `compareIds`. */
  private readonly idOrder: Uint32Array;
  private readonly partitions = new Map<Locale, Partition>();

  private constructor(docs: readonly BM25Document[], k1: number, b: number, analyzers: Analyzers) {
    this.k1 = k1;
    this.b = b;
    this.analyzers = analyzers;
    this.ids = docs.map((d) => d.id);
    this.parentIds = docs.map((d) => d.parentId);
    const order = this.ids.map((_, i) => i).sort((x, y) => compareIds(this.ids[x] as string, this.ids[y] as string));
    this.idOrder = new Uint32Array(docs.length);
    order.forEach((global, pos) => {
      this.idOrder[global] = pos;
    });
    const builders = new Map<Locale, PartitionBuilder>();
    docs.forEach((d, global) => {
      let builder = builders.get(d.locale);
      if (builder === undefined) {
        builder = new PartitionBuilder(d.locale);
        builders.set(d.locale, builder);
      }
      builder.add(global, analyzers.analyze(d.text, d.locale));
    });
    // Partitions in a fixed (sorted) order, whatever locales the documents use.
    for (const locale of [...builders.keys()].sort()) this.partitions.set(locale, new Partition(builders.get(locale)!));
  }

  /**
   * Builds the index, analysing with `analyzers` (a KB's: `createAnalyzers`;
   * default: the default profile). Throws InvalidArgumentError for duplicate
   * ids, an unknown locale, a non-string text, k1 not finite ≥ 0, or b
   * outside [0, 1].
   */
  static build(
    docs: readonly BM25Document[],
    params?: BM25Params,
    analyzers: Analyzers = DEFAULT_ANALYZERS,
  ): BM25Index {
    const k1 = params?.k1 ?? BM25_K1;
    const b = params?.b ?? BM25_B;
    assertNonNegativeFinite("k1", k1);
    if (typeof b !== "number" || !Number.isFinite(b) || b < 0 || b > 1) {
      throw new InvalidArgumentError("b", "a number in [0, 1]", b);
    }
    const seen = new Set<string>();
    docs.forEach((d, i) => {
      if (typeof d.id !== "string" || d.id.length === 0)
        throw new InvalidArgumentError(`docs[${i}].id`, "a non-empty string", d.id);
      if (seen.has(d.id)) throw new InvalidArgumentError("docs", "unique ids", d.id);
      seen.add(d.id);
      if (!isLocale(d.locale))
        throw new InvalidArgumentError(
          `docs[${i}].locale`,
          "a canonical BCP-47 language tag (e.g. en, de, fr-CA, ja, zh-Hans)",
          d.locale,
        );
      if (typeof d.text !== "string") throw new InvalidArgumentError(`docs[${i}].text`, "a string", d.text);
    });
    return new BM25Index(docs, k1, b, analyzers);
  }

  /** Number of indexed documents (chunks). */
  get size(): number {
    return this.ids.length;
  }

  /** Locales that have at least one document. */
  get locales(): Locale[] {
    return [...this.partitions.keys()];
  }

  /** Document frequency of an analysed term in a locale's partition (0 when absent). */
  documentFrequency(term: string, locale: Locale): number {
    return this.partitions.get(locale)?.postings.get(term)?.docs.length ?? 0;
  }

  stats(): BM25Stats {
    const partitions: Partial<Record<Locale, BM25PartitionStats>> = {};
    let bytes = this.idOrder.byteLength;
    for (let i = 0; i < this.ids.length; i++)
      bytes += 2 * ((this.ids[i] as string).length + (this.parentIds[i] as string).length) + 32;
    for (const [locale, p] of this.partitions) {
      partitions[locale] = p.stats();
      bytes += p.approxBytes();
    }
    return { documents: this.size, k1: this.k1, b: this.b, partitions, approxBytes: bytes };
  }

  /**
   * Top `topN` chunks for `query`, score descending, ties by id ascending,
   * ranks 1-based. Documents sharing no term with the query are not returned
   * (every returned score is > 0), so the list can be shorter than `topN`.
   */
  search(query: string, options: BM25SearchOptions): Ranked[] {
    if (typeof query !== "string") throw new InvalidArgumentError("query", "a string", query);
    assertPositiveInteger("topN", options.topN);
    const { topN, locale } = options;
    if (locale !== undefined && !isLocale(locale)) {
      throw new InvalidArgumentError(
        "locale",
        "a canonical BCP-47 language tag (e.g. en, de, fr-CA, ja, zh-Hans)",
        locale,
      );
    }
    const heap = new TopHeap(topN, this.idOrder);
    const targets =
      locale === undefined
        ? [...this.partitions.values()]
        : [this.partitions.get(locale)].filter((p) => p !== undefined);
    for (const p of targets) {
      const terms = this.analyzers.analyze(query, p.locale);
      if (terms.length === 0) continue;
      for (const hit of p.score(terms, this.k1, this.b)) heap.offer(hit.global, hit.score);
    }
    return heap.drain().map((h, i) => ({
      id: this.ids[h.global] as string,
      parentId: this.parentIds[h.global] as string,
      score: h.score,
      rank: i + 1,
    }));
  }
}

/**
 * Bounded min-heap of the best `capacity` hits, where "better" is a higher
 * score, then a smaller id (via the precomputed id order).
 */
class TopHeap {
  private readonly items: { global: number; score: number }[] = [];
  constructor(
    private readonly capacity: number,
    private readonly idOrder: Uint32Array,
  ) {}

  /** True when a is worse than b. */
  private worse(a: { global: number; score: number }, b: { global: number; score: number }): boolean {
    if (a.score !== b.score) return a.score < b.score;
    return (this.idOrder[a.global] as number) > (this.idOrder[b.global] as number);
  }

  offer(global: number, score: number): void {
    const item = { global, score };
    const h = this.items;
    if (h.length < this.capacity) {
      h.push(item);
      let i = h.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.worse(h[i]!, h[parent]!)) break;
        [h[i], h[parent]] = [h[parent]!, h[i]!];
        i = parent;
      }
      return;
    }
    if (!this.worse(h[0]!, item)) return;
    h[0] = item;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.worse(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.worse(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }

  /** Best first. */
  drain(): { global: number; score: number }[] {
    return [...this.items].sort((a, b) => (this.worse(a, b) ? 1 : this.worse(b, a) ? -1 : 0));
  }
}
