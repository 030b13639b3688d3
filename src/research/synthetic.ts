/**
 * Known-item query simulation (Azzopardi, de Rijke & Balog, SIGIR 2007),
 * deterministic and model-free: sample a document (a card), build a query
 * from terms the corpus associates with it, and the document is the gold
 * (docs/synthetic-cases.md). Used by `retrace cases synth` (multi-turn cases
 * from a KB's cards or a BEIR corpus) and `retrace beir --synthetic N` (which
 * measures how far such queries order retrieval systems as real judgments do).
 *
 * Terms are the locale analyzer's (the BM25 index's: stop words out,
 * stemmed); a query shows each sampled term in its most frequent surface
 * form in the chunk (else in the locale's corpus). Weights, per locale over
 * the chunks (a BEIR document is one chunk):
 *   tf·idf with idf = ln((1 + N) / (1 + df)) + 1.
 * Tokens that are only digits are not terms. Query length: uniform on [minTerms, maxTerms] (default 2–6), capped by the
 * distinct terms available; terms drawn without replacement ∝ weight.
 * Noise (`noise` p): each drawn term is, with probability p, replaced by a
 * term drawn ∝ collection frequency (the known-item literature's noise).
 *
 * Term models (`strategy`):
 * - `naive`: the chunk's own terms ∝ tf·idf (the measured baseline: it rewards exact matching);
 * - `title`: the card's title terms ∝ idf (falls back to naive without title terms);
 * - `neighbours`: ∝ the mean tf·idf profile of the chunk and its `neighbours`
 *   nearest chunks (tf·idf cosine, same locale), each weighing as much as the chunk itself;
 * - `mismatch`: as naive, then each term is, with probability `mismatch`
 *   (default 0.5), replaced by a term the chunk does not contain, drawn ∝
 *   its weight in the nearest chunks' profile (co-occurrence vocabulary mismatch).
 */
import { mulberry32 } from "../random.js";
import type { Locale } from "../kb/types.js";
import { tokenize, type Analyzers } from "../retrieval/analyzer.js";

/** The name and version written into every case's `origin` (bump the version when the same seed would give other cases). */
export const GENERATOR_NAME = "known-item";
export const GENERATOR_VERSION = "1";

export const STRATEGIES = ["naive", "title", "neighbours", "mismatch"] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** The generator name of a strategy, as `origin.generator` records it: `known-item-naive`, `known-item-mismatch`, … */
export function generatorName(strategy: Strategy): string {
  return `${GENERATOR_NAME}-${strategy}`;
}
/** The strategy `retrace cases synth` uses unless told (docs/synthetic-cases.md#numbers: never below naive's τ). */
export const DEFAULT_STRATEGY: Strategy = "naive";

/** A card as the generator sees it: its chunks in order. */
export interface SynthDoc {
  card: string;
  locale: Locale;
  title: string;
  chunks: ReadonlyArray<{ id: string; section: string; text: string }>;
}

export interface QuerySettings {
  strategy: Strategy;
  minTerms: number;
  maxTerms: number;
  noise: number;
  /** Nearest chunks used by `neighbours` and `mismatch` (default 5). */
  neighbours: number;
  /** Share of terms replaced under `mismatch` (default 0.5). */
  mismatch: number;
}

export const DEFAULT_QUERY_SETTINGS: Readonly<QuerySettings> = Object.freeze({
  strategy: DEFAULT_STRATEGY,
  minTerms: 2,
  maxTerms: 6,
  noise: 0,
  neighbours: 5,
  mismatch: 0.5,
});

/** A term-weight vector: analysed term → weight. */
type Vec = Map<string, number>;

interface ChunkStats {
  id: string;
  card: string;
  locale: string;
  tfidf: Vec;
  norm: number;
  /** Analysed term → its surface forms in this chunk, with counts. */
  surface: Map<string, Map<string, number>>;
  titleTerms: string[];
}

/** Per-locale term statistics and each chunk's tf·idf profile. */
export class CorpusStats {
  readonly chunks = new Map<string, ChunkStats>();
  private readonly idf = new Map<string, Map<string, number>>();
  private readonly collection = new Map<string, Array<[string, number]>>();
  private readonly surface = new Map<string, Map<string, Map<string, number>>>();
  private readonly byLocale = new Map<string, ChunkStats[]>();
  private readonly nearestMemo = new Map<string, string[]>();

  constructor(
    docs: readonly SynthDoc[],
    readonly analyzers: Analyzers,
  ) {
    const tfs = new Map<string, Map<string, number>>();
    const df = new Map<string, Map<string, number>>();
    const cf = new Map<string, Map<string, number>>();
    const n = new Map<string, number>();
    for (const d of docs) {
      const titleTerms = [...new Set(this.terms(d.title, d.locale).map((x) => x[0]))];
      for (const c of d.chunks) {
        const tf = new Map<string, number>();
        const surface = new Map<string, Map<string, number>>();
        for (const [term, word] of this.terms(c.text, d.locale)) {
          tf.set(term, (tf.get(term) ?? 0) + 1);
          const s = surface.get(term) ?? new Map<string, number>();
          s.set(word, (s.get(word) ?? 0) + 1);
          surface.set(term, s);
        }
        tfs.set(c.id, tf);
        const ldf = df.get(d.locale) ?? new Map<string, number>();
        const lcf = cf.get(d.locale) ?? new Map<string, number>();
        const lsurf = this.surface.get(d.locale) ?? new Map<string, Map<string, number>>();
        for (const [t, k] of tf) {
          ldf.set(t, (ldf.get(t) ?? 0) + 1);
          lcf.set(t, (lcf.get(t) ?? 0) + k);
          const all = lsurf.get(t) ?? new Map<string, number>();
          for (const [w, m] of surface.get(t) as Map<string, number>) all.set(w, (all.get(w) ?? 0) + m);
          lsurf.set(t, all);
        }
        df.set(d.locale, ldf);
        cf.set(d.locale, lcf);
        this.surface.set(d.locale, lsurf);
        n.set(d.locale, (n.get(d.locale) ?? 0) + 1);
        this.chunks.set(c.id, {
          id: c.id,
          card: d.card,
          locale: d.locale,
          tfidf: new Map(),
          norm: 0,
          surface,
          titleTerms,
        });
      }
    }
    for (const [locale, ldf] of df) {
      const N = n.get(locale) as number;
      const idf = new Map<string, number>();
      for (const [t, k] of ldf) idf.set(t, Math.log((1 + N) / (1 + k)) + 1);
      this.idf.set(locale, idf);
      this.collection.set(
        locale,
        [...(cf.get(locale) as Map<string, number>)].sort((a, b) => cmp(a[0], b[0])),
      );
    }
    for (const c of this.chunks.values()) {
      const idf = this.idf.get(c.locale) as Map<string, number>;
      let norm = 0;
      for (const [t, k] of tfs.get(c.id) as Map<string, number>) {
        const w = k * (idf.get(t) as number);
        c.tfidf.set(t, w);
        norm += w * w;
      }
      c.norm = Math.sqrt(norm);
      const list = this.byLocale.get(c.locale) ?? [];
      list.push(c);
      this.byLocale.set(c.locale, list);
    }
  }

  /** [analysed term, surface word] pairs of a text: each token analysed alone. */
  private terms(text: string, locale: Locale): Array<[string, string]> {
    const out: Array<[string, string]> = [];
    const analyzer = this.analyzers.analyzerFor(locale);
    for (const word of tokenize(text)) {
      const t = analyzer.analyze(word);
      // Numbers alone make no query words ("000", "1"); every other analysed token is a term.
      if (t.length === 1 && !/^\d+$/.test(t[0] as string)) out.push([t[0] as string, word]);
    }
    return out;
  }

  /** The analysed terms of a card's title (the first chunk's record of it). */
  titleTermsOf(chunkId: string): string[] {
    return this.chunks.get(chunkId)?.titleTerms ?? [];
  }

  /** Distinct analysed terms of a chunk. */
  termCount(chunkId: string): number {
    return this.chunks.get(chunkId)?.tfidf.size ?? 0;
  }

  idfOf(locale: string, term: string): number {
    return this.idf.get(locale)?.get(term) ?? 0;
  }

  /** The most frequent surface form of `term`: in the chunk, else in the locale (ties: code-unit order). */
  surfaceOf(chunk: ChunkStats, term: string): string {
    const forms = chunk.surface.get(term) ?? this.surface.get(chunk.locale)?.get(term);
    if (forms === undefined) return term;
    return [...forms].sort((a, b) => b[1] - a[1] || cmp(a[0], b[0]))[0]?.[0] ?? term;
  }

  /** The `m` nearest chunks of the same locale and another card by tf·idf cosine (ties by id). */
  nearest(chunkId: string, m: number): string[] {
    const key = `${chunkId}\u0000${m}`;
    const memo = this.nearestMemo.get(key);
    if (memo !== undefined) return memo;
    const c = this.chunks.get(chunkId) as ChunkStats;
    const scored: Array<[string, number]> = [];
    for (const o of this.byLocale.get(c.locale) ?? []) {
      if (o.card === c.card || o.norm === 0 || c.norm === 0) continue;
      let dot = 0;
      const [small, large] = c.tfidf.size <= o.tfidf.size ? [c.tfidf, o.tfidf] : [o.tfidf, c.tfidf];
      for (const [t, w] of small) {
        const v = large.get(t);
        if (v !== undefined) dot += w * v;
      }
      if (dot > 0) scored.push([o.id, dot / (c.norm * o.norm)]);
    }
    scored.sort((a, b) => b[1] - a[1] || cmp(a[0], b[0]));
    const out = scored.slice(0, m).map((s) => s[0]);
    this.nearestMemo.set(key, out);
    return out;
  }

  /** The mean L2-normalised tf·idf profile of the given chunks. */
  profile(ids: readonly string[]): Vec {
    const out: Vec = new Map();
    for (const id of ids) {
      const c = this.chunks.get(id) as ChunkStats;
      if (c.norm === 0) continue;
      for (const [t, w] of c.tfidf) out.set(t, (out.get(t) ?? 0) + w / c.norm / ids.length);
    }
    return out;
  }

  /** A term drawn ∝ collection frequency in the locale. */
  noiseTerm(locale: string, rng: () => number): string | undefined {
    const list = this.collection.get(locale);
    if (list === undefined || list.length === 0) return undefined;
    return drawWeighted(list, rng);
  }

  chunk(id: string): ChunkStats | undefined {
    return this.chunks.get(id);
  }
}

const NONE: ReadonlySet<string> = new Set();

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One item drawn ∝ weight (entries in a fixed order). */
function drawWeighted(entries: ReadonlyArray<readonly [string, number]>, rng: () => number): string | undefined {
  let total = 0;
  for (const [, w] of entries) total += w;
  if (total <= 0) return undefined;
  let x = rng() * total;
  for (const [t, w] of entries) {
    x -= w;
    if (x < 0) return t;
  }
  return entries[entries.length - 1]?.[0];
}

/** `k` distinct items drawn without replacement ∝ weight. */
function drawDistinct(weights: Vec, k: number, rng: () => number): string[] {
  const entries = [...weights].filter((e) => e[1] > 0).sort((a, b) => cmp(a[0], b[0]));
  const out: string[] = [];
  while (out.length < k && entries.length > 0) {
    const t = drawWeighted(entries, rng) as string;
    out.push(t);
    entries.splice(
      entries.findIndex((e) => e[0] === t),
      1,
    );
  }
  return out;
}

/** A seeded generator for one item: the seed and a string key mixed (FNV-1a), so items do not share streams. */
export function rngFor(seed: number, key: string): () => number {
  let h = 0x811c9dc5 ^ (seed >>> 0);
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193) >>> 0;
  return mulberry32(h);
}

/** The terms of a known-item query for a chunk (surface forms, in draw order), or null when the chunk has too few terms. */
export function knownItemTerms(
  stats: CorpusStats,
  chunkId: string,
  s: QuerySettings,
  rng: () => number,
  exclude: ReadonlySet<string> = NONE,
): string[] | null {
  const c = stats.chunk(chunkId);
  if (c === undefined || c.tfidf.size < s.minTerms) return null;
  const length = s.minTerms + Math.floor(rng() * (s.maxTerms - s.minTerms + 1));
  let weights: Vec = c.tfidf;
  if (s.strategy === "title") {
    const t: Vec = new Map(c.titleTerms.map((x) => [x, stats.idfOf(c.locale, x)]));
    if (t.size > 0) weights = t;
  } else if (s.strategy === "neighbours") {
    const near = stats.nearest(chunkId, s.neighbours);
    const own = stats.profile([chunkId]);
    const nb = stats.profile(near);
    weights = new Map(own);
    for (const [t, w] of nb) weights.set(t, (weights.get(t) ?? 0) + w);
  }
  if (exclude.size > 0) weights = new Map([...weights].filter(([t]) => !exclude.has(t)));
  let terms = drawDistinct(weights, Math.min(length, weights.size), rng);
  if (s.strategy === "mismatch") {
    const nb = stats.profile(stats.nearest(chunkId, s.neighbours));
    for (const t of c.tfidf.keys()) nb.delete(t);
    terms = terms.map((t) => {
      if (rng() >= s.mismatch || nb.size === 0) return t;
      const [r] = drawDistinct(nb, 1, rng);
      if (r === undefined) return t;
      nb.delete(r);
      return r;
    });
  }
  if (s.noise > 0)
    terms = terms.map((t) => {
      if (rng() >= s.noise) return t;
      return stats.noiseTerm(c.locale, rng) ?? t;
    });
  const seen = new Set<string>();
  const words: string[] = [];
  for (const t of terms) {
    const w = stats.surfaceOf(c, t);
    if (!seen.has(w)) words.push(w);
    seen.add(w);
  }
  return words.length >= 1 ? words : null;
}
