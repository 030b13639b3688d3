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
  it("auto picks the transformers model when its weights are under modelsDir", async () => {
    const { embedder, reason, summary } = keep(await resolveEmbedder("auto", { modelsDir: withModels }));
    expect(embedder).toBeInstanceOf(TransformersEmbedder);
    expect(embedder.id).toBe(DEFAULT_EMBEDDING_MODEL);
    expect(embedder.dimension).toBe(24);
    expect(summary).toBe(
      `${DEFAULT_EMBEDDING_MODEL} (default; transformers.js, weights found, --verbose for the folder)`,
    );
    expect(reason).toContain(DEFAULT_EMBEDDING_MODEL);
    expect(reason).toContain("auto");
    expect(reason).toContain(`its weights are in ${join(withModels, "Xenova", "bge-small-en-v1.5")}`);
    expect(reason).toContain("cls pooling");
  });

  it("auto falls back to the built-in embedder when the weights are absent, and says why", async () => {
    const { embedder, reason, summary } = await resolveEmbedder("auto", { modelsDir: emptyDir });
    expect(embedder).toBeInstanceOf(HashingEmbedder);
    // One short line; the folders searched only in the reason (logged with --verbose).
    expect(summary).toBe(
      `${embedder.id} (default, built-in; no corpus to fit LSA on; no transformer weights found, --verbose for the search path)`,
    );
    expect(summary).not.toContain(emptyDir);
    expect(reason).toContain(embedder.id);
    expect(reason).toContain("not semantic");
    expect(reason).toContain(
      `no ${DEFAULT_EMBEDDING_MODEL} weights in ${join(emptyDir, "Xenova", "bge-small-en-v1.5")}`,
    );
    expect(reason).toContain("RETRACE_MODELS_DIR");
  });

  it("auto is the default spec and reads RETRACE_MODELS_DIR", async () => {
    vi.stubEnv("RETRACE_MODELS_DIR", withModels);
    const present = keep(await resolveEmbedder());
    expect(present.embedder).toBeInstanceOf(TransformersEmbedder);
    vi.stubEnv("RETRACE_MODELS_DIR", emptyDir);
    const absent = await resolveEmbedder();
    expect(absent.embedder).toBeInstanceOf(HashingEmbedder);
    expect(absent.reason).toContain(emptyDir);
  });

  it("auto with allowRemote tries the download, and falls back to built-in when it fails", async () => {
    const { embedder, reason, summary } = await resolveEmbedder("auto", {
      modelsDir: emptyDir,
      allowRemote: true,
      cacheDir: join(root, "cache"),
    });
    expect(embedder).toBeInstanceOf(HashingEmbedder);
    expect(reason).toContain("could not be downloaded");
    expect(summary).toContain("no transformer weights found and the download failed, --verbose for why");
    expect(guard.remote.some((u) => u.startsWith(`https://huggingface.co/${DEFAULT_EMBEDDING_MODEL}/`))).toBe(true);
    guard.remote.length = 0; // expected here; afterEach asserts no other test fetched
  });

  it("auto with weights present but broken is an error, not a silent fallback", async () => {
    const broken = join(root, "broken");
    const m = await makeTinyBertEmbedder(broken, { hiddenSize: 8 });
    await writeFile(join(m.path, "onnx", "model.onnx"), "garbage");
    await expect(resolveEmbedder("auto", { modelsDir: broken })).rejects.toBeInstanceOf(ModelUnavailableError);
  });

  it("builtin is always the built-in embedder, even with weights present", async () => {
    const { embedder, reason, summary } = await resolveEmbedder("builtin", { modelsDir: withModels });
    expect(embedder).toBeInstanceOf(HashingEmbedder);
    expect(reason).toContain("built-in embedder was requested");
    expect(summary).toBe(`${embedder.id} (requested; built-in, lexical-fuzzy, not semantic)`);
  });

  it("a model id loads that model, or fails with ModelUnavailableError (exit 3)", async () => {
    const { embedder, reason, summary } = keep(await resolveEmbedder("tiny/other", { modelsDir: withModels }));
    expect(embedder.id).toBe("tiny/other");
    expect(embedder.dimension).toBe(12);
    expect(summary).toBe("tiny/other (requested; transformers.js, 12-d)");
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
