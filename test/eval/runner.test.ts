/**
 * The sweep runner over the real graph and a real HybridRetriever (BM25 +
 * the built-in embedder over an in-memory dense index: the fast tier; the
 * Chroma-backed sweep is in test/cli/eval.int.test.ts).
 */
import path from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { beforeAll, describe, expect, it } from "vitest";
import { explainGold, ordinal } from "../../src/eval/report/attribution.js";
import { allEvaluators } from "../../src/eval/measures/evaluators.js";
import { runSweep } from "../../src/app/own-graph/runner.js";
import { goldPositions } from "../../src/eval/report/trace-summary.js";
import { loadData } from "../../src/system.js";
import type { TurnReport } from "../../src/eval/report/types.js";
import { buildGraph } from "../../src/graph/build.js";
import type { SplitPart } from "../../src/kb/split.js";
import type { EvalCase, KnowledgeBase } from "../../src/kb/types.js";
import { InMemoryDenseIndex } from "../../src/retrieval/dense.js";
import { HashingEmbedder } from "../../src/retrieval/embedders/builtin.js";
import { HybridRetriever } from "../../src/retrieval/hybrid.js";
import type { Ranked, RetrievalTrace } from "../../src/retrieval/types.js";
import { MINI_KB, SHIPPED_KB } from "../helpers/fixtures.js";

async function setup(dir: string) {
  const data = await loadData(dir, path.join(dir, "eval", "cases.jsonl"));
  const embedder = new HashingEmbedder();
  const dense = await InMemoryDenseIndex.fromChunks(data.chunks, embedder);
  const retriever = new HybridRetriever({ chunks: data.chunks, embedder, dense });
  return { ...data, retriever };
}

function sweep(
  kb: KnowledgeBase,
  cases: EvalCase[],
  retriever: HybridRetriever | null,
  concurrency: number,
  partOf?: ReadonlyMap<string, SplitPart>,
) {
  return runSweep({
    ...(partOf !== undefined ? { partOf } : {}),
    graph: buildGraph({ store: retriever, cards: kb, defaults: { k: 3 } }),
    cases,
    evaluators: allEvaluators({ k: 3 }),
    knownIds: new Set(kb.byId.keys()),
    storeBacked: retriever !== null,
    concurrency,
  });
}

/** Timings differ between runs; everything else must not. */

describe("runSweep on the mini KB", () => {
  let mini: Awaited<ReturnType<typeof setup>>;
  beforeAll(async () => {
    mini = await setup(MINI_KB);
  });

  it("returns one report per turn in dataset order, with traces collected from the graph's events", async () => {
    const { turns, traces } = await sweep(mini.kb, mini.cases, mini.retriever, 2);
    expect(turns.map((t) => `${t.caseId}#${t.turn}`)).toEqual([
      "en-freeze-001#0",
      "en-freeze-001#1",
      "en-nomatch-001#0",
      "en-adv-001#0",
      "es-congelar-001#0",
      "pt-pix-001#0",
    ]);
    for (const t of turns) {
      expect(t.retrievedIds).toEqual(traces.forTurn(t.caseId, t.turn)?.retrievedIds);
      expect(t.retrievedIds!.length).toBeLessThanOrEqual(3);
      expect(t.trace?.k).toBe(3);
    }
    // The follow-up's query carries the earlier subject (contextualize), and its trace records it.
    expect(turns[1]!.trace!.query).toContain("lock my card");
    // A no-match turn emits no retrieval keys; a gold-bearing one emits the triad.
    const keys = (t: TurnReport) => t.results.map((r) => r.key);
    expect(keys(turns[2]!)).not.toContain("retrieval_hit_at_k");
    expect(keys(turns[0]!)).toEqual(
      expect.arrayContaining(["retrieval_hit_at_k", "retrieval_recall_at_k", "retrieval_ndcg_at_k"]),
    );
    // The adversarial turn carrying gold is scored.
    expect(keys(turns[3]!)).toContain("retrieval_hit_at_k");
  });

  it("is store-less without a retriever: retrievedIds null, no retrieval keys", async () => {
    const { turns, traces } = await sweep(mini.kb, mini.cases, null, 1);
    expect(traces.all()).toEqual([]);
    for (const t of turns) {
      expect(t.retrievedIds).toBeNull();
      expect(t.trace).toBeUndefined();
      expect(t.results.map((r) => r.key).filter((k) => k.startsWith("retrieval_"))).toEqual([]);
    }
  });

  it("leaves turns without a part when no split is given (the mini KB has no split.json)", async () => {
    expect(mini.split).toBeNull();
    const { turns } = await sweep(mini.kb, mini.cases, mini.retriever, 1);
    for (const t of turns) expect(t.part).toBeUndefined();
  });

  it("reads each turn's trace from the returned state exactly as from the graph's events", async () => {
    const opts = {
      graph: buildGraph({ store: mini.retriever, cards: mini.kb, defaults: { k: 3 } }),
      cases: mini.cases,
      evaluators: allEvaluators({ k: 3 }),
      knownIds: new Set(mini.kb.byId.keys()),
      storeBacked: true,
      concurrency: 2,
    };
    const events = await runSweep(opts);
    const state = await runSweep({ ...opts, traceSource: "state" });
    expect(state.turns.length).toBe(6);
    expect(JSON.stringify(state.turns)).toBe(JSON.stringify(events.turns));
    expect(state.retrieval).toEqual(events.retrieval);
    expect(state.traces.all().map((t) => t.source)).toEqual(Array(6).fill("state"));
    expect(events.traces.all().map((t) => t.source)).toEqual(Array(6).fill("callback"));
    expect(state.traces.all().map((t) => t.trace.retrievedIds)).toEqual(
      events.traces.all().map((t) => t.trace.retrievedIds),
    );
  });

  it("gives the same turns with durability exit, releasing each case's thread once the case is done and keeping no full traces", async () => {
    const run = async (durability: "exit" | undefined, release: boolean) => {
      const saver = new MemorySaver();
      const released: string[] = [];
      const result = await runSweep({
        graph: buildGraph({ store: mini.retriever, cards: mini.kb, defaults: { k: 3 }, checkpointer: saver }),
        cases: mini.cases,
        evaluators: allEvaluators({ k: 3 }),
        knownIds: new Set(mini.kb.byId.keys()),
        storeBacked: true,
        concurrency: 1,
        traceSource: "state",
        threadPrefix: "t:",
        ...(durability !== undefined ? { durability } : {}),
        ...(release
          ? { releaseThread: async (id: string) => (released.push(id), saver.deleteThread(id)), keepTraces: false }
          : {}),
      });
      const kept = await Promise.all(
        mini.cases.map(async (c) => (await saver.getTuple({ configurable: { thread_id: `t:${c.id}` } })) !== undefined),
      );
      return { result, released, kept };
    };
    const plain = await run(undefined, false);
    const lean = await run("exit", true);
    expect(JSON.stringify(lean.result.turns)).toBe(JSON.stringify(plain.result.turns));
    // The follow-up turn still sees the first turn's state (the conversation carries over with one checkpoint per turn).
    expect(lean.result.turns[1]!.trace!.query).toContain("lock my card");
    expect(lean.released).toEqual(mini.cases.map((c) => `t:${c.id}`));
    expect(lean.kept).toEqual(mini.cases.map(() => false));
    expect(plain.kept).toEqual(mini.cases.map(() => true));
    // keepTraces: false drops the full traces, not the reports' trace summaries.
    expect(lean.result.traces.all()).toEqual([]);
    expect(plain.result.traces.all()).toHaveLength(6);
  });

  it("rejects a store-backed graph whose returned state holds no trace for the turn", async () => {
    const graph = { invoke: async () => ({ answer: "", citedIds: [], refused: true, retrieval: [] }) };
    await expect(
      runSweep({
        graph,
        cases: mini.cases.slice(0, 1),
        evaluators: allEvaluators({ k: 3 }),
        knownIds: new Set(),
        storeBacked: true,
        traceSource: "state",
      }),
    ).rejects.toThrow(
      "a graph whose returned state holds this turn's trace in its `retrieval` channel (none for case en-freeze-001 turn 0)",
    );
  });

  it("rejects a non-positive concurrency", async () => {
    await expect(sweep(mini.kb, mini.cases, mini.retriever, 0)).rejects.toThrow(
      "Expected `concurrency` to be a positive integer, got 0",
    );
  });
});

describe("runSweep on the shipped eval set", () => {
  it("gives identical results at concurrency 1 and 8, each turn carrying its case's part of the split", async () => {
    const shipped = await setup(SHIPPED_KB);
    // The first 85 cases (the set before the held-out cases were added; 230 turns, counted by `retrace check`
    // at that commit) keep this test as fast as before: determinism is the runner's property, not the data's.
    const cases = shipped.cases.slice(0, 85);
    const partOf = shipped.split!.partOf;
    const one = await sweep(shipped.kb, cases, shipped.retriever, 1, partOf);
    const eight = await sweep(shipped.kb, cases, shipped.retriever, 8, partOf);
    expect(one.turns.length).toBe(230);
    for (const t of one.turns) expect(t.part).toBe(partOf.get(t.caseId));
    expect(new Set(one.turns.map((t) => t.part))).toEqual(new Set(["tune", "holdout"]));
    // Turn reports carry no wall-clock field; timings come apart, for the same turns in the same order.
    expect(JSON.stringify(one.turns)).not.toContain("timingsMs");
    expect(JSON.stringify(eight.turns)).toBe(JSON.stringify(one.turns));
    expect(Object.keys(eight.timings)).toEqual(Object.keys(one.timings));
    expect(Object.keys(one.timings)).toHaveLength(230);
    expect(one.phases.graph).toBeGreaterThan(0);
    expect(one.phases.evaluate).toBeGreaterThan(0);
  }, 120_000);
});

const r = (id: string, rank: number, parentId = id.split("#")[0]!): Ranked => ({ id, parentId, score: 1 / rank, rank });

function trace(stages: RetrievalTrace["stages"], retrievedIds: string[]): RetrievalTrace {
  return {
    turn: 0,
    query: "q",
    k: 2,
    config: { embedder: "e", denseK: 20, bm25K: 20, fusion: "rrf", rrfK: 60, rerank: null, mode: "hybrid" },
    stages,
    retrievedIds,
    timingsMs: {},
  };
}

describe("goldPositions and explainGold", () => {
  // gold card g: chunk g#2 is 3rd in dense, absent from BM25, 3rd after fusion; card g is 3rd after parent dedup; k=2 cuts it.
  const t = trace(
    {
      dense: [r("a#1", 1), r("b#1", 2), r("g#2", 3), r("g#1", 4)],
      bm25: [r("b#1", 1), r("a#2", 2)],
      fused: [r("b#1", 1), r("a#1", 2), r("g#2", 3), r("a#2", 4)],
      parents: [r("b", 1), r("a", 2), r("g", 3)],
    },
    ["b", "a"],
  );

  it("gives each gold card's best rank per stage, null when absent", () => {
    expect(goldPositions(t, ["g", "a", "zz"])).toEqual({
      g: { dense: 3, bm25: null, fused: 3, parents: 3 },
      a: { dense: 1, bm25: 2, fused: 2, parents: 2 },
      zz: { dense: null, bm25: null, fused: null, parents: null },
    });
  });

  it("says where a gold card was lost", () => {
    expect(explainGold(t, "g")).toMatchObject({
      verdict: "cut_at_k",
      text: "g: 3rd in dense, absent in BM25 (2 listed), 3rd after fusion, 3rd card after parent dedup, cut at k=2",
    });
    expect(explainGold(t, "a").verdict).toBe("retrieved");
    expect(explainGold(t, "a").text).toMatch(/retrieved at rank 2 of the top-2$/);
    expect(explainGold(t, "zz")).toMatchObject({
      verdict: "not_retrieved",
      text: expect.stringMatching(/not retrieved by any branch \(dense top-20, BM25 top-20\)$/),
    });
  });

  it("writes ordinals", () => {
    expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 40, 101, 111].map(ordinal)).toEqual([
      "1st",
      "2nd",
      "3rd",
      "4th",
      "11th",
      "12th",
      "13th",
      "21st",
      "22nd",
      "23rd",
      "40th",
      "101st",
      "111th",
    ]);
  });
});
