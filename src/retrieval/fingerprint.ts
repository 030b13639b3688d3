/**
 * Fingerprints of embedder weights (docs/reliability.md, "Nothing mixed"):
 * new weights under the same model id must not reuse the vectors of the old
 * ones, so the collection identity carries a hash of the model files.
 *
 * fingerprint(dir) = sha256 over the sorted relative paths of every regular
 * file under `dir`, each followed by the sha256 of its bytes. Hashing the
 * files of a large model takes a moment, so each file's hash is cached by
 * (absolute path, size, mtime) in `<cache dir>/weights-fingerprints.json`
 * (cache dir: RETRACE_CACHE_DIR, else ~/.cache/retrace); a changed size or
 * mtime re-hashes the file. A cache that cannot be read or written is
 * ignored (the hash is then computed every time).
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, readdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Embedder } from "./types.js";
import { trackTemporary, untrackTemporary } from "../interrupt.js";

export const FINGERPRINT_CACHE_FILE = "weights-fingerprints.json";

export function fingerprintCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const d = env.RETRACE_CACHE_DIR;
  return d !== undefined && d !== "" ? d : path.join(os.homedir(), ".cache", "retrace");
}

async function listFiles(dir: string, rel = ""): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(path.join(dir, rel), { withFileTypes: true });
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const r = rel === "" ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) out.push(...(await listFiles(dir, r)));
    else if (e.isFile()) out.push(r);
  }
  return out;
}

function hashFile(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash("sha256");
    createReadStream(file)
      .on("data", (d) => h.update(d))
      .on("error", reject)
      .on("end", () => resolve(h.digest("hex")));
  });
}

type Cache = Record<string, { size: number; mtimeMs: number; sha256: string }>;

/** The fingerprint (64 hex) of the files under `dir`; see the module comment for the formula and the cache. */
export async function weightsFingerprint(dir: string, options: { cacheDir?: string } = {}): Promise<string> {
  const cacheFile = path.join(options.cacheDir ?? fingerprintCacheDir(), FINGERPRINT_CACHE_FILE);
  let cache: Cache;
  try {
    cache = JSON.parse(await readFile(cacheFile, "utf8")) as Cache;
  } catch {
    cache = {};
  }
  let changed = false;
  const total = createHash("sha256");
  for (const rel of await listFiles(dir)) {
    const abs = path.resolve(dir, rel);
    const st = await stat(abs);
    const hit = cache[abs];
    let sha: string;
    if (hit !== undefined && hit.size === st.size && hit.mtimeMs === st.mtimeMs) sha = hit.sha256;
    else {
      sha = await hashFile(abs);
      cache[abs] = { size: st.size, mtimeMs: st.mtimeMs, sha256: sha };
      changed = true;
    }
    total.update(rel).update("\u0000").update(sha).update("\n");
  }
  if (changed) {
    try {
      await mkdir(path.dirname(cacheFile), { recursive: true });
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      trackTemporary(tmp); // removed should the process end before the rename (src/interrupt.ts)
      try {
        await writeFile(tmp, JSON.stringify(cache));
        await rename(tmp, cacheFile);
      } finally {
        untrackTemporary(tmp);
      }
    } catch {
      // a cache we cannot write only costs time
    }
  }
  return total.digest("hex");
}

/** An embedder that carries the fingerprint of its weights; every call is delegated to `inner`. */
export interface FingerprintedEmbedder extends Embedder {
  readonly fingerprint: string;
}

export function withFingerprint(inner: Embedder, fingerprint: string): FingerprintedEmbedder {
  return {
    id: inner.id,
    dimension: inner.dimension,
    description: inner.description,
    fingerprint,
    embedDocuments: (texts, options) => inner.embedDocuments(texts, options),
    embedQuery: (text, options) => inner.embedQuery(text, options),
  };
}

/** The fingerprint of an embedder, when it has one (built-in embedders have none: their id is versioned). */
export function fingerprintOf(e: Pick<Embedder, "id">): string | undefined {
  const f = (e as { fingerprint?: unknown }).fingerprint;
  return typeof f === "string" && f !== "" ? f : undefined;
}

/**
 * `embedder` with the fingerprint of its weights when it loads them from a
 * folder (a `modelDir` string, as transformers.js embedders have); other
 * embedders are returned unchanged.
 */
export async function fingerprinted(embedder: Embedder): Promise<Embedder> {
  const dir = (embedder as { modelDir?: unknown }).modelDir;
  if (typeof dir !== "string" || dir === "") return embedder;
  return withFingerprint(embedder, await weightsFingerprint(dir));
}
