/** Weights fingerprints: change with any byte of any file, cached by size+mtime, and part of the collection name. */
import { mkdtemp, rm, utimes, writeFile, mkdir, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { collectionName, incompleteReason } from "../../src/retrieval/chroma-store.js";
import { FINGERPRINT_CACHE_FILE, weightsFingerprint, withFingerprint } from "../../src/retrieval/fingerprint.js";
import { HashingEmbedder } from "../../src/retrieval/embedders/builtin.js";

const dirs: string[] = [];
async function tmp(): Promise<string> {
  const d = await mkdtemp(path.join(os.tmpdir(), "retrace-fp-"));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function model(dir: string, weights: string): Promise<void> {
  await mkdir(path.join(dir, "onnx"), { recursive: true });
  await writeFile(path.join(dir, "config.json"), '{"hidden_size": 8}');
  await writeFile(path.join(dir, "onnx", "model.onnx"), weights);
}

describe("weightsFingerprint", () => {
  it("is stable for the same files and changes when one byte of the weights changes", async () => {
    const cacheDir = await tmp();
    const a = await tmp();
    const b = await tmp();
    await model(a, "weights-v1");
    await model(b, "weights-v1");
    const fa = await weightsFingerprint(a, { cacheDir });
    expect(fa).toMatch(/^[0-9a-f]{64}$/);
    expect(await weightsFingerprint(b, { cacheDir })).toBe(fa); // same content elsewhere: same fingerprint
    await writeFile(path.join(b, "onnx", "model.onnx"), "weights-v2");
    expect(await weightsFingerprint(b, { cacheDir })).not.toBe(fa);
  });

  it("uses the cache while size and mtime are unchanged, and re-hashes when they change", async () => {
    const cacheDir = await tmp();
    const a = await tmp();
    await model(a, "weights-v1");
    const file = path.join(a, "onnx", "model.onnx");
    const mtime = new Date("2026-01-01T00:00:00Z");
    await utimes(file, mtime, mtime);
    const first = await weightsFingerprint(a, { cacheDir });
    const cache = JSON.parse(await readFile(path.join(cacheDir, FINGERPRINT_CACHE_FILE), "utf8"));
    expect(Object.keys(cache)).toHaveLength(2);
    // Same size and mtime but other bytes: the cache is trusted (that is its contract)...
    await writeFile(file, "weights-v9");
    await utimes(file, mtime, mtime);
    expect(await weightsFingerprint(a, { cacheDir })).toBe(first);
    // ...and a new mtime makes it look again.
    await utimes(file, new Date(mtime.getTime() + 5_000), new Date(mtime.getTime() + 5_000));
    expect(await weightsFingerprint(a, { cacheDir })).not.toBe(first);
  });
});

describe("collection identity with a weights fingerprint", () => {
  const builtin = new HashingEmbedder();
  const kb = "a".repeat(64);
  it("puts the fingerprint in the name, so new weights under one id get a new collection", () => {
    const v1 = withFingerprint(builtin, "1".repeat(64));
    const v2 = withFingerprint(builtin, "2".repeat(64));
    expect(collectionName(kb, v1)).not.toBe(collectionName(kb, v2));
    expect(collectionName(kb, v1)).toContain("-w11111111-");
    expect(collectionName(kb, builtin)).not.toContain("-w");
  });

  it("refuses a collection whose metadata records other weights", () => {
    const v2 = withFingerprint(builtin, "2".repeat(64));
    const meta = {
      retrace: 1,
      kbHash: kb,
      chunksHash: "h",
      embedder: builtin.id,
      dimension: builtin.dimension,
      chunks: 1,
      complete: true,
      startedAt: 1,
      weights: "1".repeat(64),
    };
    expect(incompleteReason(meta, { embedder: v2 })).toMatch(/other weights/);
    expect(incompleteReason({ ...meta, weights: "2".repeat(64) }, { embedder: v2 })).toBeNull();
  });
});
