/**
 * The LSA state and its file (docs/fusion-and-tuning.md): parameters and their defaults and checks, the state's
 * binary serialization, and the state file's sections (checksum, chance share; format 3, format 2 read).
 * Re-exported by ./lsa.ts.
 */
import { createHash } from "node:crypto";
import { InvalidArgumentError } from "../../errors.js";
import type { Locale } from "../../kb/types.js";

export const LSA_FORMAT = 1;
/** Format of the state file: the state bytes plus a sha256 trailer (see the module comment). */
export const LSA_FILE_FORMAT = 3;
export const MAGIC = "RETRACE-LSA\n";
export const CHECKSUM_MARK = Buffer.from(`\nRETRACE-LSA-SHA256 ${LSA_FILE_FORMAT}\n`, "latin1");
/** The trailer of a format-2 file (no chance baseline): stale, refitted. */
export const CHECKSUM_MARK_2 = Buffer.from("\nRETRACE-LSA-SHA256 2\n", "latin1");
/** Starts the chance-baseline section (format 3): the mark, then the chance share as float64 LE. */
export const CHANCE_MARK = Buffer.from("\nRETRACE-LSA-CHANCE\n", "latin1");
export const SHA256_BYTES = 32;

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

export function checkParams(p: Partial<LsaParams> | undefined): LsaParams {
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
