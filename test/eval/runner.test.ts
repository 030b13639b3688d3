/**
 * The one sweep of every graph (src/eval/sweep/external-graph.ts) over
 * retrace's own graph and a real HybridRetriever (BM25 + the built-in
 * embedder over an in-memory dense index: the fast tier; the Chroma-backed
 * sweep is in test/cli/eval.int.test.ts).
 */
import path from "node:path";
import { BaseCheckpointSaver, MemorySaver } from "@langchain/langgraph";
import { beforeAll, describe, expect, it } from "vitest";
import { explainGold, ordinal } from "../../src/eval/report/attribution.js";
import { allEvaluators } from "../../src/eval/measures/evaluators.js";
import { traceFactsOf } from "../../src/app/own-graph/eval.js";
import { OWN_GRAPH_CAPTURE } from "../../src/app/own-graph/parallel.js";
import {
  runGraphSweep,
  type GraphSweepOptions,
  type GraphTurn,
  type SweepPhases,
} from "../../src/eval/sweep/external-graph.js";
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

/** retrace's own graph through the one sweep, read as eval reads it (OWN_GRAPH_CAPTURE: the trace from the returned state). */
function sweepOptions(
  kb: KnowledgeBase,
  cases: EvalCase[],
  retriever: HybridRetriever | null,
  concurrency: number,
  partOf?: ReadonlyMap<string, SplitPart>,
): GraphSweepOptions {
  return {
    ...(partOf !== undefined ? { partOf } : {}),
    graph: buildGraph({ store: retriever, cards: kb, defaults: { k: 3 } }),
    cases,
    evaluators: allEvaluators({ k: 3 }),
    knownIds: new Set(kb.byId.keys()),
    k: 3,
    ...OWN_GRAPH_CAPTURE,
    retrieves: retriever !== null,
    concurrency,
  };
}

function sweep(...args: Parameters<typeof sweepOptions>): Promise<GraphTurn[]> {
  return runGraphSweep(sweepOptions(...args));
}

const reports = (turns: readonly GraphTurn[]) => turns.map((t) => t.report);

/** A report without the `captured` view (which only the callbacks source writes). */
const withoutCaptured = ({ captured: _captured, ...rest }: TurnReport) => rest;

/** A persistent checkpointer as far as the sweep can tell (not a MemorySaver): it keeps every thread. */
class KeepingSaver extends BaseCheckpointSaver {
  readonly inner = new MemorySaver();
  getTuple(...args: Parameters<MemorySaver["getTuple"]>) {
    return this.inner.getTuple(...args);
  }
  list(...args: Parameters<MemorySaver["list"]>) {
    return this.inner.list(...args);
  }
  put(...args: Parameters<MemorySaver["put"]>) {
    return this.inner.put(...args);
  }
  putWrites(...args: Parameters<MemorySaver["putWrites"]>) {
    return this.inner.putWrites(...args);
  }
  deleteThread(...args: Parameters<MemorySaver["deleteThread"]>) {
    return this.inner.deleteThread(...args);
  }
}

/** Timings differ between runs; everything else must not. */

describe("runGraphSweep over retrace's own graph on the mini KB", () => {
  let mini: Awaited<ReturnType<typeof setup>>;
  beforeAll(async () => {
    mini = await setup(MINI_KB);
  });

  it("returns one report per turn in dataset order, with traces captured from the graph's retrieval_trace events", async () => {
    const turns = await runGraphSweep({
      ...sweepOptions(mini.kb, mini.cases, mini.retriever, 2),
      traceSource: "callbacks",
    });
    expect(turns.map((t) => `${t.report.caseId}#${t.report.turn}`)).toEqual([
      "en-freeze-001#0",
      "en-freeze-001#1",
      "en-nomatch-001#0",
      "en-adv-001#0",
      "es-congelar-001#0",
      "pt-pix-001#0",
    ]);
    for (const { report: t, retrieval } of turns) {
      expect(retrieval?.source).toBe("retrace");
      expect(retrieval?.trace?.turn).toBe(t.turn);
      expect(t.retrievedIds).toEqual(retrieval?.trace?.retrievedIds);
      expect(t.retrievedIds!.length).toBeLessThanOrEqual(3);
      expect(t.trace?.k).toBe(3);
    }
    const [first, followUp, noMatch, adversarial] = reports(turns);
    // The follow-up's query carries the earlier subject (contextualize), and its trace records it.
    expect(followUp!.trace!.query).toContain("lock my card");
    // A no-match turn emits no retrieval keys; a gold-bearing one emits the triad.
    const keys = (t: TurnReport) => t.results.map((r) => r.key);
    expect(keys(noMatch!)).not.toContain("retrieval_hit_at_k");
    expect(keys(first!)).toEqual(
      expect.arrayContaining(["retrieval_hit_at_k", "retrieval_recall_at_k", "retrieval_ndcg_at_k"]),
    );
    // The adversarial turn carrying gold is scored.
    expect(keys(adversarial!)).toContain("retrieval_hit_at_k");
  });

  it("is store-less without a retriever: retrievedIds null, no retrieval keys, nothing captured, never a miss", async () => {
    const turns = await sweep(mini.kb, mini.cases, null, 1);
    expect(turns).toHaveLength(6);
    for (const { report: t, retrieval } of turns) {
      expect(retrieval).toBeNull();
      expect(t.retrievedIds).toBeNull();
      expect(t.trace).toBeUndefined();
      expect(t.noRetrieval).toBeUndefined();
      expect(t.error).toBeUndefined();
      expect(t.results.map((r) => r.key).filter((k) => k.startsWith("retrieval_"))).toEqual([]);
    }
  });

  it("leaves turns without a part when no split is given (the mini KB has no split.json)", async () => {
    expect(mini.split).toBeNull();
    const turns = await sweep(mini.kb, mini.cases, mini.retriever, 1);
    expect(turns).toHaveLength(6);
    for (const { report: t } of turns) expect(t.part).toBeUndefined();
  });

  it("reads each turn's trace from the returned state exactly as from the graph's callbacks", async () => {
    const opts = { ...sweepOptions(mini.kb, mini.cases, mini.retriever, 2), measureState: false };
    const callbacks = await runGraphSweep({ ...opts, traceSource: "callbacks" });
    const state = await runGraphSweep({ ...opts, traceSource: "state" });
    expect(state.length).toBe(6);
    // The same reports, but for the `captured` view only the callbacks source writes.
    expect(JSON.stringify(reports(state).map(withoutCaptured))).toBe(
      JSON.stringify(reports(callbacks).map(withoutCaptured)),
    );
    expect(reports(state).every((t) => t.captured === undefined)).toBe(true);
    expect(reports(callbacks).every((t) => t.captured !== undefined)).toBe(true);
    expect(traceFactsOf(state).retrieval).toEqual(traceFactsOf(callbacks).retrieval);
    // One retrieval config per locale of the mini KB's cases.
    expect(Object.keys(traceFactsOf(state).retrieval)).toEqual(["en", "es-419", "pt-BR"]);
    expect(state.map((t) => t.retrieval?.trace?.retrievedIds)).toEqual(
      callbacks.map((t) => t.retrieval?.trace?.retrievedIds),
    );
    expect(state.every((t) => t.retrieval?.trace !== undefined)).toBe(true);
  });

  it("deletes each case's thread from a MemorySaver once the case is done, and keeps a persistent checkpointer's", async () => {
    const run = async (saver: MemorySaver | KeepingSaver) => {
      const released: string[] = [];
      const memory = saver instanceof MemorySaver ? saver : saver.inner;
      const deleteThread = memory.deleteThread.bind(memory);
      memory.deleteThread = async (id: string) => {
        released.push(id);
        return deleteThread(id);
      };
      const turns = await runGraphSweep({
        ...sweepOptions(mini.kb, mini.cases, mini.retriever, 1),
        graph: buildGraph({ store: mini.retriever, cards: mini.kb, defaults: { k: 3 }, checkpointer: saver }),
        threadPrefix: "t:",
      });
      const kept = await Promise.all(
        mini.cases.map(
          async (c) => (await memory.getTuple({ configurable: { thread_id: `t:${c.id}` } })) !== undefined,
        ),
      );
      return { turns, released, kept };
    };
    const persistent = await run(new KeepingSaver());
    const memory = await run(new MemorySaver());
    expect(JSON.stringify(reports(memory.turns))).toBe(JSON.stringify(reports(persistent.turns)));
    // The follow-up turn still sees the first turn's state (the conversation carries over with one checkpoint per turn).
    expect(memory.turns[1]!.report.trace!.query).toContain("lock my card");
    expect(memory.released).toEqual(mini.cases.map((c) => `t:${c.id}`));
    expect(memory.kept).toEqual(mini.cases.map(() => false));
    expect(persistent.released).toEqual([]);
    expect(persistent.kept).toEqual(mini.cases.map(() => true));
  });

  it("scores a turn of a retrieving graph whose returned state holds no trace for it as a miss (no retrieval), not an error", async () => {
    const graph = { invoke: async () => ({ answer: "", citedIds: [], refused: true, retrieval: [] }) };
    const turns = await runGraphSweep({
      graph,
      cases: mini.cases.slice(0, 1),
      evaluators: allEvaluators({ k: 3 }),
      knownIds: new Set(),
      k: 3,
      traceSource: "state",
    });
    expect(turns.map((t) => t.report.turn)).toEqual([0, 1]);
    const [t] = turns;
    expect(t!.retrieval).toBeNull();
    expect(t!.report.error).toBeUndefined();
    expect(t!.report.noRetrieval).toBe(true);
    expect(t!.report.retrievedIds).toEqual([]);
    const hit = t!.report.results.find((r) => r.key === "retrieval_hit_at_k");
    expect(hit?.score).toBe(0);
    expect(hit?.comment).toMatch(/^no retrieval \(the turn made no retriever run\)/);
  });

  it("rejects a non-positive concurrency", async () => {
    await expect(sweep(mini.kb, mini.cases, mini.retriever, 0)).rejects.toThrow(
      "Expected `concurrency` to be a positive integer, got 0",
    );
  });
});

describe("runGraphSweep over retrace's own graph on the shipped eval set", () => {
  it("gives identical results at concurrency 1 and 8, each turn carrying its case's part of the split", async () => {
    const shipped = await setup(SHIPPED_KB);
    // The first 85 cases (the set before the held-out cases were added; 230 turns, counted by `retrace check`
    // at that commit) keep this test as fast as before: determinism is the runner's property, not the data's.
    const cases = shipped.cases.slice(0, 85);
    const partOf = shipped.split!.partOf;
    const phases: SweepPhases = { graph: 0, evaluate: 0 };
    const one = await runGraphSweep({ ...sweepOptions(shipped.kb, cases, shipped.retriever, 1, partOf), phases });
    const eight = await sweep(shipped.kb, cases, shipped.retriever, 8, partOf);
    expect(one.length).toBe(230);
    for (const { report: t } of one) expect(t.part).toBe(partOf.get(t.caseId));
    expect(new Set(reports(one).map((t) => t.part))).toEqual(new Set(["tune", "holdout"]));
    // Turn reports carry no wall-clock field; timings come apart (from each turn's trace), for the same turns in the same order.
    expect(JSON.stringify(reports(one))).not.toContain("timingsMs");
    expect(JSON.stringify(reports(eight))).toBe(JSON.stringify(reports(one)));
    const timings = traceFactsOf(one).timings;
    expect(Object.keys(traceFactsOf(eight).timings)).toEqual(Object.keys(timings));
    expect(Object.keys(timings)).toHaveLength(230);
    expect(phases.graph).toBeGreaterThan(0);
    expect(phases.evaluate).toBeGreaterThan(0);
  }, 120_000);
});

const r = (id: string, rank: number, parentId = id.split("#")[0]!): Ranked => ({ id, parentId, score: 1 / rank, rank });

function trace(stages: RetrievalTrace["stages"], retrievedIds: string[]): RetrievalTrace {
  return {
    turn: 0,
    query: "q",
    k: 2,
    config: {
      embedder: "e",
      denseK: 20,
      bm25K: 20,
      fusion: { method: "rrf", params: { k: 60 } },
      rerank: null,
      mode: "hybrid",
    },
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
