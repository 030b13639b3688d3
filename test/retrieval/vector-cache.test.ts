/**
 * The content-addressed vector cache (src/retrieval/vector-cache.ts): a
 * second run over unchanged text embeds nothing (the model is called for no
 * document: counted, not timed), changed text is embedded alone, and the
 * key separates models, precisions and weights. The end-to-end case goes
 * through the composition root (`openEmbedder`, as `retrace ingest` / `beir`
 * do) on a real transformers.js model generated into a temp dir.
 */
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { DEFAULT_ANALYZERS } from "../../src/retrieval/analyzer.js";
import { InMemoryDenseIndex } from "../../src/retrieval/dense.js";
import { HashingEmbedder } from "../../src/retrieval/embedders/builtin.js";
import { TransformersEmbedder } from "../../src/retrieval/embedders/transformers.js";
import { withFingerprint } from "../../src/retrieval/fingerprint.js";
import type { Embedder } from "../../src/retrieval/types.js";
import {
  VectorCache,
  modelKeyOf,
  textKeyOf,
  vectorCacheDir,
  vectorCacheStatsOf,
  withVectorCache,
} from "../../src/retrieval/vector-cache.js";
import { describeIngest } from "../../src/retrieval/ingest.js";
import { openEmbedder } from "../../src/system.js";
import { makeTinyBertEmbedder } from "../fixtures/models/make-tiny-models.js";
import { useFetchGuard } from "../helpers/network.js";

let root: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "retrace-vector-cache-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});
afterEach(() => {
  vi.unstubAllEnvs();
});

/** A model-like embedder (it has a weights fingerprint) that counts the texts it embeds. */
function countingModel(fingerprint = "f".repeat(64), dtype = "fp32"): Embedder & { embedded: string[] } {
  const inner = new HashingEmbedder();
  const embedded: string[] = [];
  const e = withFingerprint(
    {
      id: "org/model",
      dimension: inner.dimension,
      description: "counting",
      embedDocuments: async (texts) => {
        embedded.push(...texts);
        return inner.embedDocuments(texts);
      },
      embedQuery: (t) => inner.embedQuery(t),
    },
    fingerprint,
  );
  return Object.assign(e, { embedded, dtype });
}

const chunks = (texts: string[]) =>
  texts.map((text, i) => ({ id: `c${i}`, parentId: `c${i}`, locale: "en" as const, text }));

describe("withVectorCache", () => {
  it("a second run over the same texts embeds nothing and returns the same vectors, to the bit", async () => {
    const dir = path.join(root, "same");
    const texts = ["refund policy", "reset my password", "", "  spaces kept  ", "refund policy"];
    const first = countingModel();
    const a = await InMemoryDenseIndex.fromChunks(chunks(texts), withVectorCache(first, { root: dir }), {
      batchSize: 2,
    });
    // The repeated text comes in a later batch: it is read back, not embedded again.
    expect(first.embedded).toEqual(texts.slice(0, 4));

    const second = countingModel();
    const cached = withVectorCache(second, { root: dir });
    const b = await InMemoryDenseIndex.fromChunks(chunks(texts), cached, { batchSize: 2 });
    expect(second.embedded).toEqual([]);
    expect(vectorCacheStatsOf(cached)).toEqual({ hits: texts.length, embedded: 0 });
    const q = await second.embedQuery("refund");
    expect(await b.search(q, { topN: 5 })).toEqual(await a.search(q, { topN: 5 }));
    expect(await cached.embedDocuments(texts)).toEqual(await new HashingEmbedder().embedDocuments(texts));
  });

  it("embeds only the texts that changed, and keys on the exact text", async () => {
    const dir = path.join(root, "changed");
    await withVectorCache(countingModel(), { root: dir }).embedDocuments(["alpha", "beta", "gamma"]);
    const again = countingModel();
    const out = await withVectorCache(again, { root: dir }).embedDocuments(["alpha", "beta!", "gamma", "Alpha"]);
    expect(again.embedded).toEqual(["beta!", "Alpha"]);
    expect(out).toEqual(await new HashingEmbedder().embedDocuments(["alpha", "beta!", "gamma", "Alpha"]));
  });

  it("separates precisions and weights: another dtype or fingerprint reads nothing", async () => {
    const dir = path.join(root, "keys");
    await withVectorCache(countingModel(), { root: dir }).embedDocuments(["alpha"]);
    const q8 = countingModel("f".repeat(64), "q8");
    await withVectorCache(q8, { root: dir }).embedDocuments(["alpha"]);
    expect(q8.embedded).toEqual(["alpha"]);
    const newWeights = countingModel("e".repeat(64));
    await withVectorCache(newWeights, { root: dir }).embedDocuments(["alpha"]);
    expect(newWeights.embedded).toEqual(["alpha"]);
    const base = { id: "org/model", precision: "fp32", fingerprint: "f".repeat(64), dimension: 384 };
    expect(
      new Set([modelKeyOf(base), modelKeyOf({ ...base, precision: "q8" }), modelKeyOf({ ...base, id: "x" })]).size,
    ).toBe(3);
    expect((await readdir(dir)).length).toBe(3);
  });

  it("treats a file of the wrong size as a miss and rewrites it", async () => {
    const dir = path.join(root, "corrupt");
    const model = countingModel();
    const cached = withVectorCache(model, { root: dir }) as Embedder & { vectorCache: VectorCache };
    await cached.embedDocuments(["alpha"]);
    const key = textKeyOf("alpha");
    await writeFile(path.join(cached.vectorCache.folder, key.slice(0, 2), `${key}.f64`), "short");
    const again = countingModel();
    await withVectorCache(again, { root: dir }).embedDocuments(["alpha"]);
    expect(again.embedded).toEqual(["alpha"]);
    const third = countingModel();
    await withVectorCache(third, { root: dir }).embedDocuments(["alpha"]);
    expect(third.embedded).toEqual([]);
  });

  it("leaves weight-free embedders alone and is turned off by RETRACE_VECTOR_CACHE=off", () => {
    const builtin = new HashingEmbedder();
    expect(withVectorCache(builtin, { root: path.join(root, "x") })).toBe(builtin);
    const model = countingModel();
    expect(withVectorCache(model, { root: null })).toBe(model);
    expect(vectorCacheDir({ RETRACE_VECTOR_CACHE: "off" })).toBeNull();
    expect(vectorCacheDir({ RETRACE_VECTOR_CACHE: "/tmp/v" })).toBe(path.resolve("/tmp/v"));
    expect(vectorCacheDir({ RETRACE_CACHE_DIR: "/tmp/c" })).toBe(path.join("/tmp/c", "vectors"));
  });
});

describe("openEmbedder: a model's document vectors are cached across runs", () => {
  useFetchGuard();
  let modelsDir: string;
  beforeAll(async () => {
    modelsDir = path.join(root, "models");
    await makeTinyBertEmbedder(modelsDir, { hiddenSize: 16, seed: 5 });
  });

  it("the second open of the same model embeds zero documents of unchanged text", async () => {
    vi.stubEnv("RETRACE_MODELS_DIR", modelsDir);
    vi.stubEnv("RETRACE_CACHE_DIR", path.join(root, "cache"));
    vi.stubEnv("RETRACE_VECTOR_CACHE", "");
    const spy = vi.spyOn(TransformersEmbedder.prototype, "embedDocuments");
    const texts = ["refund", "password reset", "order"];
    const run = async () => {
      const opened = await openEmbedder({
        embedder: "Xenova/bge-small-en-v1.5",
        chunks: [],
        analyzers: DEFAULT_ANALYZERS,
        log: false,
      });
      const vectors = await opened.embedder.embedDocuments(texts);
      return { vectors, stats: vectorCacheStatsOf(opened.embedder) };
    };
    const first = await run();
    const callsFirst = spy.mock.calls.length;
    expect(callsFirst).toBeGreaterThan(0);
    expect(first.stats).toEqual({ hits: 0, embedded: 3 });
    const second = await run();
    expect(spy.mock.calls.length).toBe(callsFirst);
    expect(second.stats).toEqual({ hits: 3, embedded: 0 });
    expect(second.vectors).toEqual(first.vectors);
    const folders = await readdir(path.join(root, "cache", "vectors"));
    expect(folders).toHaveLength(1);
    spy.mockRestore();
  });
});

describe("describeIngest", () => {
  it("says how many vectors the model embedded and how many came from the cache", () => {
    const base = {
      status: "ingested" as const,
      collection: "c",
      chunks: 3,
      embedder: "org/model",
      dimension: 384,
      durationMs: 12,
      removedStaging: [],
    };
    expect(describeIngest({ ...base, vectors: { embedded: 0, cached: 3 } })).toBe(
      "collection c: 3 chunks, embedder org/model (384-d), ingested 3 chunks in 12 ms (0 embedded, 3 from the vector cache)",
    );
    expect(describeIngest(base)).toBe("collection c: 3 chunks, embedder org/model (384-d), ingested 3 chunks in 12 ms");
  });
});
