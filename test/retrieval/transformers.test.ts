/**
 * TransformersEmbedder through the real transformers.js + onnxruntime-node
 * path, fully offline, on tiny BERT-layout models generated into a temp dir
 * (test/fixtures/models/make-tiny-models.ts). Every test also asserts that no
 * remote URL was fetched.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { DataValidationError, InvalidArgumentError, ModelUnavailableError } from "../../src/errors.js";
import {
  BGE_QUERY_INSTRUCTION,
  DEFAULT_EMBEDDING_MODEL,
  TransformersEmbedder,
  resolvePooling,
} from "../../src/retrieval/embedders/transformers.js";
import { loadTransformers } from "../../src/retrieval/embedders/transformers-runtime.js";
import { DEFAULT_WORDS, type TinyModel, idsOf, makeTinyBertEmbedder } from "../fixtures/models/make-tiny-models.js";
import { useFetchGuard } from "../helpers/network.js";

const H = 32;
let root: string;
let modelsDir: string;
let bge: TinyModel;
let clsModel: TinyModel;
let meanModel: TinyModel;
let plainModel: TinyModel;
const loaded: TransformersEmbedder[] = [];

async function load(opts: Parameters<typeof TransformersEmbedder.load>[0]): Promise<TransformersEmbedder> {
  const e = await TransformersEmbedder.load({ modelsDir, ...opts });
  loaded.push(e);
  return e;
}

function norm(v: number[]): number {
  return Math.sqrt(v.reduce((a, x) => a + x * x, 0));
}
function normalized(v: number[]): number[] {
  const n = norm(v);
  return v.map((x) => x / n);
}
function expectClose(a: number[], b: number[], tol: number): void {
  expect(a.length).toBe(b.length);
  const worst = Math.max(...a.map((x, i) => Math.abs(x - (b[i] ?? NaN))));
  expect(worst).toBeLessThan(tol);
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "retrace-transformers-"));
  modelsDir = join(root, "models");
  bge = await makeTinyBertEmbedder(modelsDir, { hiddenSize: H, seed: 7 });
  // Same seed: identical weights, only the pooling config differs.
  clsModel = await makeTinyBertEmbedder(modelsDir, {
    org: "tiny",
    name: "cls-embedder",
    hiddenSize: H,
    seed: 11,
    pooling: "cls",
  });
  meanModel = await makeTinyBertEmbedder(modelsDir, {
    org: "tiny",
    name: "mean-embedder",
    hiddenSize: H,
    seed: 11,
    pooling: "mean",
  });
  plainModel = await makeTinyBertEmbedder(modelsDir, { org: "tiny", name: "plain-embedder", hiddenSize: 24, seed: 3 });
});

afterAll(async () => {
  for (const e of loaded) await e.dispose();
  await rm(root, { recursive: true, force: true });
});

const guard = useFetchGuard();
afterEach(() => {
  vi.unstubAllEnvs();
});

describe("TransformersEmbedder: offline load of a generated model", () => {
  it("loads the default model id from modelsDir with the configured dimension and env set offline", async () => {
    const e = await load({});
    // The id names the model and its precision (docs/models.md).
    expect(e.id).toBe(`${DEFAULT_EMBEDDING_MODEL}@fp32`);
    expect(e.dimension).toBe(H);
    expect(e.dtype).toBe("fp32");
    expect(e.modelDir).toBe(bge.path);
    expect(e.description).toContain(DEFAULT_EMBEDDING_MODEL);
    expect(e.description).toContain(`${H}-d`);
    const tf = await loadTransformers();
    expect(tf.env.allowRemoteModels).toBe(false);
    expect(tf.env.localModelPath).toBe(modelsDir);
  });

  it("returns unit-length, finite vectors of the model dimension", async () => {
    const e = await load({ model: "tiny/plain-embedder" });
    expect(e.dimension).toBe(24);
    const vs = await e.embedDocuments(["I was charged twice for one order", "reset my password", "x", ""]);
    expect(vs).toHaveLength(4);
    for (const v of vs) {
      expect(v).toHaveLength(24);
      expect(v.every(Number.isFinite)).toBe(true);
      expect(Math.abs(norm(v) - 1)).toBeLessThan(1e-6);
    }
    const q = await e.embedQuery("refund");
    expect(q).toHaveLength(24);
    expect(Math.abs(norm(q) - 1)).toBeLessThan(1e-6);
  });

  it("computes what the generated network computes (CLS vs mean pooling per 1_Pooling/config.json)", async () => {
    const cls = await load({ model: "tiny/cls-embedder" });
    const mean = await load({ model: "tiny/mean-embedder" });
    expect(cls.pooling).toBe("cls");
    expect(cls.poolingSource).toBe(join("1_Pooling", "config.json"));
    expect(mean.pooling).toBe("mean");
    expect(mean.poolingSource).toBe(join("1_Pooling", "config.json"));

    const ids = idsOf(clsModel, ["[CLS]", "the", "refund", "order", "[SEP]"]);
    const hidden = clsModel.hidden(ids);
    const expectedCls = normalized(hidden[0] ?? []);
    const expectedMean = normalized(
      Array.from({ length: H }, (_, j) => hidden.reduce((a, row) => a + (row[j] ?? 0), 0) / hidden.length),
    );
    // identical weights in both folders, so the reference holds for both
    expect(meanModel.hidden(ids)).toEqual(hidden);

    const [vc] = await cls.embedDocuments(["The REFUND order"]);
    const [vm] = await mean.embedDocuments(["The REFUND order"]);
    expectClose(vc ?? [], expectedCls, 1e-5);
    expectClose(vm ?? [], expectedMean, 1e-5);
    // and the two poolings really differ
    expect(Math.max(...expectedCls.map((x, i) => Math.abs(x - (expectedMean[i] ?? 0))))).toBeGreaterThan(1e-2);
  });

  it("is deterministic, also across two loads of the same folder", async () => {
    const a = await load({ model: "tiny/cls-embedder" });
    const b = await load({ model: "tiny/cls-embedder" });
    const texts = ["how long until I get my refund back?", "duplicate payment on my card"];
    const first = await a.embedDocuments(texts);
    expect(await a.embedDocuments(texts)).toEqual(first);
    expect(await b.embedDocuments(texts)).toEqual(first);
  });

  it("is batch-invariant: one by one, in one batch, and in batches of 2 agree within 1e-5", async () => {
    const big = await load({ model: "tiny/mean-embedder" });
    const small = await load({ model: "tiny/mean-embedder", batchSize: 2 });
    expect(small.batchSize).toBe(2);
    const texts = [
      "refund",
      "I was charged twice for one order, how long until I get it back?",
      "xylophone refunding subscriptions",
      "cancel",
      "Reembolso da cobrança duplicada no cartão",
    ];
    const batch = await big.embedDocuments(texts);
    const batched2 = await small.embedDocuments(texts);
    for (let i = 0; i < texts.length; i++) {
      const [alone] = await big.embedDocuments([texts[i] ?? ""]);
      expectClose(alone ?? [], batch[i] ?? [], 1e-5);
      expectClose(batched2[i] ?? [], batch[i] ?? [], 1e-5);
      expectClose(await big.embedQuery(texts[i] ?? ""), batch[i] ?? [], 1e-5);
    }
  });

  it("padding does not change a text's vector (property, fixed seed)", async () => {
    const e = await load({ model: "tiny/cls-embedder" });
    const word = fc.constantFrom(...DEFAULT_WORDS, "xylophone", "quux", "Refunded", "42", "?");
    const text = fc.array(word, { minLength: 1, maxLength: 12 }).map((ws) => ws.join(" "));
    await fc.assert(
      fc.asyncProperty(text, fc.array(text, { minLength: 1, maxLength: 4 }), async (t, others) => {
        const [alone] = await e.embedDocuments([t]);
        // t padded to the longest text of the batch, at any position
        const batch = await e.embedDocuments([...others, t, `${t} ${t} ${t}`]);
        expectClose(batch[others.length] ?? [], alone ?? [], 1e-5);
      }),
      { seed: 42, numRuns: 100 },
    );
  });

  it("embeds an empty list without calling the model", async () => {
    const e = await load({ model: "tiny/plain-embedder" });
    expect(await e.embedDocuments([])).toEqual([]);
  });

  it("prepends BGE's query instruction to queries of a bge-*-en model by default, never to documents", async () => {
    const e = await load({});
    const plain = await load({ queryPrefix: "" });
    const instruction = "Represent this sentence for searching relevant passages: ";
    expect(instruction).toBe(BGE_QUERY_INSTRUCTION);
    expectClose(await e.embedQuery("refund"), await plain.embedQuery(`${instruction}refund`), 1e-6);
    expect(await e.embedDocuments(["refund"])).toEqual(await plain.embedDocuments(["refund"]));
  });

  it("applies queryPrefix to queries only", async () => {
    const plain = await load({ model: "tiny/plain-embedder" });
    const prefixed = await load({ model: "tiny/plain-embedder", queryPrefix: "represent this: " });
    const [doc] = await prefixed.embedDocuments(["refund"]);
    expect(doc).toEqual((await plain.embedDocuments(["refund"]))[0]);
    expectClose(await prefixed.embedQuery("refund"), await plain.embedQuery("represent this: refund"), 1e-6);
  });

  it("loads a model given as a folder path, with an id from the folder", async () => {
    const e = await load({ model: clsModel.path });
    expect(e.id).toBe("tiny/cls-embedder@fp32");
    expect(e.modelDir).toBe(clsModel.path);
    const viaId = await load({ model: "tiny/cls-embedder" });
    expect(await e.embedQuery("order")).toEqual(await viaId.embedQuery("order"));
  });

  it("reads the models directory from RETRACE_MODELS_DIR when modelsDir is not given", async () => {
    vi.stubEnv("RETRACE_MODELS_DIR", modelsDir);
    const e = await TransformersEmbedder.load({ model: "tiny/plain-embedder" });
    loaded.push(e);
    expect(e.modelDir).toBe(plainModel.path);
  });

  it("loads only q8 weights (onnx/model_quantized.onnx) when that is all there is, and honours quantized", async () => {
    await makeTinyBertEmbedder(modelsDir, { org: "tiny", name: "q8-only", hiddenSize: 16, seed: 5, onnxFiles: ["q8"] });
    const e = await load({ model: "tiny/q8-only" });
    expect(e.dtype).toBe("q8");
    expect(e.dimension).toBe(16);
    await makeTinyBertEmbedder(modelsDir, {
      org: "tiny",
      name: "both",
      hiddenSize: 16,
      seed: 5,
      onnxFiles: ["fp32", "q8"],
    });
    expect((await load({ model: "tiny/both" })).dtype).toBe("fp32");
    expect((await load({ model: "tiny/both", quantized: true })).dtype).toBe("q8");
    await expect(load({ model: "tiny/q8-only", quantized: false })).rejects.toThrow(/missing onnx\/model\.onnx\)/);
  }, 30_000);
});

describe("TransformersEmbedder: pooling rule", () => {
  it("falls back to the known family list (bge -> cls), then to mean", async () => {
    const e = await load({});
    expect(e.pooling).toBe("cls");
    expect(e.poolingSource).toBe("known model family (bge -> cls)");
    const p = await load({ model: "tiny/plain-embedder" });
    expect(p.pooling).toBe("mean");
    expect(p.poolingSource).toBe("default");
    expect(await resolvePooling("BAAI/bge-base-en-v1.5", null)).toEqual({
      pooling: "cls",
      source: "known model family (bge -> cls)",
    });
    expect(await resolvePooling("Xenova/all-MiniLM-L6-v2", null)).toEqual({ pooling: "mean", source: "default" });
  });

  it("follows modules.json to a Pooling folder that is not 1_Pooling", async () => {
    await makeTinyBertEmbedder(modelsDir, {
      org: "tiny",
      name: "st-layout",
      hiddenSize: H,
      seed: 11,
      pooling: "cls",
      poolingDir: "pool",
    });
    const e = await load({ model: "tiny/st-layout" });
    expect(e.pooling).toBe("cls");
    expect(e.poolingSource).toBe(join("pool", "config.json"));
  });

  it("lets the pooling option override the config file", async () => {
    const e = await load({ model: "tiny/cls-embedder", pooling: "mean" });
    expect(e.pooling).toBe("mean");
    expect(e.poolingSource).toBe("option");
    const mean = await load({ model: "tiny/mean-embedder" });
    expectClose(await e.embedQuery("charged twice"), await mean.embedQuery("charged twice"), 1e-6);
  });

  it("rejects a pooling mode it cannot honour, naming the file", async () => {
    const m = await makeTinyBertEmbedder(modelsDir, {
      org: "tiny",
      name: "max-embedder",
      hiddenSize: 8,
      pooling: "max",
    });
    const err = await load({ model: "tiny/max-embedder" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataValidationError);
    expect((err as Error).message).toContain(join(m.path, "1_Pooling", "config.json"));
    expect((err as Error).message).toContain("pooling_mode_max_tokens");
  });
});

describe("TransformersEmbedder: missing or broken models, never the network", () => {
  it("fails fast with ModelUnavailableError naming the folder and what to do", async () => {
    const empty = join(root, "empty-models");
    const err = await TransformersEmbedder.load({ modelsDir: empty }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    const e = err as ModelUnavailableError;
    expect(e.exitCode).toBe(3);
    expect(e.model).toBe(DEFAULT_EMBEDDING_MODEL);
    expect(e.message).toContain(join(empty, "Xenova", "bge-small-en-v1.5"));
    expect(e.message).toContain("config.json, tokenizer.json, tokenizer_config.json");
    expect(e.message).toContain("RETRACE_MODELS_DIR");
    expect(e.message).toContain("downloads from the Hugging Face Hub are off (RETRACE_ALLOW_DOWNLOADS=1 turns them on");
    // The model `npm run models` fetches says so.
    expect(e.message).toContain("fetch it with `npm run models`");
  });

  it("names the missing weights file when only the ONNX file is absent", async () => {
    const m = await makeTinyBertEmbedder(modelsDir, { org: "tiny", name: "no-weights", hiddenSize: 8, onnxFiles: [] });
    const err = await load({ model: "tiny/no-weights" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect((err as Error).message).toContain(m.path);
    expect((err as Error).message).toContain("missing onnx/model.onnx or onnx/model_quantized.onnx");
  });

  it("wraps a corrupt ONNX file in ModelUnavailableError", async () => {
    const m = await makeTinyBertEmbedder(modelsDir, { org: "tiny", name: "corrupt", hiddenSize: 8 });
    await writeFile(join(m.path, "onnx", "model.onnx"), "not an onnx model");
    const err = await load({ model: "tiny/corrupt" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect((err as Error).message).toContain("could not be loaded from");
  });

  it("rejects bad arguments with InvalidArgumentError", async () => {
    await expect(load({ model: "tiny/plain-embedder", batchSize: 0 })).rejects.toThrow(
      new InvalidArgumentError("batchSize", "a positive integer", 0).message,
    );
    await expect(load({ model: "a/b/c" })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(load({ model: "x/../../etc" })).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it("tries the hub only when allowRemote is set (the guard rejects the download here)", async () => {
    const cacheDir = join(root, "cache");
    const err = await load({ model: "tiny/not-here", allowRemote: true, cacheDir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect((err as Error).message).toContain("could not be loaded");
    expect(guard.remote.length).toBeGreaterThan(0);
    expect(guard.remote.every((u) => u.startsWith("https://huggingface.co/tiny/not-here/"))).toBe(true);
    guard.remote.length = 0; // expected here; afterEach asserts no other test fetched
    const tf = await loadTransformers();
    // the next offline load resets the global env
    await load({ model: "tiny/plain-embedder" });
    expect(tf.env.allowRemoteModels).toBe(false);
    expect(tf.env.useFSCache).toBe(false);
  });

  it("keeps concurrent loads from different folders apart (transformers.js env is global)", async () => {
    const other = join(root, "other-models");
    const b2 = await makeTinyBertEmbedder(other, { hiddenSize: H, seed: 99 });
    const [a, b] = await Promise.all([
      load({ modelsDir, queryPrefix: "" }),
      load({ modelsDir: other, queryPrefix: "" }),
    ]);
    expect(a?.modelDir).toBe(bge.path);
    expect(b?.modelDir).toBe(b2.path);
    const ids = idsOf(bge, ["[CLS]", "refund", "[SEP]"]);
    expectClose(await a.embedQuery("refund"), normalized(bge.hidden(ids)[0] ?? []), 1e-5);
    expectClose(await b.embedQuery("refund"), normalized(b2.hidden(ids)[0] ?? []), 1e-5);
  });
});

describe("TransformersEmbedder: the model card's rules and where a named model is found (docs/models.md)", () => {
  it("prepends BGE's query instruction to queries only, by the model card, or by config_sentence_transformers.json", async () => {
    const e = await load({});
    expect(e.queryPrefix).toBe(BGE_QUERY_INSTRUCTION);
    const plain = await load({ queryPrefix: "" });
    expectClose(await e.embedQuery("refund"), await plain.embedQuery(`${BGE_QUERY_INSTRUCTION}refund`), 1e-6);
    expect((await e.embedDocuments(["refund"]))[0]).toEqual((await plain.embedDocuments(["refund"]))[0]);
    // A model folder's own prompt wins over the family rule.
    const own = await makeTinyBertEmbedder(join(root, "prompted"), { hiddenSize: 8, seed: 5, pooling: "cls" });
    await writeFile(
      join(own.path, "config_sentence_transformers.json"),
      JSON.stringify({ prompts: { query: "query: " } }),
    );
    const prompted = await load({ modelsDir: join(root, "prompted") });
    expect(prompted.queryPrefix).toBe("query: ");
    // Another family gets none.
    expect((await load({ model: "tiny/plain-embedder" })).queryPrefix).toBe("");
  });

  it("truncates at the model's positions and names the precision a spec asks for", async () => {
    const both = await makeTinyBertEmbedder(join(root, "both"), {
      hiddenSize: 8,
      seed: 6,
      onnxFiles: ["fp32", "q8"],
      modelMaxLength: 16,
    });
    const fp32 = await load({ modelsDir: join(root, "both") });
    expect(fp32.id).toBe(`${DEFAULT_EMBEDDING_MODEL}@fp32`);
    expect(fp32.maxTokens).toBe(16);
    const q8 = await load({ modelsDir: join(root, "both"), model: `${DEFAULT_EMBEDDING_MODEL}@q8` });
    expect(q8.id).toBe(`${DEFAULT_EMBEDDING_MODEL}@q8`);
    expect(q8.dtype).toBe("q8");
    expect(q8.modelDir).toBe(both.path);
    // A text far past 16 tokens embeds as its first 16 tokens.
    const long = Array.from({ length: 200 }, () => "refund").join(" ");
    const cut = Array.from({ length: 14 }, () => "refund").join(" ");
    expectClose((await fp32.embedDocuments([long]))[0] ?? [], (await fp32.embedDocuments([cut]))[0] ?? [], 1e-6);
  });

  it("finds a named model in the Hugging Face hub cache layout, and a missing one names every place looked", async () => {
    const hub = join(root, "hf", "hub");
    const repo = join(hub, "models--tiny--hub-model");
    await makeTinyBertEmbedder(join(repo, "snapshots-tmp"), { org: "x", name: "rev1", hiddenSize: 8, seed: 9 });
    const { rename, mkdir } = await import("node:fs/promises");
    await mkdir(join(repo, "snapshots"), { recursive: true });
    await mkdir(join(repo, "refs"), { recursive: true });
    await rename(join(repo, "snapshots-tmp", "x", "rev1"), join(repo, "snapshots", "abc123"));
    await writeFile(join(repo, "refs", "main"), "abc123\n");
    vi.stubEnv("HF_HUB_CACHE", hub);
    vi.stubEnv("RETRACE_MODELS_DIR", join(root, "env-models"));
    vi.stubEnv("XDG_CACHE_HOME", join(root, "xdg"));
    const e = await TransformersEmbedder.load({ model: "tiny/hub-model" });
    loaded.push(e);
    expect(e.modelDir).toBe(join(repo, "snapshots", "abc123"));
    expect(e.id).toBe("tiny/hub-model@fp32");
    const err = (await TransformersEmbedder.load({ model: "Xenova/bge-small-en-v1.5" }).catch(
      (x: unknown) => x,
    )) as Error;
    expect(err).toBeInstanceOf(ModelUnavailableError);
    for (const place of [
      join(root, "env-models", "Xenova", "bge-small-en-v1.5"),
      join(process.cwd(), "models", "Xenova", "bge-small-en-v1.5"),
      join(root, "xdg", "retrace", "models", "Xenova", "bge-small-en-v1.5"),
      join(hub, "models--Xenova--bge-small-en-v1.5", "snapshots"),
    ])
      expect(err.message).toContain(place);
    expect(err.message).toContain("npm run models");
  });
});
