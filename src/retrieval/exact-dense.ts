/**
 * Exact dense search over the vectors of a Chroma collection (docs/determinism.md).
 *
 * Chroma's HNSW search is approximate, and which neighbours it returns
 * depends on the graph it built (insertion order, multi-threaded inserts,
 * the brute-force buffer not yet flushed into the graph, the `where`
 * filter). Two runs over "the same" collection can therefore rank a few
 * chunks differently. The dense stage of retrace does not depend on that:
 * the stored vectors are read back from Chroma once per session (paged
 * `get` with `include: ["embeddings", "metadatas"]`) and every query is an
 * exact brute-force cosine over them, partitioned by locale (no filter),
 * ties broken by chunk id. Chroma stays the store of record; the ranking is
 * a pure function of the stored vectors and the query.
 *
 * Memory: 4 bytes × dimension per chunk (Float32), e.g. 154 MB for 100,000
 * chunks of 384 dimensions. Cost: N·d multiply-adds per query over the
 * locale's partition.
 */
import { DimensionMismatchError, InvalidArgumentError, ServiceUnavailableError } from "../errors.js";
import type { Locale } from "../kb/types.js";
import { LOCALE_EXPECTED, isLocale } from "../kb/types.js";
import type { ChromaCollection } from "./chroma-types.js";
import type { DenseIndex, DenseSearchOptions } from "./dense.js";
import { assertPositiveInteger, compareIds } from "./fusion.js";
import type { Ranked } from "./types.js";

/** Records fetched per `get` request when reading a collection back. */
export const EXACT_LOAD_PAGE = 1_000;

/** One stored vector as read back from the store. */
export interface StoredVector {
  id: string;
  parentId: string;
  locale: Locale;
  vector: ArrayLike<number>;
}

interface Partition {
  ids: string[];
  parents: string[];
  /** Unit-normalised rows (zero rows stay zero), row-major, float32, in shared memory (see `share`). */
  matrix: Float32Array;
}

/**
 * An exact index as plain data whose matrices live in shared memory: posted
 * to a worker thread (src/app/own-graph/parallel.ts), it rebuilds the same index there
 * (`ExactDenseIndex.fromShared`) without copying the vectors.
 */
export interface SharedExactDense {
  name: string;
  dimension: number;
  partitions: { locale: Locale; ids: string[]; parents: string[]; matrix: Float32Array }[];
}

/**
 * Exact cosine top-N: score = (q · v) / (|q| |v|) computed with float64
 * accumulation over float32-stored unit vectors; a zero vector (query or
 * row) scores 0. Ranks are 1-based; equal scores are ordered by chunk id
 * ascending, so the result is a pure function of the vectors and the query.
 * Without `locale`, all partitions are searched.
 */
export class ExactDenseIndex implements DenseIndex {
  readonly name: string;
  readonly dimension: number;
  private count = 0;
  private readonly partitions = new Map<Locale, Partition>();

  /** Number of vectors. */
  get size(): number {
    return this.count;
  }

  constructor(vectors: readonly StoredVector[], options: { dimension: number; name?: string }) {
    assertPositiveInteger("dimension", options.dimension);
    this.dimension = options.dimension;
    this.name = options.name ?? "exact";
    const d = options.dimension;
    const byLocale = new Map<Locale, StoredVector[]>();
    const seen = new Set<string>();
    for (const v of vectors) {
      if (seen.has(v.id)) throw new InvalidArgumentError("vectors", "unique ids", v.id);
      seen.add(v.id);
      if (!isLocale(v.locale)) throw new InvalidArgumentError(`locale of ${v.id}`, LOCALE_EXPECTED, v.locale);
      if (v.vector.length !== d) throw new DimensionMismatchError(d, v.vector.length, `stored vector ${v.id}`);
      const list = byLocale.get(v.locale) ?? [];
      list.push(v);
      byLocale.set(v.locale, list);
    }
    this.count = seen.size;
    for (const [locale, list] of [...byLocale].sort((a, b) => compareIds(a[0], b[0]))) {
      // Rows in id order: the layout (and so float summation order) never depends on fetch order.
      list.sort((a, b) => compareIds(a.id, b.id));
      const matrix = new Float32Array(new SharedArrayBuffer(list.length * d * Float32Array.BYTES_PER_ELEMENT));
      list.forEach((v, row) => {
        let norm = 0;
        for (let i = 0; i < d; i++) {
          const x = v.vector[i] as number;
          if (!Number.isFinite(x)) throw new InvalidArgumentError(`vector of ${v.id}`, "finite numbers", x);
          norm += x * x;
        }
        norm = Math.sqrt(norm);
        if (norm > 0) for (let i = 0; i < d; i++) matrix[row * d + i] = (v.vector[i] as number) / norm;
      });
      this.partitions.set(locale, { ids: list.map((v) => v.id), parents: list.map((v) => v.parentId), matrix });
    }
  }

  /** This index as plain data over its shared matrices (nothing copied; see SharedExactDense). */
  share(): SharedExactDense {
    return {
      name: this.name,
      dimension: this.dimension,
      partitions: [...this.partitions].map(([locale, p]) => ({ locale, ...p })),
    };
  }

  /** The index `share()` described, over the same shared matrices: the same rankings as the original. */
  static fromShared(shared: SharedExactDense): ExactDenseIndex {
    const index = new ExactDenseIndex([], { dimension: shared.dimension, name: shared.name });
    for (const p of shared.partitions) {
      if (p.ids.length !== p.parents.length || p.matrix.length !== p.ids.length * shared.dimension) {
        throw new InvalidArgumentError(
          `shared partition ${p.locale}`,
          `ids, parents and a ${shared.dimension}-column matrix of the same rows`,
          {
            ids: p.ids.length,
            parents: p.parents.length,
            values: p.matrix.length,
          },
        );
      }
      index.partitions.set(p.locale, { ids: p.ids, parents: p.parents, matrix: p.matrix });
      index.count += p.ids.length;
    }
    return index;
  }

  async search(vector: number[], options: DenseSearchOptions): Promise<Ranked[]> {
    return this.searchSync(vector, options);
  }

  searchSync(vector: readonly number[], options: DenseSearchOptions): Ranked[] {
    assertPositiveInteger("topN", options.topN);
    if (options.locale !== undefined && !isLocale(options.locale)) {
      throw new InvalidArgumentError("locale", LOCALE_EXPECTED, options.locale);
    }
    const d = this.dimension;
    if (vector.length !== d) throw new DimensionMismatchError(d, vector.length, `queries of ${this.name}`);
    let qn = 0;
    for (const x of vector) {
      if (!Number.isFinite(x)) throw new InvalidArgumentError("vector", "finite numbers", x);
      qn += x * x;
    }
    qn = Math.sqrt(qn);
    const q = new Float64Array(d);
    if (qn > 0) for (let i = 0; i < d; i++) q[i] = (vector[i] as number) / qn;
    const parts =
      options.locale !== undefined
        ? [this.partitions.get(options.locale)].filter((p) => p !== undefined)
        : [...this.partitions.values()];
    const topN = options.topN;
    // Bounded selection: keep the best topN (score desc, id asc) seen so far.
    const best: { score: number; id: string; parentId: string }[] = [];
    const worse = (a: { score: number; id: string }, b: { score: number; id: string }) =>
      a.score < b.score || (a.score === b.score && a.id > b.id);
    // A sparse query (the built-in embedder's hashed n-grams fill a fraction of the dimensions) is scanned on
    // its non-zero dimensions only, in ascending order. That gives the same bits as the full sum: a skipped term
    // is ±0, x + (±0) = x for any x ≠ 0, the running sum starts at +0 and never becomes −0 (+0 + −0 = +0; a
    // product of two finite float32-range values never underflows to −0 in float64).
    const nonZero: number[] = [];
    for (let i = 0; i < d; i++) if (q[i] !== 0) nonZero.push(i);
    const sparse = nonZero.length * 2 < d;
    const dims = Int32Array.from(nonZero);
    const qDims = Float64Array.from(nonZero, (i) => q[i] as number);
    for (const p of parts) {
      const m = p.matrix;
      for (let row = 0; row < p.ids.length; row++) {
        let dot = 0;
        const base = row * d;
        if (sparse)
          for (let j = 0; j < dims.length; j++) dot += (m[base + (dims[j] as number)] as number) * (qDims[j] as number);
        else for (let i = 0; i < d; i++) dot += (m[base + i] as number) * (q[i] as number);
        // Most rows lose to the current topN-th: test before allocating a candidate.
        if (best.length === topN) {
          const last = best[topN - 1]!;
          if (dot < last.score || (dot === last.score && (p.ids[row] as string) > last.id)) continue;
        }
        const cand = { score: dot, id: p.ids[row] as string, parentId: p.parents[row] as string };
        // insertion into the sorted list (topN is small: tens)
        let at = best.length;
        while (at > 0 && worse(best[at - 1]!, cand)) at--;
        best.splice(at, 0, cand);
        if (best.length > topN) best.pop();
      }
    }
    return best.map((h, i) => ({ id: h.id, parentId: h.parentId, score: h.score, rank: i + 1 }));
  }
}

/**
 * Reads every record of `collection` back (ids, embeddings, parent id and
 * locale from the record metadata), page by page, and builds the exact
 * index. `expectedCount` (the collection metadata's chunk count) is checked:
 * a store that returns fewer or more records is a ServiceUnavailableError.
 */
export async function loadExactDenseIndex(
  collection: Pick<ChromaCollection, "get" | "name">,
  options: { dimension: number; expectedCount?: number; pageSize?: number },
): Promise<ExactDenseIndex> {
  const pageSize = options.pageSize ?? EXACT_LOAD_PAGE;
  assertPositiveInteger("pageSize", pageSize);
  const vectors: StoredVector[] = [];
  for (let offset = 0; ; offset += pageSize) {
    const page = await collection.get({ limit: pageSize, offset, include: ["embeddings", "metadatas"] });
    const ids = page.ids;
    ids.forEach((id, i) => {
      const meta = (page.metadatas[i] ?? {}) as Record<string, unknown>;
      const parentId = typeof meta.parentId === "string" ? meta.parentId : id;
      const locale = meta.locale as Locale;
      const vector = page.embeddings[i];
      if (vector === undefined || vector === null) {
        throw new ServiceUnavailableError(
          "chroma",
          `Chroma returned no embedding for record ${id} of ${collection.name}`,
        );
      }
      vectors.push({ id, parentId, locale, vector });
    });
    if (ids.length < pageSize) break;
  }
  if (options.expectedCount !== undefined && vectors.length !== options.expectedCount) {
    throw new ServiceUnavailableError(
      "chroma",
      `Chroma returned ${vectors.length} records of ${collection.name}, its metadata says ${options.expectedCount}`,
    );
  }
  return new ExactDenseIndex(vectors, { dimension: options.dimension, name: `exact:${collection.name}` });
}

/**
 * The dense index retrace serves for a complete collection: its vectors read
 * back into an `ExactDenseIndex` (count checked against the collection
 * metadata). See docs/determinism.md for why not Chroma's HNSW query.
 */
export function openExactDense(current: {
  collection: Pick<ChromaCollection, "get" | "name">;
  metadata: { dimension: number; chunks: number };
}): Promise<ExactDenseIndex> {
  return loadExactDenseIndex(current.collection, {
    dimension: current.metadata.dimension,
    expectedCount: current.metadata.chunks,
  });
}
