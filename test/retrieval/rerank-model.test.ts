/**
 * CrossEncoderReranker through the real transformers.js + onnxruntime-node
 * path, offline, on tiny sequence-classification models generated into a temp
 * dir. Every test also asserts that no remote URL was fetched.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidArgumentError, ModelUnavailableError } from "../../src/errors.js";
import { CrossEncoderReranker, DEFAULT_RERANK_MODEL } from "../../src/retrieval/rerank-model.js";
import {
  DEFAULT_WORDS,
  type TinyCrossEncoder,
  idsOf,
  makeTinyBertEmbedder,
  makeTinyCrossEncoder,
} from "../fixtures/models/make-tiny-models.js";
import { useFetchGuard } from "../helpers/network.js";

let root: string;
let modelsDir: string;
let single: TinyCrossEncoder;
let binary: TinyCrossEncoder;
const loaded: CrossEncoderReranker[] = [];

async function load(opts: Parameters<typeof CrossEncoderReranker.load>[0] = {}): Promise<CrossEncoderReranker> {
  const r = await CrossEncoderReranker.load({ modelsDir, ...opts });
  loaded.push(r);
  return r;
}

function expectClose(a: number[], b: number[], tol: number): void {
  expect(a.length).toBe(b.length);
  for (let i = 0; i < a.length; i++) expect(Math.abs((a[i] ?? NaN) - (b[i] ?? NaN))).toBeLessThan(tol);
}

/** Reference tokenisation of a pair made of whole vocabulary words: [CLS] q [SEP] t [SEP], types 0..0 1..1. */
function pairIds(m: TinyCrossEncoder, query: string[], text: string[]): { ids: number[]; types: number[] } {
  const ids = idsOf(m, ["[CLS]", ...query, "[SEP]", ...text, "[SEP]"]);
  const types = ids.map((_, i) => (i < query.length + 2 ? 0 : 1));
  return { ids, types };
}

const TEXTS = [
  "I was charged twice for one order",
  "how to reset my password",
  "refund",
  "shipping delivery is late and my subscription invoice shows a duplicate payment on the card",
  "cancel my account",
];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "retrace-rerank-"));
  modelsDir = join(root, "models");
  single = await makeTinyCrossEncoder(modelsDir, { hiddenSize: 16, seed: 21 });
  binary = await makeTinyCrossEncoder(modelsDir, {
    org: "tiny",
    name: "binary-ce",
    hiddenSize: 16,
    seed: 22,
    numLabels: 2,
  });
});

afterAll(async () => {
  for (const r of loaded) await r.dispose();
  await rm(root, { recursive: true, force: true });
});

useFetchGuard();

describe("CrossEncoderReranker", () => {
  it("loads the default cross-encoder id offline and scores one finite logit per text", async () => {
    const r = await load();
    expect(r.id).toBe(DEFAULT_RERANK_MODEL);
    expect(r.numLabels).toBe(1);
    expect(r.modelDir).toBe(single.path);
    const scores = await r.score("refund for a duplicate charge", TEXTS);
    expect(scores).toHaveLength(TEXTS.length);
    expect(scores.every(Number.isFinite)).toBe(true);
  });

  it("scores the (query, text) pair the generated network scores, with token types 0/1", async () => {
    const r = await load();
    const { ids, types } = pairIds(single, ["refund"], ["the", "order"]);
    const [s] = await r.score("Refund", ["the ORDER"]);
    expect(s).toBeCloseTo(single.logits(ids, types)[0] ?? NaN, 5);
    // the pair's segments matter: the same tokens all typed 0 give another logit
    expect(Math.abs((s ?? 0) - (single.logits(ids)[0] ?? 0))).toBeGreaterThan(1e-4);
  });

  it("uses the last label's logit when the model has several labels", async () => {
    const r = await load({ model: "tiny/binary-ce" });
    expect(r.numLabels).toBe(2);
    const { ids, types } = pairIds(binary, ["card"], ["payment", "late"]);
    const expected = binary.logits(ids, types);
    const [s] = await r.score("card", ["payment late"]);
    expect(s).toBeCloseTo(expected[1] ?? NaN, 5);
    expect(Math.abs((expected[1] ?? 0) - (expected[0] ?? 0))).toBeGreaterThan(1e-3);
  });

  it("gives different pairs different scores", async () => {
    const r = await load();
    const scores = await r.score("refund", TEXTS);
    expect(new Set(scores.map((s) => s.toFixed(6))).size).toBe(TEXTS.length);
    const [other] = await r.score("password", [TEXTS[0] ?? ""]);
    expect(Math.abs((other ?? 0) - (scores[0] ?? 0))).toBeGreaterThan(1e-6);
  });

  it("is batch-invariant: one by one, one batch, and batches of 2 agree", async () => {
    const r = await load();
    const small = await load({ batchSize: 2 });
    const query = "how long until I get my refund back";
    const batch = await r.score(query, TEXTS);
    expectClose(await small.score(query, TEXTS), batch, 1e-5);
    const alone: number[] = [];
    for (const t of TEXTS) alone.push(...(await r.score(query, [t])));
    expectClose(alone, batch, 1e-5);
  });

  it("padding never changes a pair's score (property, fixed seed)", async () => {
    const r = await load();
    const word = fc.constantFrom(...DEFAULT_WORDS, "xylophone", "Refunded", "7");
    const text = fc.array(word, { minLength: 1, maxLength: 10 }).map((ws) => ws.join(" "));
    await fc.assert(
      fc.asyncProperty(text, text, fc.array(text, { maxLength: 3 }), async (q, t, others) => {
        const [alone] = await r.score(q, [t]);
        const batch = await r.score(q, [...others, t, `${t} ${t} ${t} ${t}`]);
        expect(Math.abs((batch[others.length] ?? NaN) - (alone ?? NaN))).toBeLessThan(1e-5);
      }),
      { seed: 42, numRuns: 100 },
    );
  });

  it("scores an empty list as empty", async () => {
    const r = await load();
    expect(await r.score("refund", [])).toEqual([]);
  });

  it("fails with ModelUnavailableError (exit 3) naming the folder when the model is missing", async () => {
    const empty = join(root, "no-models");
    const err = await CrossEncoderReranker.load({ modelsDir: empty }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect((err as ModelUnavailableError).exitCode).toBe(3);
    expect((err as Error).message).toContain(join(empty, "Xenova", "ms-marco-MiniLM-L-6-v2"));
    expect((err as Error).message).toContain("downloads from the Hugging Face Hub are off");
  });

  it("rejects a model without a classification head", async () => {
    await makeTinyBertEmbedder(modelsDir, { org: "tiny", name: "not-a-classifier", hiddenSize: 8 });
    const r = await load({ model: "tiny/not-a-classifier" });
    await expect(r.score("refund", ["order"])).rejects.toThrow(/not a sequence classifier/);
  });

  it("rejects a bad batch size", async () => {
    await expect(load({ batchSize: 1.5 })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});
