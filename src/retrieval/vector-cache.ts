/**
 * Content-addressed cache of document vectors (docs/fusion-and-tuning.md,
 * "Document vectors are cached"): a model embedder's vector of a text is
 * computed once per (model, precision, weights, exact text) and read back on
 * every later ingest, re-ingest into another store or collection, `retrace
 * beir` run or benchmark, so unchanged text is never embedded twice.
 *
 * Key. The model key is sha256 of the JSON array [embedder id, precision
 * (`fp32` / `q8`; `-` when the embedder has none), the fingerprint of its
 * weights (src/retrieval/fingerprint.ts; `-` when none), dimension]; the
 * text key is sha256 of the text's UTF-8 bytes, exactly as embedded (no
 * trimming, no normalisation). New weights under the same id have another
 * fingerprint, so they never read the old vectors.
 *
 * Layout, outside any repository: `<cache>/vectors/<model key 16 hex>/`
 * with a `model.json` naming what the key stands for, and one file a text,
 * `<text key 2 hex>/<text key 64 hex>.f64`: the vector as little-endian
 * float64 (the exact numbers the embedder returned, so a cached run is
 * byte-identical to an uncached one). `<cache>` is `RETRACE_VECTOR_CACHE`
 * when set, else the folder of the weight fingerprints (`RETRACE_CACHE_DIR`,
 * else `~/.cache/retrace`); `RETRACE_VECTOR_CACHE=off` turns the cache off.
 * A file of the wrong size is a miss (the vector is embedded again and the
 * file rewritten); every write goes to a temporary file renamed into place,
 * so concurrent runs never read half a vector. A cache that cannot be
 * written only costs time (one warning, then the run goes on uncached).
 *
 * Only model embedders (those with a weights fingerprint) are cached: the
 * weight-free embedders are cheaper to run than to read back.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { fingerprintCacheDir, fingerprintOf } from "./fingerprint.js";
import { log } from "../log.js";
import type { Embedder } from "./types.js";

/** Environment variable: the vector cache folder, or `off`. */
export const VECTOR_CACHE_ENV = "RETRACE_VECTOR_CACHE";

/** The vector cache folder in effect, or null when it is turned off (`RETRACE_VECTOR_CACHE=off`). */
export function vectorCacheDir(env: NodeJS.ProcessEnv = process.env): string | null {
  const v = env[VECTOR_CACHE_ENV];
  if (v !== undefined && v !== "") return v.toLowerCase() === "off" ? null : path.resolve(v);
  return path.join(fingerprintCacheDir(env), "vectors");
}

/** What the model key of a cache folder stands for. */
export interface VectorModelKey {
  id: string;
  /** `fp32`, `q8`, or `-` for an embedder without a precision. */
  precision: string;
  /** sha256 of the weight files (`-` without one). */
  fingerprint: string;
  dimension: number;
}

/** The model key (64 hex) of `key`. */
export function modelKeyOf(key: VectorModelKey): string {
  return createHash("sha256")
    .update(JSON.stringify([key.id, key.precision, key.fingerprint, key.dimension]))
    .digest("hex");
}

/** The text key (64 hex): sha256 of the text's UTF-8 bytes. */
export function textKeyOf(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Counts of one cached embedder's document calls (`embedded`: texts the model actually embedded). */
export interface VectorCacheStats {
  hits: number;
  embedded: number;
}

/** A folder of one model's cached vectors. */
export class VectorCache {
  readonly folder: string;
  private writable = true;
  private described = false;

  constructor(
    root: string,
    readonly model: VectorModelKey,
  ) {
    this.folder = path.join(root, modelKeyOf(model).slice(0, 16));
  }

  private fileOf(textKey: string): string {
    return path.join(this.folder, textKey.slice(0, 2), `${textKey}.f64`);
  }

  /** The cached vector of `text`, or undefined (absent, unreadable, or of the wrong size). */
  async get(text: string): Promise<number[] | undefined> {
    let bytes: Buffer;
    try {
      bytes = await readFile(this.fileOf(textKeyOf(text)));
    } catch {
      return undefined;
    }
    if (bytes.length !== this.model.dimension * 8) return undefined;
    const out = new Array<number>(this.model.dimension);
    for (let i = 0; i < this.model.dimension; i++) out[i] = bytes.readDoubleLE(i * 8);
    return out;
  }

  /** Stores `vector` as the vector of `text` (atomic: a temporary file renamed into place). */
  async put(text: string, vector: readonly number[]): Promise<void> {
    if (!this.writable || vector.length !== this.model.dimension) return;
    const file = this.fileOf(textKeyOf(text));
    const bytes = Buffer.alloc(vector.length * 8);
    vector.forEach((x, i) => bytes.writeDoubleLE(x, i * 8));
    try {
      await mkdir(path.dirname(file), { recursive: true });
      if (!this.described) {
        await writeFile(path.join(this.folder, "model.json"), `${JSON.stringify(this.model, null, 2)}\n`);
        this.described = true;
      }
      const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      await writeFile(tmp, bytes);
      await rename(tmp, file);
    } catch (e) {
      this.writable = false;
      log.warn(
        `vector cache: cannot write ${this.folder} (${e instanceof Error ? e.message : String(e)}); this run's vectors are not cached`,
      );
    }
  }
}

/** An embedder whose document vectors go through a VectorCache; `stats` counts hits and texts embedded. */
export interface CachedEmbedder extends Embedder {
  readonly vectorCache: VectorCache;
  readonly stats: VectorCacheStats;
}

/** The precision of an embedder (`dtype` of a transformers.js embedder), or `-`. */
export function precisionOf(e: Embedder): string {
  const d = (e as { dtype?: unknown }).dtype;
  return typeof d === "string" && d !== "" ? d : "-";
}

/**
 * `embedder` with its document vectors cached under `root` (default
 * `vectorCacheDir()`): each call looks every text up, embeds the misses in
 * one call to the model (in input order) and stores them. Queries are not
 * cached. Returned unchanged when the cache is off or the embedder has no
 * weights fingerprint (a weight-free embedder). `precision` overrides the
 * embedder's own (`dtype`), for wrappers that hide it.
 */
export function withVectorCache(
  embedder: Embedder,
  options: { root?: string | null; precision?: string } = {},
): Embedder {
  const fingerprint = fingerprintOf(embedder);
  const root = options.root === undefined ? vectorCacheDir() : options.root;
  if (fingerprint === undefined || root === null) return embedder;
  const precision = options.precision ?? precisionOf(embedder);
  const cache = new VectorCache(root, {
    id: embedder.id,
    precision,
    fingerprint,
    dimension: embedder.dimension,
  });
  const stats: VectorCacheStats = { hits: 0, embedded: 0 };
  const cached: CachedEmbedder = {
    id: embedder.id,
    dimension: embedder.dimension,
    description: embedder.description,
    vectorCache: cache,
    stats,
    async embedDocuments(texts, opts) {
      const out: (number[] | undefined)[] = await Promise.all(texts.map((t) => cache.get(t)));
      const missing: number[] = [];
      out.forEach((v, i) => {
        if (v === undefined) missing.push(i);
      });
      stats.hits += texts.length - missing.length;
      if (missing.length > 0) {
        const sub = missing.map((i) => texts[i] as string);
        const locales = opts?.locales;
        const vectors = await embedder.embedDocuments(
          sub,
          locales === undefined ? undefined : { locales: missing.map((i) => locales[i] as (typeof locales)[number]) },
        );
        stats.embedded += sub.length;
        for (let j = 0; j < missing.length; j++) {
          const v = vectors[j];
          out[missing[j] as number] = v;
          if (v !== undefined) await cache.put(sub[j] as string, v);
        }
      }
      return out as number[][];
    },
    embedQuery: (text, opts) => embedder.embedQuery(text, opts),
  };
  // Keep the fingerprint (collection identity) and anything else callers read off the embedder.
  for (const key of ["fingerprint", "modelDir", "dtype", "pooling", "batchSize"] as const) {
    const v = (embedder as unknown as Record<string, unknown>)[key];
    if (v !== undefined) Object.defineProperty(cached, key, { value: v, enumerable: true });
  }
  if (!("dtype" in cached) && precision !== "-")
    Object.defineProperty(cached, "dtype", { value: precision, enumerable: true });
  return cached;
}

/** The cache statistics of an embedder wrapped by withVectorCache (undefined otherwise). */
export function vectorCacheStatsOf(e: Embedder): VectorCacheStats | undefined {
  const s = (e as Partial<CachedEmbedder>).stats;
  return s !== undefined && typeof s.hits === "number" ? s : undefined;
}
