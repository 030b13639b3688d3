/**
 * Fitting LSA over a corpus (docs/fusion-and-tuning.md): TF-IDF rows from each locale's analyzer, the randomized SVD,
 * the latent share and its chance baseline (the same fit on the corpus's term occurrences dealt at random).
 * Re-exported by ./lsa.ts. Deterministic for a seed.
 */
import { createHash } from "node:crypto";
import { InvalidArgumentError } from "../../errors.js";
import type { Locale } from "../../kb/types.js";
import { mulberry32 } from "../../random.js";
import { isLocale } from "../../kb/types.js";
import { DEFAULT_ANALYZERS, type Analyzers } from "../analyzer.js";
import { randomizedSvd, type CsrMatrix } from "./lsa-math.js";
import type { LsaChunk, LsaParams, LsaState } from "./lsa-format.js";
import { checkParams } from "./lsa-format.js";

export const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** sha256 over the chunks sorted by id: JSON [id, locale, text] each, NUL-separated. */
export function lsaCorpusKey(chunks: readonly LsaChunk[]): string {
  const h = createHash("sha256");
  for (const c of [...chunks].sort((a, b) => byCodeUnit(a.id, b.id)))
    h.update(JSON.stringify([c.id, c.locale, c.text])).update("\u0000");
  return h.digest("hex");
}

export function termCounts(text: string, locales: readonly Locale[], analyzers: Analyzers): Map<string, number> {
  let best = new Map<string, number>();
  locales.forEach((locale, i) => {
    const counts = new Map<string, number>();
    for (const t of analyzers.analyze(text, locale)) counts.set(t, (counts.get(t) ?? 0) + 1);
    if (i === 0) best = counts;
    else for (const [t, n] of counts) if (n > (best.get(t) ?? 0)) best.set(t, n);
  });
  return best;
}

/** The L2-normalised TF-IDF row of `counts` over `index` (term → column): sorted column indices and values. */
export function tfidfRow(
  counts: Map<string, number>,
  index: Map<string, number>,
  idf: Float64Array,
): { cols: number[]; vals: number[] } {
  const tf = new Map<number, number>();
  for (const [t, n] of counts) {
    const j = index.get(t);
    if (j !== undefined) tf.set(j, n);
  }
  const cols = [...tf.keys()].sort((a, b) => a - b);
  const vals = cols.map((j) => (1 + Math.log(tf.get(j) as number)) * (idf[j] as number));
  let norm = 0;
  for (const v of vals) norm += v * v;
  norm = Math.sqrt(norm);
  return { cols, vals: norm > 0 ? vals.map((v) => v / norm) : vals };
}

/** The TF-IDF matrix of step 2 over per-chunk term counts (rows in the given order), with its sorted vocabulary and idf. */
export function tfidfMatrix(
  counts: readonly Map<string, number>[],
  minDf: number,
): { a: CsrMatrix; terms: string[]; idf: Float64Array } {
  const df = new Map<string, number>();
  for (const m of counts) for (const t of m.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  let terms = [...df.keys()].filter((t) => (df.get(t) as number) >= minDf);
  if (terms.length === 0) terms = [...df.keys()];
  if (terms.length === 0)
    throw new InvalidArgumentError("chunks", "text with at least one indexable term", "no term in any chunk");
  terms.sort(byCodeUnit);
  const n = counts.length;
  const idf = Float64Array.from(terms, (t) => Math.log((1 + n) / (1 + (df.get(t) as number))) + 1);
  const index = new Map(terms.map((t, j) => [t, j]));
  const indptr = new Int32Array(n + 1);
  const indices: number[] = [];
  const values: number[] = [];
  counts.forEach((m, i) => {
    const row = tfidfRow(m, index, idf);
    indices.push(...row.cols);
    values.push(...row.vals);
    indptr[i + 1] = indices.length;
  });
  return {
    a: { rows: n, cols: terms.length, indptr, indices: Int32Array.from(indices), values: Float64Array.from(values) },
    terms,
    idf,
  };
}

/** Below this, 1 − chance counts as 0: the axes keep (numerically) everything by chance, as at full rank. */
export const FULL_RANK_EPSILON = 1e-6;

/**
 * κ = (share − chance)/(1 − chance); undefined when chance is (numerically)
 * 1: at full rank (k ≥ the number of chunks) the axes keep everything by
 * chance too, and nothing beyond chance can be measured.
 */
export function chanceCorrected(share: number, chance: number): number | undefined {
  return 1 - chance < FULL_RANK_EPSILON ? undefined : (share - chance) / (1 - chance);
}

/** Σσ² / max(1, N): the share of the (row-normalised) matrix's energy that the k latent axes keep. */
export function energyShare(sigma: Float64Array, docs: number): number {
  let energy = 0;
  for (const x of sigma) energy += x * x;
  return Math.min(1, energy / Math.max(1, docs));
}

/**
 * The chance baseline of the latent share (docs/fusion-and-tuning.md, "The
 * dense weight follows the latent share"): the same fit on the same term
 * occurrences dealt at random to chunks of the same lengths (every chunk keeps
 * its number of term occurrences, every term its corpus frequency; a seeded
 * mulberry32 Fisher–Yates over the occurrences in chunk-id then term order),
 * which keeps Zipf's law and the length distribution and destroys
 * co-occurrence. Deterministic: same counts and params, same value.
 */
export function chanceShareOf(counts: readonly Map<string, number>[], p: LsaParams): number {
  const pool: string[] = [];
  for (const m of counts)
    for (const t of [...m.keys()].sort(byCodeUnit)) for (let i = 0; i < (m.get(t) as number); i++) pool.push(t);
  const rand = mulberry32(p.seed);
  for (let i = pool.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    const x = pool[i] as string;
    pool[i] = pool[j] as string;
    pool[j] = x;
  }
  let at = 0;
  const dealt = counts.map((m) => {
    let len = 0;
    for (const n of m.values()) len += n;
    const out = new Map<string, number>();
    for (const t of pool.slice(at, at + len)) out.set(t, (out.get(t) ?? 0) + 1);
    at += len;
    return out;
  });
  const { a } = tfidfMatrix(dealt, p.minDf);
  const svd = randomizedSvd(a, {
    k: p.dimension,
    oversample: p.oversample,
    powerIterations: p.powerIterations,
    seed: p.seed,
  });
  return energyShare(svd.values, counts.length);
}

/**
 * Fits the LSA state on `chunks` analysed with `analyzers` (see the module
 * comment), with the latent share's chance baseline (`chanceShare`) unless
 * `options.chance` is false. Pure and deterministic: same chunks (any
 * order), params and analyzers → same state.
 */
export function fitLsa(
  chunks: readonly LsaChunk[],
  params?: Partial<LsaParams>,
  analyzers: Analyzers = DEFAULT_ANALYZERS,
  options: { chance?: boolean } = {},
): LsaState {
  const p = checkParams(params);
  return options.chance === false ? fitCore(chunks, p, analyzers).state : fitWithChance(chunks, p, analyzers).state;
}

/** The fit with its chance baseline, and the baseline's wall-clock ms (reported apart: `LsaLoadResult.chanceMs`). */
export function fitWithChance(
  chunks: readonly LsaChunk[],
  p: LsaParams,
  analyzers: Analyzers,
): { state: LsaState; chanceMs: number } {
  const { state, counts } = fitCore(chunks, p, analyzers);
  const t0 = performance.now();
  state.chanceShare = chanceShareOf(counts, p);
  return { state, chanceMs: Math.round((performance.now() - t0) * 10) / 10 };
}

/** The fit without the chance baseline, with the term counts it was made from (chunks sorted by id). */
export function fitCore(
  chunks: readonly LsaChunk[],
  p: LsaParams,
  analyzers: Analyzers,
): { state: LsaState; counts: Map<string, number>[] } {
  if (chunks.length === 0) throw new InvalidArgumentError("chunks", "a non-empty list of chunks to fit LSA on", []);
  const sorted = [...chunks].sort((a, b) => byCodeUnit(a.id, b.id));
  for (const c of sorted)
    if (!isLocale(c.locale)) throw new InvalidArgumentError(`locale of ${c.id}`, "a canonical BCP-47 tag", c.locale);
  const counts = sorted.map((c) => termCounts(c.text, [c.locale], analyzers));
  const { a, terms, idf } = tfidfMatrix(counts, p.minDf);
  const n = sorted.length;
  const svd = randomizedSvd(a, {
    k: p.dimension,
    oversample: p.oversample,
    powerIterations: p.powerIterations,
    seed: p.seed,
  });
  const r = svd.values.length;
  const v = new Float32Array(terms.length * r);
  for (let c = 0; c < r; c++) {
    const col = svd.v[c] as Float64Array;
    for (let t = 0; t < terms.length; t++) v[t * r + c] = col[t] as number;
  }
  const locales = [...new Set(sorted.map((c) => c.locale))].sort(byCodeUnit);
  return {
    state: { params: p, corpusKey: lsaCorpusKey(sorted), docs: n, locales, terms, idf, sigma: svd.values, v },
    counts,
  };
}

/** The state as bytes (format in the module comment); a pure function of the state. */
