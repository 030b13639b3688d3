/**
 * resolveEmbedder / resolveReranker: which model a run uses and the reason it
 * reports, with tiny generated models placed (or not) where `auto` looks.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { InvalidArgumentError, ModelUnavailableError } from "../../src/errors.js";
import { HashingEmbedder } from "../../src/retrieval/embedders/builtin.js";
import { resolveEmbedder, resolveReranker } from "../../src/retrieval/embedders/resolve.js";
import { DEFAULT_EMBEDDING_MODEL, TransformersEmbedder } from "../../src/retrieval/embedders/transformers.js";
import { CrossEncoderReranker, DEFAULT_RERANK_MODEL } from "../../src/retrieval/rerank-model.js";
import type { Embedder, Reranker } from "../../src/retrieval/types.js";
import { makeTinyBertEmbedder, makeTinyCrossEncoder } from "../fixtures/models/make-tiny-models.js";
import { useFetchGuard } from "../helpers/network.js";

let root: string;
let withModels: string;
let emptyDir: string;
const toDispose: (Embedder | Reranker | null)[] = [];

function keep<T extends { embedder?: Embedder; reranker?: Reranker | null }>(r: T): T {
  toDispose.push(r.embedder ?? r.reranker ?? null);
  return r;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "retrace-resolve-"));
  withModels = join(root, "models");
  emptyDir = join(root, "empty");
  await makeTinyBertEmbedder(withModels, { hiddenSize: 24, seed: 1 });
  await makeTinyBertEmbedder(withModels, { org: "tiny", name: "other", hiddenSize: 12, seed: 2, pooling: "mean" });
  await makeTinyCrossEncoder(withModels, { hiddenSize: 8, seed: 3 });
});

afterAll(async () => {
  for (const x of toDispose) {
    if (x instanceof TransformersEmbedder || x instanceof CrossEncoderReranker) await x.dispose();
  }
  await rm(root, { recursive: true, force: true });
});

const guard = useFetchGuard();
afterEach(() => {
  vi.unstubAllEnvs();
});

describe("resolveEmbedder", () => {
  it("auto stays the embedded default whatever model folders exist, and says in one line how to switch", async () => {
    // BGE weights where the old `auto` looked (modelsDir, RETRACE_MODELS_DIR): still not used.
    vi.stubEnv("RETRACE_MODELS_DIR", withModels);
    for (const r of [await resolveEmbedder("auto", { modelsDir: withModels }), await resolveEmbedder()]) {
      expect(r.embedder).toBeInstanceOf(HashingEmbedder);
      expect(r.summary).toBe(
        `${r.embedder.id} (default, built-in; no corpus to fit LSA on; real model: npm run models, docs/models.md)`,
      );
      expect(r.reason).toContain(`"embedder":"${DEFAULT_EMBEDDING_MODEL}"`);
    }
    // Nor does it try the Hub when downloads are allowed.
    const remote = await resolveEmbedder("auto", { modelsDir: emptyDir, allowRemote: true, cacheDir: join(root, "c") });
    expect(remote.embedder).toBeInstanceOf(HashingEmbedder);
    expect(guard.remote).toEqual([]);
  });

  it("a named model loads with the precision in its id; weights present but broken are an error", async () => {
    const { embedder, reason, summary } = keep(
      await resolveEmbedder(DEFAULT_EMBEDDING_MODEL, { modelsDir: withModels }),
    );
    expect(embedder).toBeInstanceOf(TransformersEmbedder);
    expect(embedder.id).toBe(`${DEFAULT_EMBEDDING_MODEL}@fp32`);
    expect(embedder.dimension).toBe(24);
    expect(summary).toBe(`${DEFAULT_EMBEDDING_MODEL}@fp32 (requested; transformers.js, 24-d)`);
    expect(reason).toContain(join(withModels, "Xenova", "bge-small-en-v1.5"));
    expect(reason).toContain("cls pooling");
    const broken = join(root, "broken");
    const m = await makeTinyBertEmbedder(broken, { hiddenSize: 8 });
    await writeFile(join(m.path, "onnx", "model.onnx"), "garbage");
    await expect(resolveEmbedder(DEFAULT_EMBEDDING_MODEL, { modelsDir: broken })).rejects.toBeInstanceOf(
      ModelUnavailableError,
    );
  });

  it("RETRACE_ALLOW_DOWNLOADS=1 opts a named model in to the Hub; without it nothing is fetched", async () => {
    const offline = await resolveEmbedder("tiny/not-here", { modelsDir: emptyDir }).catch((e: unknown) => e);
    expect(offline).toBeInstanceOf(ModelUnavailableError);
    expect(guard.remote).toEqual([]);
    vi.stubEnv("RETRACE_ALLOW_DOWNLOADS", "1");
    const online = await resolveEmbedder("tiny/not-here", { modelsDir: emptyDir, cacheDir: join(root, "dl") }).catch(
      (e: unknown) => e,
    );
    expect(online).toBeInstanceOf(ModelUnavailableError);
    expect(guard.remote.some((u) => u.startsWith("https://huggingface.co/tiny/not-here/"))).toBe(true);
    guard.remote.length = 0; // expected here; afterEach asserts no other test fetched
  });

  it("builtin is always the built-in embedder, even with weights present", async () => {
    const { embedder, reason, summary } = await resolveEmbedder("builtin", { modelsDir: withModels });
    expect(embedder).toBeInstanceOf(HashingEmbedder);
    expect(reason).toContain("built-in embedder was requested");
    expect(summary).toBe(`${embedder.id} (requested; built-in, lexical-fuzzy, not semantic)`);
  });

  it("a model id loads that model, or fails with ModelUnavailableError (exit 3)", async () => {
    const { embedder, reason, summary } = keep(await resolveEmbedder("tiny/other", { modelsDir: withModels }));
    expect(embedder.id).toBe("tiny/other@fp32");
    expect(embedder.dimension).toBe(12);
    expect(summary).toBe("tiny/other@fp32 (requested; transformers.js, 12-d)");
    expect(reason).toContain("requested");
    expect(reason).toContain(join(withModels, "tiny", "other"));
    const err = await resolveEmbedder("tiny/missing", { modelsDir: withModels }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect((err as ModelUnavailableError).exitCode).toBe(3);
    expect((err as Error).message).toContain(join(withModels, "tiny", "missing"));
  });

  it("rejects an empty spec", async () => {
    await expect(resolveEmbedder("")).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe("resolveReranker", () => {
  it("is off by default, and for none/off", async () => {
    for (const spec of [null, "none", "off"] as const) {
      const { reranker, reason } = await resolveReranker(spec, { modelsDir: withModels });
      expect(reranker).toBeNull();
      expect(reason).toContain("no reranker");
    }
    expect((await resolveReranker()).reranker).toBeNull();
  });

  it("auto uses the cross-encoder when present, else none with the reason", async () => {
    const present = keep(await resolveReranker("auto", { modelsDir: withModels }));
    expect(present.reranker).toBeInstanceOf(CrossEncoderReranker);
    expect(present.reranker?.id).toBe(DEFAULT_RERANK_MODEL);
    expect(present.reason).toContain(join(withModels, "Xenova", "ms-marco-MiniLM-L-6-v2"));
    expect(present.summary).toBe(
      `${DEFAULT_RERANK_MODEL} (auto; cross-encoder, weights found, --verbose for the folder)`,
    );
    const absent = await resolveReranker("auto", { modelsDir: emptyDir });
    expect(absent.reranker).toBeNull();
    expect(absent.summary).toBe(`none (auto; no ${DEFAULT_RERANK_MODEL} weights found, --verbose for the search path)`);
    expect(absent.reason).toContain(
      `no ${DEFAULT_RERANK_MODEL} weights in ${join(emptyDir, "Xenova", "ms-marco-MiniLM-L-6-v2")}`,
    );
  });

  it("a model id loads that cross-encoder or fails with ModelUnavailableError", async () => {
    const r = keep(await resolveReranker(DEFAULT_RERANK_MODEL, { modelsDir: withModels }));
    expect(r.reranker).toBeInstanceOf(CrossEncoderReranker);
    expect(await r.reranker?.score("refund", ["order", "card"])).toHaveLength(2);
    await expect(resolveReranker(DEFAULT_RERANK_MODEL, { modelsDir: emptyDir })).rejects.toBeInstanceOf(
      ModelUnavailableError,
    );
  });
});
