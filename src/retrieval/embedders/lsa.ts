/**
 * A corpus-fit latent semantic embedder (LSA; Deerwester et al. 1990), no
 * model weights: fitted on the collection's own chunks when they are
 * ingested (docs/fusion-and-tuning.md, "The LSA embedder").
 *
 * Fit, on the chunks sorted by id:
 *   1. terms = the locale analyzer of each chunk (src/retrieval/analyzer.ts:
 *      NFKC, lowercase, accent folding, stop words, Snowball stems), from the
 *      analyzer set given (a KB's `analyzers.json`; default: the default
 *      profile), which the embedder keeps for the texts it embeds;
 *      vocabulary = terms in at least `minDf` chunks (all terms if none is),
 *      sorted by code unit;
 *   2. A (chunks × terms): a_dt = (1 + ln tf_dt) · idf_t with
 *      idf_t = ln((1 + N) / (1 + df_t)) + 1, each row L2-normalised;
 *   3. A ≈ U_k Σ_k V_kᵀ by the seeded randomized SVD of lsa-math.ts
 *      (k = `dimension`, capped at the rank found).
 * Embedding of any text (a chunk at ingest, a query at search time) with its
 * locale: x = its TF-IDF row as in 2 (terms outside the vocabulary ignored),
 * e = x · V_k · Σ_k^p, L2-normalised. p = `scaling`: −1 is the textbook
 * fold-in q·V_k·Σ_k⁻¹ (a training chunk folds in to its own row of U_k);
 * 0 (the default) compares in the space of U_k Σ_k, Deerwester's
 * document–document similarity. Documents and queries go through the same
 * map. A text without a vocabulary term embeds to the first latent axis e_1.
 * Without a locale the text is analysed by every locale of the fit and each
 * term's tf is its largest count among them.
 *
 * Semantic only in the corpus's own co-occurrence sense: it can match terms
 * that co-occur across the KB, not synonyms it never saw.
 *
 * Over 400 lines because the fit, the byte format the id hashes, the state
 * file (checksum, load or refit, prune) and the embedder share that format;
 * the linear algebra itself is in lsa-math.ts.
 *
 * Identity: the fitted state serialises to fixed bytes (format below); the
 * embedder id is `lsa-<k>-<first 12 hex of sha256(bytes)>-v1`, so the
 * dimension and the fit hash name the Chroma collection. The state file is
 * written to the local data dir under a name keyed by the corpus, the
 * parameters and (when not the defaults) the analyzer overrides; a missing,
 * unreadable, corrupt or older-format one is refitted, byte-identical (same
 * chunks, parameters, analyzers and seed), so the id never changes because
 * of the file.
 *
 * State (the bytes the id hashes, state format 1): "RETRACE-LSA\n", u32 LE
 * length of a UTF-8 JSON header ({format, params, corpusKey, docs, locales,
 * rank, terms}), the header, then idf (float64 LE × terms), Σ (float64 LE ×
 * rank), V (float32 LE, terms × rank, row-major). V is rounded to float32
 * right after the fit and only the rounded values are ever used, so a loaded
 * state embeds exactly like a fresh fit.
 *
 * State file (file format 3): the state bytes, the chance section
 * "\nRETRACE-LSA-CHANCE\n" + the chance share (float64 LE; `fitLsa`), then
 * the checksum trailer "\nRETRACE-LSA-SHA256 3\n" and the 32-byte sha256 of
 * everything before it. A file whose checksum does not match is corrupt (one
 * warning line, refitted); a file of format 1 (the state bytes alone, no
 * checksum) or 2 (no chance section) is stale (one info line, refitted). The
 * sections are outside the hashed state bytes, so the embedder ids of older
 * files stay the same.
 */
import { embedderIdentity } from "../../contract/embedder-id.js";
import { createHash, randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { OutputWriteError, realWriteFailure } from "../../atomic.js";
import { InvalidArgumentError } from "../../errors.js";
import type { Locale } from "../../kb/types.js";
import { log } from "../../log.js";
import { processAlive } from "../lock.js";
import { mulberry32 } from "../../random.js";
import { isLocale } from "../../kb/types.js";
import { DEFAULT_ANALYZERS, isDefaultAnalyzers, type Analyzers } from "../analyzer.js";
import type { Embedder } from "../types.js";
import { randomizedSvd, type CsrMatrix } from "./lsa-math.js";
import { trackTemporary, untrackTemporary } from "../../interrupt.js";
import { moduleWorker, siblingModule } from "../../module-worker.js";
import { reviveError, type SerializedError } from "../../thread-errors.js";

/** Format of the state bytes (their header's `format`; the embedder id hashes them). */
export const LSA_FORMAT = 1;
/** Format of the state file: the state bytes plus a sha256 trailer (see the module comment). */
export const LSA_FILE_FORMAT = 3;
const MAGIC = "RETRACE-LSA\n";
const CHECKSUM_MARK = Buffer.from(`\nRETRACE-LSA-SHA256 ${LSA_FILE_FORMAT}\n`, "latin1");
/** The trailer of a format-2 file (no chance baseline): stale, refitted. */
const CHECKSUM_MARK_2 = Buffer.from("\nRETRACE-LSA-SHA256 2\n", "latin1");
/** Starts the chance-baseline section (format 3): the mark, then the chance share as float64 LE. */
const CHANCE_MARK = Buffer.from("\nRETRACE-LSA-CHANCE\n", "latin1");
const SHA256_BYTES = 32;

export interface LsaParams {
  /** Latent dimensions k; default 128 (capped at the rank of the TF-IDF matrix). */
  dimension: number;
  /** A term enters the vocabulary when it occurs in at least this many chunks; default 2. */
  minDf: number;
  /** Σ exponent p of the embedding x·V_k·Σ_k^p; default 0 (see the module comment). */
  scaling: number;
  /** Randomized SVD: oversampling (default 10), power iterations (default 2), seed (default 42). */
  oversample: number;
  powerIterations: number;
  seed: number;
}

export const LSA_DEFAULTS: Readonly<LsaParams> = {
  dimension: 128,
  minDf: 2,
  scaling: 0,
  oversample: 10,
  powerIterations: 2,
  seed: 42,
};

/** What the fit needs of a chunk. */
export interface LsaChunk {
  id: string;
  locale: Locale;
  text: string;
}

export interface LsaState {
  params: LsaParams;
  /** sha256 of the fit corpus (ids, locales, texts, sorted by id). */
  corpusKey: string;
  docs: number;
  locales: Locale[];
  terms: string[];
  idf: Float64Array;
  sigma: Float64Array;
  /** terms × rank, row-major, float32-rounded. */
  v: Float32Array;
  /**
   * The latent share of the same fit on a shuffled copy of the corpus (see
   * `fitLsa`): what k axes keep by chance. Not part of the state bytes (the
   * embedder id does not change with it); kept in the state file's own section.
   */
  chanceShare?: number;
}

function checkParams(p: Partial<LsaParams> | undefined): LsaParams {
  const params = { ...LSA_DEFAULTS, ...(p ?? {}) };
  const posInt = (k: keyof LsaParams, min: number) => {
    const x = params[k];
    if (!Number.isInteger(x) || x < min) throw new InvalidArgumentError(`lsa.${k}`, `an integer of at least ${min}`, x);
  };
  posInt("dimension", 1);
  posInt("minDf", 1);
  posInt("oversample", 0);
  posInt("powerIterations", 0);
  if (!Number.isInteger(params.seed) || params.seed < 0 || params.seed > 0xffffffff)
    throw new InvalidArgumentError("lsa.seed", "an integer in 0..2^32-1", params.seed);
  if (!Number.isFinite(params.scaling) || params.scaling < -1 || params.scaling > 1)
    throw new InvalidArgumentError("lsa.scaling", "a number in [-1, 1]", params.scaling);
  return params;
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** sha256 over the chunks sorted by id: JSON [id, locale, text] each, NUL-separated. */
export function lsaCorpusKey(chunks: readonly LsaChunk[]): string {
  const h = createHash("sha256");
  for (const c of [...chunks].sort((a, b) => byCodeUnit(a.id, b.id)))
    h.update(JSON.stringify([c.id, c.locale, c.text])).update("\u0000");
  return h.digest("hex");
}

function termCounts(text: string, locales: readonly Locale[], analyzers: Analyzers): Map<string, number> {
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
function tfidfRow(
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
function tfidfMatrix(
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
const FULL_RANK_EPSILON = 1e-6;

/**
 * κ = (share − chance)/(1 − chance); undefined when chance is (numerically)
 * 1: at full rank (k ≥ the number of chunks) the axes keep everything by
 * chance too, and nothing beyond chance can be measured.
 */
export function chanceCorrected(share: number, chance: number): number | undefined {
  return 1 - chance < FULL_RANK_EPSILON ? undefined : (share - chance) / (1 - chance);
}

/** Σσ² / max(1, N): the share of the (row-normalised) matrix's energy that the k latent axes keep. */
function energyShare(sigma: Float64Array, docs: number): number {
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
function chanceShareOf(counts: readonly Map<string, number>[], p: LsaParams): number {
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
function fitWithChance(
  chunks: readonly LsaChunk[],
  p: LsaParams,
  analyzers: Analyzers,
): { state: LsaState; chanceMs: number } {
  const { state, counts } = fitCore(chunks, p, analyzers);
  const t0 = performance.now();
  state.chanceShare = chanceShareOf(counts, p);
  return { state, chanceMs: Math.round((performance.now() - t0) * 10) / 10 };
}

/** How long `LsaEmbedder.embedDocuments` works before it lets the event loop run (a signal, a progress line), ms. */
const YIELD_EVERY_MS = 100;

/** `fitWithChance` for the thread of `fitLsaOffThread` (./lsa-fit-worker.ts). */
export const fitLsaHere = fitWithChance;

/**
 * Corpora of at least this many characters are fitted in a thread of their
 * own: the shipped KB (about 100 kB of cards) takes seconds of synchronous
 * arithmetic, during which retrace's own thread could not stop on a signal.
 * Smaller ones fit in well under a second, here.
 */
export const OFF_THREAD_FIT_CHARS = 30_000;

/**
 * `fitWithChance` in a worker thread when the corpus is large enough
 * (OFF_THREAD_FIT_CHARS), so that SIGINT/SIGTERM/SIGHUP stop the run at
 * once while it fits (docs/reliability.md, "Every sweep stops when asked").
 * The same state, to the bit: the thread answers the state's bytes, which
 * hold `idf` and `sigma` as float64 and `v` as the float32 it already is.
 */
async function fitLsaOffThread(
  chunks: readonly LsaChunk[],
  p: LsaParams,
  analyzers: Analyzers,
): Promise<{ state: LsaState; chanceMs: number }> {
  let chars = 0;
  for (const c of chunks) chars += c.text.length;
  if (chars < OFF_THREAD_FIT_CHARS) return fitWithChance(chunks, p, analyzers);
  const worker = moduleWorker(siblingModule(import.meta.url, "lsa-fit-worker"), {
    chunks: chunks.map((c) => ({ id: c.id, locale: c.locale, text: c.text })),
    params: p,
    overrides: analyzers.overrides,
  });
  try {
    const m = await new Promise<
      { bytes: Uint8Array; chanceShare: number; chanceMs: number } | { error: SerializedError }
    >((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the LSA fit's thread ended (exit ${code}) before answering`)));
    });
    if ("error" in m) throw reviveError(m.error);
    const state = parseLsa(m.bytes);
    state.chanceShare = m.chanceShare;
    return { state, chanceMs: m.chanceMs };
  } finally {
    void worker.terminate();
  }
}

/** The fit without the chance baseline, with the term counts it was made from (chunks sorted by id). */
function fitCore(
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
export function serializeLsa(s: LsaState): Uint8Array {
  const rank = s.sigma.length;
  const header = Buffer.from(
    JSON.stringify({
      format: LSA_FORMAT,
      params: s.params,
      corpusKey: s.corpusKey,
      docs: s.docs,
      locales: s.locales,
      rank,
      terms: s.terms,
    }),
    "utf8",
  );
  const magic = Buffer.from(MAGIC, "utf8");
  const body = Buffer.alloc(4 + header.length + 8 * s.idf.length + 8 * rank + 4 * s.v.length);
  let o = 0;
  o = body.writeUInt32LE(header.length, o);
  o += header.copy(body, o);
  for (const x of s.idf) o = body.writeDoubleLE(x, o);
  for (const x of s.sigma) o = body.writeDoubleLE(x, o);
  for (const x of s.v) o = body.writeFloatLE(x, o);
  return Buffer.concat([magic, body]);
}

/** Parses a state file's bytes; throws InvalidArgumentError naming `file` when they are not one. */
export function parseLsa(data: Uint8Array, file = "LSA state"): LsaState {
  const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const bad = (why: string) => new InvalidArgumentError(file, "an LSA state file written by retrace", why);
  const magic = Buffer.from(MAGIC, "utf8");
  if (bytes.length < magic.length + 4 || !bytes.subarray(0, magic.length).equals(magic)) throw bad("wrong magic");
  let o = magic.length;
  const hlen = bytes.readUInt32LE(o);
  o += 4;
  if (o + hlen > bytes.length) throw bad("truncated header");
  let h: {
    format: number;
    params: LsaParams;
    corpusKey: string;
    docs: number;
    locales: Locale[];
    rank: number;
    terms: string[];
  };
  try {
    h = JSON.parse(bytes.subarray(o, o + hlen).toString("utf8"));
  } catch {
    throw bad("header is not JSON");
  }
  o += hlen;
  if (h.format !== LSA_FORMAT || !Array.isArray(h.terms) || !Number.isInteger(h.rank))
    throw bad(`format ${String(h.format)}`);
  const m = h.terms.length;
  if (bytes.length !== o + 8 * m + 8 * h.rank + 4 * m * h.rank) throw bad("wrong length");
  const idf = new Float64Array(m);
  for (let i = 0; i < m; i++, o += 8) idf[i] = bytes.readDoubleLE(o);
  const sigma = new Float64Array(h.rank);
  for (let i = 0; i < h.rank; i++, o += 8) sigma[i] = bytes.readDoubleLE(o);
  const v = new Float32Array(m * h.rank);
  for (let i = 0; i < v.length; i++, o += 4) v[i] = bytes.readFloatLE(o);
  return {
    params: checkParams(h.params),
    corpusKey: h.corpusKey,
    docs: h.docs,
    locales: h.locales,
    terms: h.terms,
    idf,
    sigma,
    v,
  };
}

/** The bytes of a state file (file format 3): the state bytes, the chance section (mark, float64 LE), the checksum mark, sha256 of everything before it. */
export function lsaFileBytes(stateBytes: Uint8Array, chanceShare: number): Buffer {
  const chance = Buffer.alloc(8);
  chance.writeDoubleLE(chanceShare, 0);
  const content = Buffer.concat([stateBytes, CHANCE_MARK, chance]);
  return Buffer.concat([content, CHECKSUM_MARK, createHash("sha256").update(content).digest()]);
}

/** What a state file holds: a verified state with its chance share (`ok`), a file of an older format (`old`: format 1 without checksum, format 2 without chance baseline), or bytes that are not an intact state file (`corrupt`). */
export type LsaFileContent =
  { kind: "ok"; state: LsaState; stateBytes: Buffer } | { kind: "old"; why: string } | { kind: "corrupt"; why: string };

/** Reads a state file's bytes, verifying the checksum before anything is parsed (see the module comment). */
export function readLsaFile(data: Uint8Array, file = "LSA state"): LsaFileContent {
  const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const end = bytes.length - SHA256_BYTES;
  const markAt = end - CHECKSUM_MARK.length;
  if (markAt >= 0 && bytes.subarray(markAt, end).equals(CHECKSUM_MARK)) {
    const content = bytes.subarray(0, markAt);
    if (!createHash("sha256").update(content).digest().equals(bytes.subarray(end)))
      return { kind: "corrupt", why: "checksum mismatch" };
    const chanceAt = content.length - 8 - CHANCE_MARK.length;
    if (chanceAt < 0 || !content.subarray(chanceAt, chanceAt + CHANCE_MARK.length).equals(CHANCE_MARK))
      return { kind: "corrupt", why: "no chance section" };
    const chanceShare = content.readDoubleLE(content.length - 8);
    if (!(chanceShare >= 0 && chanceShare <= 1))
      return { kind: "corrupt", why: `chance share ${chanceShare} outside [0, 1]` };
    const stateBytes = content.subarray(0, chanceAt);
    try {
      return { kind: "ok", state: { ...parseLsa(stateBytes, file), chanceShare }, stateBytes };
    } catch (e) {
      return { kind: "corrupt", why: e instanceof Error ? e.message : String(e) };
    }
  }
  if (markAt >= 0 && bytes.subarray(markAt, end).equals(CHECKSUM_MARK_2))
    return { kind: "old", why: "no chance baseline" };
  try {
    parseLsa(bytes, file);
    return { kind: "old", why: "no checksum" };
  } catch {
    return { kind: "corrupt", why: "no checksum trailer: truncated or not an LSA state file" };
  }
}

/** The id of the LSA embedder whose state bytes are `stateBytes` (rank `rank`): `lsa-<rank>-<first 12 hex of their sha256>-v1`. */
export function lsaEmbedderId(stateBytes: Uint8Array, rank: number): string {
  return `lsa-${rank}-${createHash("sha256").update(stateBytes).digest("hex").slice(0, 12)}-v1`;
}

/** The LSA embedder over a fitted state (see the module comment). Synchronous inside; batch-invariant. */
export class LsaEmbedder implements Embedder {
  readonly id: string;
  readonly dimension: number;
  readonly description: string;
  /** sha256 (hex) of the serialised state. */
  readonly fitHash: string;
  /**
   * Σ σ_i² / N: the share of the TF-IDF matrix's energy the k latent axes
   * keep. Rows are L2-normalised, so ‖A‖²_F is the number of chunks with a
   * vocabulary term (≤ N: the share is a lower bound when some have none).
   * Near 1 when k is close to the corpus's rank (a small KB), small when the
   * corpus has little co-occurrence structure (random words).
   */
  readonly latentShare: number;
  /** The latent share of the same fit on a shuffled copy of the corpus (`LsaState.chanceShare`); undefined when the state lacks it. */
  readonly chanceShare: number | undefined;
  /**
   * The chance-corrected latent share κ = (share − chance)/(1 − chance), as
   * Cohen's κ corrects agreement: 0 when the axes keep no more than they
   * would on words dealt at random (a random-word corpus), positive with
   * co-occurrence structure beyond chance. Undefined without `chanceShare`
   * and at full rank (nothing beyond chance to measure).
   */
  readonly structure: number | undefined;
  readonly state: LsaState;
  /** The analyzers texts are analysed with (those the state was fitted with). */
  readonly analyzers: Analyzers;
  private readonly index: Map<string, number>;
  private readonly scale: Float64Array;

  /** The embedder over `state`, analysing texts with `analyzers`: those the state was fitted with (default: the default profile). */
  constructor(state: LsaState, bytes: Uint8Array = serializeLsa(state), analyzers: Analyzers = DEFAULT_ANALYZERS) {
    this.state = state;
    this.analyzers = analyzers;
    this.fitHash = createHash("sha256").update(bytes).digest("hex");
    this.dimension = state.sigma.length;
    this.latentShare = energyShare(state.sigma, state.docs);
    this.chanceShare = state.chanceShare;
    this.structure = state.chanceShare === undefined ? undefined : chanceCorrected(this.latentShare, state.chanceShare);
    this.id = `lsa-${this.dimension}-${this.fitHash.slice(0, 12)}-v1`; // = lsaEmbedderId(bytes, dimension)
    this.description =
      `corpus-fit LSA (TF-IDF → ${this.dimension}-d truncated SVD of ${state.docs} chunks, ${state.terms.length} terms; ` +
      "co-occurrence semantics of this corpus only; no model weights)";
    this.index = new Map(state.terms.map((t, j) => [t, j]));
    this.scale = Float64Array.from(state.sigma, (s) => (state.params.scaling === 0 ? 1 : s ** state.params.scaling));
  }

  /** x · V_k · Σ_k^p of one text before normalisation (x its L2-normalised TF-IDF row), analysed with `locale` (else every locale of the fit). */
  project(text: string, locale?: Locale): Float64Array {
    if (typeof text !== "string") throw new InvalidArgumentError("text", "a string", text);
    if (locale !== undefined && !isLocale(locale))
      throw new InvalidArgumentError("locale", "a canonical BCP-47 tag", locale);
    const r = this.dimension;
    const row = tfidfRow(
      termCounts(text, locale !== undefined ? [locale] : this.state.locales, this.analyzers),
      this.index,
      this.state.idf,
    );
    const e = new Float64Array(r);
    const v = this.state.v;
    row.cols.forEach((t, i) => {
      const x = row.vals[i] as number;
      for (let c = 0; c < r; c++) e[c] = (e[c] as number) + x * (v[t * r + c] as number);
    });
    for (let c = 0; c < r; c++) e[c] = (e[c] as number) * (this.scale[c] as number);
    return e;
  }

  /** The embedding of one text: `project` L2-normalised; the first latent axis when it has no vocabulary term. */
  embed(text: string, locale?: Locale): number[] {
    const e = this.project(text, locale);
    let norm = 0;
    for (const x of e) norm += x * x;
    norm = Math.sqrt(norm);
    if (norm === 0) {
      const out = new Array<number>(e.length).fill(0);
      out[0] = 1;
      return out;
    }
    return Array.from(e, (x) => x / norm);
  }

  async embedDocuments(texts: string[], options?: { locales?: readonly Locale[] }): Promise<number[][]> {
    const locales = options?.locales;
    if (locales !== undefined && locales.length !== texts.length)
      throw new InvalidArgumentError("locales", `${texts.length} locales (one per text)`, locales.length);
    // Yields to the event loop every YIELD_EVERY_MS of work: embedding a large KB at once is seconds of synchronous
    // work, during which a signal would wait (docs/reliability.md, "Every sweep stops when asked"). Same vectors.
    const out: number[][] = [];
    let since = performance.now();
    for (let i = 0; i < texts.length; i++) {
      out.push(this.embed(texts[i] as string, locales?.[i]));
      if (performance.now() - since > YIELD_EVERY_MS) {
        await new Promise((r) => setImmediate(r));
        since = performance.now();
      }
    }
    return out;
  }

  async embedQuery(text: string, options?: { locale?: Locale }): Promise<number[]> {
    return this.embed(text, options?.locale);
  }
}

/**
 * The embedder id without the fit hash (`lsa-128-<hash>-v1` → `lsa-128-v1`);
 * any other id unchanged. A KB edit refits the LSA embedder and changes its
 * id, yet the run still uses the same embedder: baselines compare families
 * (docs/fusion-and-tuning.md). The LSA id follows the shared identity rule of
 * src/contract/embedder-id.ts, which is what baselines apply.
 */
export const embedderFamily: (id: string) => string = embedderIdentity;

/**
 * File name of the state fitted on `corpusKey` with `params` and `analyzers`:
 * `lsa-<sha256(format, corpusKey, params[, overrides]) first 24 hex>.lsa`, the
 * analyzer overrides (sorted by tag) entering the key only when there are any,
 * so a fit with the default profile keeps its name and a fit with other
 * analyzers is never loaded for it.
 */
export function lsaStateFile(
  dir: string,
  corpusKey: string,
  params: LsaParams,
  analyzers: Analyzers = DEFAULT_ANALYZERS,
): string {
  const parts: unknown[] = [LSA_FORMAT, corpusKey, params];
  if (!isDefaultAnalyzers(analyzers)) {
    const tags = Object.keys(analyzers.overrides).sort(byCodeUnit);
    parts.push(
      tags.map((tag) => [tag, analyzers.overrides[tag]?.stopWords ?? null, analyzers.overrides[tag]?.stemmer ?? null]),
    );
  }
  const key = createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 24);
  return path.join(dir, `lsa-${key}.lsa`);
}

export interface LsaLoadResult {
  embedder: LsaEmbedder;
  /** `loaded`: the saved state was read; `fitted`: none was saved; `refitted`: the saved one was unreadable, corrupt, of an older format or did not match. */
  status: "loaded" | "fitted" | "refitted";
  /** The state file, or null when `dir` was not given (nothing saved). */
  file: string | null;
  /** Why a saved state was refitted (`corrupt (checksum mismatch)`, `no checksum (older format)`, …); absent otherwise. */
  refitReason?: string;
  /** Wall-clock ms of the chance baseline's fit, part of the fit (absent when the state was loaded). */
  chanceMs?: number;
}

/**
 * The LSA embedder for `chunks` analysed with `analyzers` (default: the
 * default profile): the state saved in `dir` when it is there, intact (its
 * checksum matches) and matches (same corpus, parameters and analyzers),
 * else a fresh fit, written to `dir` atomically (temporary file + rename).
 * A corrupt file is reported in one warning line, a format-1 file (no
 * checksum) in one info line; both are refitted. Without `dir` nothing is
 * read or written. A refit gives the same bytes, so the same id and
 * collection.
 * @throws OutputWriteError (exit 3) when the state cannot be saved.
 */
export async function loadOrFitLsa(
  chunks: readonly LsaChunk[],
  options: { dir?: string; params?: Partial<LsaParams>; analyzers?: Analyzers } = {},
): Promise<LsaLoadResult> {
  const params = checkParams(options.params);
  const analyzers = options.analyzers ?? DEFAULT_ANALYZERS;
  if (options.dir === undefined) {
    const { state, chanceMs } = await fitLsaOffThread(chunks, params, analyzers);
    return { embedder: new LsaEmbedder(state, undefined, analyzers), status: "fitted", file: null, chanceMs };
  }
  const corpusKey = lsaCorpusKey(chunks);
  const file = lsaStateFile(options.dir, corpusKey, params, analyzers);
  let refitReason: string | undefined;
  try {
    const content = readLsaFile(await readFile(file), file);
    if (content.kind === "ok") {
      const { state } = content;
      if (state.corpusKey === corpusKey && JSON.stringify(state.params) === JSON.stringify(params)) {
        return { embedder: new LsaEmbedder(state, content.stateBytes, analyzers), status: "loaded", file };
      }
      refitReason = "fitted on another corpus or with other parameters";
    } else if (content.kind === "old") {
      refitReason = `${content.why} (older format)`;
      log.info(`state file ${file} has ${content.why} (written by an older retrace); refitting`);
    } else {
      refitReason = `corrupt (${content.why})`;
      log.warn(`state file ${file} is corrupt (${content.why}); refitting`);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") {
      refitReason = `unreadable (${e instanceof Error ? e.message : String(e)})`;
      log.warn(`state file ${file} is unreadable (${e instanceof Error ? e.message : String(e)}); refitting`);
    }
  }
  const { state, chanceMs } = await fitLsaOffThread(chunks, params, analyzers);
  const bytes = serializeLsa(state);
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  trackTemporary(tmp); // removed should the process end before the rename (src/interrupt.ts)
  try {
    await mkdir(options.dir, { recursive: true });
    await writeFile(tmp, lsaFileBytes(bytes, state.chanceShare as number), { flag: "wx" });
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw new OutputWriteError(file, await realWriteFailure(file, e)); // EROFS, not ENOENT, on a read-only data dir
  } finally {
    untrackTemporary(tmp);
  }
  return {
    embedder: new LsaEmbedder(state, bytes, analyzers),
    status: refitReason !== undefined ? "refitted" : "fitted",
    file,
    chanceMs,
    ...(refitReason !== undefined ? { refitReason } : {}),
  };
}

/** Name of a state file's temporary file while it is written: `<state file>.<pid>.<8 hex>.tmp`. */
const TMP_NAME = /^lsa-[0-9a-f]{24}\.lsa\.(\d+)\.[0-9a-f]{8}\.tmp$/;

export interface LsaPruneResult {
  /** Files removed (absolute paths, sorted). */
  removed: string[];
  /** Their total size. */
  bytes: number;
}

/**
 * Removes the LSA state files in `dir` that no collection uses any more:
 * an intact state whose embedder id is not in `keep`, a corrupt or
 * format-1 file (it would be refitted anyway), and the temporary file of a
 * write whose process is gone. A removed state that is needed again is
 * refitted to the same bytes.
 */
export async function pruneLsaStates(dir: string, keep: ReadonlySet<string>): Promise<LsaPruneResult> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { removed: [], bytes: 0 };
    throw e;
  }
  const removed: string[] = [];
  let bytes = 0;
  for (const name of names.sort()) {
    const file = path.join(dir, name);
    const tmp = TMP_NAME.exec(name);
    let stale: boolean;
    if (tmp !== null) stale = !processAlive(Number(tmp[1]));
    else if (/^lsa-[0-9a-f]{24}\.lsa$/.test(name)) {
      let content: LsaFileContent;
      try {
        content = readLsaFile(await readFile(file), file);
      } catch {
        continue; // unreadable (a folder, no permission): not ours to judge
      }
      stale = content.kind !== "ok" || !keep.has(lsaEmbedderId(content.stateBytes, content.state.sigma.length));
    } else continue;
    if (!stale) continue;
    try {
      const size = (await stat(file)).size;
      await rm(file, { force: true });
      removed.push(file);
      bytes += size;
    } catch (e) {
      log.debug(`Could not remove ${file}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return { removed, bytes };
}
