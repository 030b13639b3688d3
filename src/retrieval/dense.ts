/**
 * Dense (vector) search behind one interface: the Chroma store implements it
 * for real runs; `InMemoryDenseIndex` is an exact brute-force cosine index used
 * by unit tests and as a fallback when no store is wanted.
 */
import { DimensionMismatchError, InvalidArgumentError } from "../errors.js";
import type { Locale } from "../kb/types.js";
import { LOCALE_EXPECTED, isLocale } from "../kb/types.js";
import { assertPositiveInteger, compareIds } from "./fusion.js";
import type { Embedder, Ranked } from "./types.js";

export interface DenseSearchOptions {
  /** How many chunks to return at most (a positive integer). */
  topN: number;
  /** Only chunks of this locale; all locales when absent. */
  locale?: Locale;
}

/** A vector index over chunks. `score` is cosine similarity (higher is better); ranks are 1-based. */
export interface DenseIndex {
  /** Short name for logs and reports, e.g. `memory` or `chroma:retrace-builtin-hashed-ngrams-384-v1`. */
  readonly name: string;
  search(vector: number[], options: DenseSearchOptions): Promise<Ranked[]>;
}

/** One stored vector of an `InMemoryDenseIndex`. */
export interface DenseEntry {
  id: string;
  parentId: string;
  locale: Locale;
  vector: readonly number[];
}

/** Something with the fields of a Chunk that dense indexing needs. */
export interface EmbeddableChunk {
  id: string;
  parentId: string;
  locale: Locale;
  text: string;
}

/**
 * Cosine similarity of two vectors of equal length; 0 when either has zero norm
 * (a zero vector is similar to nothing, rather than NaN).
 */
export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new DimensionMismatchError(a.length, b.length, "cosine similarity");
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  if (na === 0 || nb === 0) return 0;
  return dot / (Math.sqrt(na) * Math.sqrt(nb));
}

/**
 * Exact brute-force cosine search over vectors held in memory. O(N·d) per query:
 * right for tests and small knowledge bases, not for large corpora.
 */
export class InMemoryDenseIndex implements DenseIndex {
  readonly name: string;
  readonly dimension: number;
  private readonly ids: string[] = [];
  private readonly parents: string[] = [];
  private readonly locales: Locale[] = [];
  /** Unit-normalised vectors, row-major (zero rows stay zero). */
  private readonly matrix: Float64Array;

  constructor(entries: readonly DenseEntry[], options?: { name?: string; dimension?: number }) {
    this.name = options?.name ?? "memory";
    const first = entries[0];
    const dimension = options?.dimension ?? first?.vector.length;
    if (dimension === undefined) {
      throw new InvalidArgumentError("dimension", "given when the index is built from no entries", undefined);
    }
    assertPositiveInteger("dimension", dimension);
    this.dimension = dimension;
    this.matrix = new Float64Array(entries.length * dimension);
    const seen = new Set<string>();
    entries.forEach((e, row) => {
      if (seen.has(e.id)) throw new InvalidArgumentError("entries", "unique ids", e.id);
      seen.add(e.id);
      if (!isLocale(e.locale)) throw new InvalidArgumentError(`entries[${row}].locale`, LOCALE_EXPECTED, e.locale);
      if (e.vector.length !== dimension) {
        throw new DimensionMismatchError(dimension, e.vector.length, `in-memory entry ${e.id}`);
      }
      let norm = 0;
      for (const x of e.vector) {
        if (!Number.isFinite(x)) throw new InvalidArgumentError(`entries[${row}].vector`, "finite numbers", x);
        norm += x * x;
      }
      norm = Math.sqrt(norm);
      const base = row * dimension;
      if (norm > 0) for (let i = 0; i < dimension; i++) this.matrix[base + i] = (e.vector[i] as number) / norm;
      this.ids.push(e.id);
      this.parents.push(e.parentId);
      this.locales.push(e.locale);
    });
  }

  /** Embeds every chunk's text with `embedder` and indexes the vectors. */
  static async fromChunks(
    chunks: readonly EmbeddableChunk[],
    embedder: Embedder,
    options?: { name?: string; batchSize?: number },
  ): Promise<InMemoryDenseIndex> {
    const batchSize = options?.batchSize ?? 64;
    assertPositiveInteger("batchSize", batchSize);
    const entries: DenseEntry[] = [];
    for (let start = 0; start < chunks.length; start += batchSize) {
      const batch = chunks.slice(start, start + batchSize);
      const vectors = await embedder.embedDocuments(
        batch.map((c) => c.text),
        { locales: batch.map((c) => c.locale) },
      );
      if (vectors.length !== batch.length) {
        throw new InvalidArgumentError("embedDocuments(texts)", `${batch.length} vectors`, vectors.length);
      }
      batch.forEach((c, i) => {
        entries.push({ id: c.id, parentId: c.parentId, locale: c.locale, vector: vectors[i] as number[] });
      });
    }
    return new InMemoryDenseIndex(entries, { name: options?.name ?? "memory", dimension: embedder.dimension });
  }

  get size(): number {
    return this.ids.length;
  }

  async search(vector: number[], options: DenseSearchOptions): Promise<Ranked[]> {
    return this.searchSync(vector, options);
  }

  /** Same as `search`, synchronously. Ties (equal cosine) are broken by id ascending. */
  searchSync(vector: readonly number[], options: DenseSearchOptions): Ranked[] {
    assertPositiveInteger("topN", options.topN);
    if (options.locale !== undefined && !isLocale(options.locale)) {
      throw new InvalidArgumentError("locale", LOCALE_EXPECTED, options.locale);
    }
    const d = this.dimension;
    if (vector.length !== d) throw new DimensionMismatchError(d, vector.length, `query of ${this.name}`);
    let qn = 0;
    for (const x of vector) {
      if (!Number.isFinite(x)) throw new InvalidArgumentError("vector", "finite numbers", x);
      qn += x * x;
    }
    qn = Math.sqrt(qn);
    const hits: { row: number; score: number }[] = [];
    for (let row = 0; row < this.ids.length; row++) {
      if (options.locale !== undefined && this.locales[row] !== options.locale) continue;
      let dot = 0;
      const base = row * d;
      for (let i = 0; i < d; i++) dot += (this.matrix[base + i] as number) * (vector[i] as number);
      hits.push({ row, score: qn === 0 ? 0 : dot / qn });
    }
    hits.sort((a, b) => b.score - a.score || compareIds(this.ids[a.row] as string, this.ids[b.row] as string));
    return hits.slice(0, options.topN).map((h, i) => ({
      id: this.ids[h.row] as string,
      parentId: this.parents[h.row] as string,
      score: h.score,
      rank: i + 1,
    }));
  }
}
