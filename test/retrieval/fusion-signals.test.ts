import { describe, expect, it } from "vitest";
import {
  fuse,
  minMaxFusion,
  signalsFusion,
  signalsWeight,
  SIGNALS_BETA,
  SIGNALS_GAMMA,
  SIGNALS_SHIFT,
} from "../../src/retrieval/fusion.js";
import { RetrievalSettingsSchema } from "../../src/nodes/configuration-schema.js";
import type { Chunk } from "../../src/kb/types.js";
import { InMemoryDenseIndex } from "../../src/retrieval/dense.js";
import { HashingEmbedder } from "../../src/retrieval/embedders/builtin.js";
import { HybridRetriever } from "../../src/retrieval/hybrid.js";
import type { Ranked } from "../../src/retrieval/types.js";

const list = (...pairs: [string, number][]): Ranked[] =>
  pairs.map(([id, score], i) => ({ id, parentId: id, score, rank: i + 1 }));
const dense = list(["a", 1], ["b", 0], ["c", 0], ["d", 0]); // head confidence 1
const bm25 = list(["c", 2], ["b", 2], ["a", 2]); // flat head: confidence 0
const lists = (wd: number, wb: number) => [
  { name: "dense", ranked: dense, weight: wd },
  { name: "bm25", ranked: bm25, weight: wb },
];

describe("signalsWeight (label-free per-query dense weight)", () => {
  it("matches a hand computation with the shipped constants", () => {
    expect([SIGNALS_SHIFT, SIGNALS_BETA, SIGNALS_GAMMA]).toEqual([0.4, 2, -2]);
    // base 0.3 → α_c = 0.3 + 0.4 = 0.7, logit = ln(7/3) = 0.847298; c_dense − c_bm25 = 1 − 0 → +2;
    // overlap of the top 10: {a,b,c} = 3/10 → −2 · (0.3 − 0.5) = +0.4; z = 3.247298 → α_q = 0.962576.
    const w = signalsWeight(lists(0.3, 0.7));
    expect(w.base).toBeCloseTo(0.3, 12);
    expect(w.confidenceDense).toBe(1);
    expect(w.confidenceBm25).toBe(0);
    expect(w.overlap).toBeCloseTo(0.3, 12);
    expect(w.dense).toBeCloseTo(0.962576, 6);
  });

  it("clamps α + δ to [0.1, 0.9] and keeps a switched-off branch switched off", () => {
    // base 0.9 + 0.4 → 0.9; with β = γ = 0 the weight is α_c itself.
    expect(signalsWeight(lists(0.9, 0.1), { beta: 0, gamma: 0 }).dense).toBeCloseTo(0.9, 12);
    expect(signalsWeight(lists(0, 1), { beta: 0, gamma: 0, shift: -0.5 }).dense).toBe(0);
    expect(signalsWeight(lists(1, 0)).dense).toBe(1);
    expect(signalsWeight(lists(0, 1)).dense).toBe(0);
  });

  it("moves weight to dense when the lists disagree (γ < 0) and to the more confident list (β > 0)", () => {
    const agree = signalsWeight(lists(0.5, 0.5), { beta: 0, shift: 0 });
    const apart = signalsWeight(
      [
        { name: "dense", ranked: dense, weight: 0.5 },
        { name: "bm25", ranked: list(["x", 2], ["y", 1], ["z", 0]), weight: 0.5 },
      ],
      { beta: 0, shift: 0 },
    );
    expect(apart.overlap).toBe(0);
    expect(apart.dense).toBeGreaterThan(agree.dense);
    expect(signalsWeight(lists(0.5, 0.5), { gamma: 0, shift: 0 }).dense).toBeGreaterThan(0.5);
  });

  it("refuses lists that are not one dense and one bm25 list", () => {
    expect(() => signalsWeight([{ name: "dense", ranked: dense }])).toThrow(/two lists named dense and bm25/);
    expect(() =>
      signalsWeight([
        { name: "dense", ranked: dense },
        { name: "dense", ranked: bm25 },
      ]),
    ).toThrow(/two lists named dense and bm25/);
  });

  it("fuses any lists that are not one dense and one bm25 list by min-max CombSUM", () => {
    const other = [
      { name: "a", ranked: dense, weight: 0.3 },
      { name: "bm25", ranked: bm25, weight: 0.7 },
    ];
    expect(signalsFusion(other)).toEqual(minMaxFusion(other));
    expect(signalsFusion([{ name: "dense", ranked: dense }])).toEqual(minMaxFusion([{ name: "dense", ranked: dense }]));
    expect(() => signalsWeight(lists(-1, 1))).toThrow(/weight of dense/);
  });
});

describe("signalsFusion", () => {
  it("is min-max CombSUM with weights (α_q, 1 − α_q)", () => {
    // α_q = 0.962576: a = α_q·1 + (1 − α_q)·1 = 1; b = c = (1 − α_q)·1 = 0.037424 (tie → id); d = 0.
    const fused = signalsFusion(lists(0.3, 0.7));
    expect(fused.map((r) => r.id)).toEqual(["a", "b", "c", "d"]);
    expect(fused[0]?.score).toBeCloseTo(1, 12);
    expect(fused[1]?.score).toBeCloseTo(0.037424, 6);
    for (const r of fused) expect(r.contributions.reduce((s, c) => s + c.value, 0)).toBeCloseTo(r.score, 12);
  });

  it("equals min-max fusion at α_c when β = γ = 0, is reached through fuse(), ignores list order and leaves inputs alone", () => {
    const before = JSON.stringify(lists(0.3, 0.7));
    const s = signalsFusion(lists(0.3, 0.7), { beta: 0, gamma: 0 });
    const m = minMaxFusion(lists(0.7, 0.3));
    expect(s.map((r) => [r.id, r.score])).toEqual(m.map((r) => [r.id, expect.closeTo(r.score, 12)]));
    expect(fuse(lists(0.3, 0.7), { method: "signals" }).map((r) => r.id)).toEqual(
      signalsFusion(lists(0.3, 0.7)).map((r) => r.id),
    );
    expect(signalsFusion([...lists(0.3, 0.7)].reverse()).map((r) => [r.id, r.score])).toEqual(
      signalsFusion(lists(0.3, 0.7)).map((r) => [r.id, r.score]),
    );
    expect(JSON.stringify(lists(0.3, 0.7))).toBe(before);
  });

  it("is accepted as a configurable fusion name", () => {
    expect(RetrievalSettingsSchema.safeParse({ fusion: "signals" }).success).toBe(true);
  });
});

describe('HybridRetriever with fusion: "signals"', () => {
  const chunks: Chunk[] = [
    ["card-freeze", "Freezing your card blocks new card payments and ATM withdrawals."],
    ["fees", "Out-of-network ATM withdrawals cost a fee of 2.50."],
    ["refunds", "A merchant refund reaches your balance in 3 to 5 business days."],
    ["lost-card", "If your card is lost or stolen, freeze it and order a replacement."],
  ].map(([id, text]) => ({
    id: `${id}#1`,
    parentId: id as string,
    locale: "en",
    title: id as string,
    section: "s",
    text: text as string,
  }));

  it("fuses the real branches with the per-query weight the trace's contributions carry", async () => {
    const embedder = new HashingEmbedder();
    const dense = await InMemoryDenseIndex.fromChunks(chunks, embedder);
    const retriever = new HybridRetriever({
      chunks,
      embedder,
      dense,
      defaults: { fusion: "signals", weights: { dense: 0.3, bm25: 0.7 } },
    });
    const trace = await retriever.retrieve("freeze my card", { locale: "en" });
    expect(trace.config.fusion.method).toBe("signals");
    // the trace records the method's parameters as its registry schema outputs them (defaults filled)
    expect(Object.keys(trace.config.fusion.params).sort()).toEqual(["beta", "gamma", "shift", "top"]);
    const lists = [
      { name: "dense", ranked: trace.stages.dense ?? [], weight: 0.3 },
      { name: "bm25", ranked: trace.stages.bm25 ?? [], weight: 0.7 },
    ];
    const w = signalsWeight(lists);
    expect(trace.stages.fused.map((r) => r.id)).toEqual(signalsFusion(lists).map((r) => r.id));
    const first = (trace.stages.fused[0] as { contributions: { list: string; weight: number }[] }).contributions;
    for (const c of first) expect(c.weight).toBeCloseTo(c.list === "dense" ? w.dense : 1 - w.dense, 12);
    // A per-call fusion override reaches the same code path.
    const perCall = await retriever.retrieve("freeze my card", { locale: "en", fusion: "minmax" });
    expect(perCall.config.fusion).toEqual({ method: "minmax", params: {} });
  });
});
