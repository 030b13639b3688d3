/**
 * The sweep over worker threads (src/app/own-graph/parallel.ts): real worker threads
 * running the real graph over the same retriever, as lanes of the one sweep
 * (`sweepGraphCases({ lanes })`); the turns must equal the single-thread
 * sweep's, whatever thread ran each case. Failures in a worker come back as
 * the same retrace error class and exit code.
 */
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DataValidationError, exitCodeOf, InvalidArgumentError } from "../../src/errors.js";
import { traceFactsOf } from "../../src/app/own-graph/eval.js";
import {
  ownCounterfactual,
  ownGraphCaseOptions,
  reviveError,
  serializeError,
  startWorkerLanes,
  type SweepWorkerInit,
} from "../../src/app/own-graph/parallel.js";
import {
  runGraphSweep,
  sweepGraphCases,
  type GraphSweepOptions,
  type GraphSweepResult,
  type GraphTurn,
} from "../../src/eval/sweep/external-graph.js";
import { evaluatorsFor } from "../../src/eval/measures/storeless.js";
import { buildGraph } from "../../src/graph/build.js";
import { ExactDenseIndex } from "../../src/retrieval/exact-dense.js";
import { HybridRetriever } from "../../src/retrieval/hybrid.js";
import type { Retriever } from "../../src/retrieval/types.js";
import { openSystem, SWEEP_WORKER_ENTRY, type RetraceSystem } from "../../src/system.js";
import { SHIPPED_KB } from "../helpers/fixtures.js";

const defaults = { k: 5, mode: "hybrid" as const, rerank: false };

const reports = (turns: readonly GraphTurn[]) => turns.map((t) => t.report);

describe("startWorkerLanes", () => {
  let sys: RetraceSystem;
  beforeAll(async () => {
    sys = await openSystem({
      kbDir: SHIPPED_KB,
      casesFile: path.join(SHIPPED_KB, "eval", "cases.jsonl"),
      store: "memory",
      embedder: "builtin",
    });
  });
  afterAll(async () => {
    await sys?.close();
  });

  const cases = () => sys.cases.slice(0, 40);
  const initFor = (recipe: SweepWorkerInit["recipe"]): SweepWorkerInit => ({
    recipe,
    chunks: sys.chunks,
    kb: sys.kb,
    analyzers: sys.analyzers.overrides,
    cases: cases(),
    defaults,
    k: 5,
    knownIds: [...sys.kb.byId.keys()],
    partOf: [...sys.split!.partOf],
    threadPrefix: "p:",
    // Counterfactual retrieval runs in the workers too (docs/query-attribution.md): the same attributions at any thread count.
    counterfactual: true,
  });
  // The single-thread reference, written out here; the parallel runs take this thread's share from ownGraphCaseOptions, as eval does.
  const localFor = (retriever: Retriever): Omit<GraphSweepOptions, "cases" | "concurrency"> => ({
    graph: buildGraph({ store: retriever, cards: sys.kb, defaults, checkpointer: new MemorySaver() }),
    evaluators: evaluatorsFor({ k: 5, storeBacked: true }),
    knownIds: new Set(sys.kb.byId.keys()),
    k: 5,
    input: (turn, c) => ({ messages: [new HumanMessage(turn.user)], locale: c.locale }),
    traceSource: "state",
    measureState: false,
    partOf: sys.split!.partOf,
    threadPrefix: "p:",
    counterfactual: true,
    retrieveAgain: ownCounterfactual(retriever, defaults),
  });

  const shareArgs = (retriever: Retriever) => ({
    retriever,
    kb: sys.kb,
    analyzers: sys.analyzers,
    defaults,
    evaluators: evaluatorsFor({ k: 5, storeBacked: true }),
    knownIds: new Set(sys.kb.byId.keys()),
    partOf: sys.split!.partOf,
    threadPrefix: "p:",
    k: 5,
    counterfactual: true,
  });
  const shareFor = (retriever: Retriever, replay?: "own" | "recorded") =>
    ownGraphCaseOptions({ ...shareArgs(retriever), ...(replay !== undefined ? { replay } : {}) });

  /** The sweep of `init.cases` over `threads` threads: this thread's share from `retriever`, the rest on worker lanes. */
  const inWorkers = async (o: {
    init: SweepWorkerInit;
    retriever: Retriever;
    threads: number;
    concurrency: number;
    onCaseDone?: (done: number, total: number) => void;
    replay?: "own" | "recorded";
  }): Promise<GraphSweepResult> => {
    const pool = startWorkerLanes({
      workerEntry: SWEEP_WORKER_ENTRY,
      init: o.init,
      threads: o.threads,
      concurrency: o.concurrency,
    });
    try {
      return await sweepGraphCases({
        ...shareFor(o.retriever, o.replay),
        cases: o.init.cases,
        concurrency: o.concurrency,
        lanes: pool.lanes,
        ...(o.onCaseDone !== undefined ? { onCaseDone: o.onCaseDone } : {}),
      });
    } finally {
      await pool.close();
    }
  };

  it("gives the single-thread sweep's turns at 2 and 3 threads (workers rebuild the memory store's index)", async () => {
    const single = await runGraphSweep({ ...localFor(sys.retriever!), cases: cases(), concurrency: 1 });
    expect(single.length).toBeGreaterThan(80);
    // Every gold-bearing turn is attributed; some follow-ups were retrieved with their standalone oracle.
    expect(
      reports(single)
        .filter((t) => t.gold.length > 0)
        .every((t) => t.queries !== undefined),
    ).toBe(true);
    expect(reports(single).some((t) => t.queries?.standalone !== undefined)).toBe(true);
    const done: number[] = [];
    for (const threads of [2, 3]) {
      const multi = await inWorkers({
        init: initFor(sys.retrieverRecipe),
        retriever: sys.retriever!,
        threads,
        concurrency: 2,
        onCaseDone: (d) => done.push(d),
      });
      expect(multi.casesByThread.length).toBe(threads);
      expect(JSON.stringify(reports(multi.turns))).toBe(JSON.stringify(reports(single)));
      const facts = traceFactsOf(multi.turns);
      expect(facts.retrieval).toEqual(traceFactsOf(single).retrieval);
      expect(Object.keys(facts.timings)).toEqual(Object.keys(traceFactsOf(single).timings));
      // Traces come back from the workers too, in dataset order.
      expect(multi.turns.every((t) => t.retrieval?.trace !== undefined)).toBe(true);
      expect(multi.turns.map((t) => t.retrieval?.trace?.retrievedIds)).toEqual(
        single.map((t) => t.retrieval?.trace?.retrievedIds),
      );
    }
    expect(done.slice(0, cases().length)).toEqual(cases().map((_, i) => i + 1));
  }, 120_000);

  it("replays the recorded conversation (run.replay recorded) in the workers as on this thread", async () => {
    // The cases with a recorded assistant message before every follow-up, so the replay modes differ.
    const recorded = cases().map((c) => ({
      ...c,
      turns: c.turns.map((t, i) =>
        i === 0
          ? t
          : { ...t, context: [{ role: "assistant" as const, content: `About your card freeze, turn ${i}.` }] },
      ),
    }));
    const single = await sweepGraphCases({
      ...ownGraphCaseOptions({ ...shareArgs(sys.retriever!), replay: "recorded" }),
      cases: recorded,
      concurrency: 1,
    });
    const own = await runGraphSweep({ ...shareFor(sys.retriever!), cases: recorded, concurrency: 1 });
    const queries = (ts: readonly GraphTurn[]) => ts.map((t) => t.report.trace?.query);
    expect(queries(single.turns).filter((q, i) => q !== queries(own)[i]).length).toBeGreaterThan(0);
    expect(queries(single.turns).some((q) => q?.includes("About your card freeze"))).toBe(true);
    const multi = await inWorkers({
      init: { ...initFor(sys.retrieverRecipe), cases: recorded, replay: "recorded" },
      retriever: sys.retriever!,
      threads: 2,
      concurrency: 2,
      replay: "recorded",
    });
    expect(JSON.stringify(reports(multi.turns))).toBe(JSON.stringify(reports(single.turns)));
  }, 120_000);

  it("puts every thread to work on a sweep long enough to outlast a worker's start", async () => {
    const all = sys.cases;
    const multi = await inWorkers({
      init: { ...initFor(sys.retrieverRecipe), cases: all },
      retriever: sys.retriever!,
      threads: 2,
      concurrency: 1,
    });
    expect(multi.casesByThread.length).toBe(2);
    expect(multi.casesByThread[0]! + multi.casesByThread[1]!).toBe(all.length);
    // The worker ran cases: this thread yields between cases, so the worker's messages are not starved.
    expect(multi.casesByThread[1]).toBeGreaterThan(0);
    expect(multi.turns.length).toBe(all.reduce((n, c) => n + c.turns.length, 0));
  }, 120_000);

  it("gives the same turns over an exact index whose matrices the workers share", async () => {
    const embedder = sys.retriever!.embedder;
    const vectors = await embedder.embedDocuments(sys.chunks.map((c) => c.text));
    const exact = new ExactDenseIndex(
      sys.chunks.map((c, i) => ({ id: c.id, parentId: c.parentId, locale: c.locale, vector: vectors[i]! })),
      { dimension: embedder.dimension },
    );
    const retriever = new HybridRetriever({ chunks: sys.chunks, embedder, dense: exact });
    const single = await runGraphSweep({ ...localFor(retriever), cases: cases(), concurrency: 1 });
    const multi = await inWorkers({
      init: initFor({ ...sys.retrieverRecipe!, dense: exact.share() }),
      retriever,
      threads: 2,
      concurrency: 1,
    });
    expect(multi.casesByThread.length).toBe(2);
    expect(JSON.stringify(reports(multi.turns))).toBe(JSON.stringify(reports(single)));
  }, 120_000);

  it("fails with the worker's own error class, code and exit code when a worker cannot open the retriever", async () => {
    const init = initFor({ ...sys.retrieverRecipe!, embedderId: "not-the-embedder-of-this-run" });
    const err = await inWorkers({ init, retriever: sys.retriever!, threads: 2, concurrency: 1 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(InvalidArgumentError.isInstance(err)).toBe(true);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(exitCodeOf(err)).toBe(2);
    expect((err as Error).message).toContain("not-the-embedder-of-this-run");
  }, 60_000);

  it("rejects a non-positive thread count", () => {
    expect(() =>
      startWorkerLanes({
        workerEntry: SWEEP_WORKER_ENTRY,
        init: initFor(sys.retrieverRecipe),
        threads: 0,
        concurrency: 1,
      }),
    ).toThrow("Expected `threads` to be a positive integer, got 0");
  });
});

describe("serializeError / reviveError", () => {
  it("keeps a retrace error's class, fields and exit code across the thread boundary", () => {
    const original = new DataValidationError([
      { file: "kb/eval/cases.jsonl", line: 3, field: "turns[0].user", message: "must not be empty" },
    ]);
    const revived = reviveError(structuredClone(serializeError(original)));
    expect(revived).toBeInstanceOf(DataValidationError);
    expect(DataValidationError.isInstance(revived)).toBe(true);
    expect(exitCodeOf(revived)).toBe(2);
    expect(revived.message).toBe(original.message);
    expect((revived as DataValidationError).issues).toEqual(original.issues);
  });

  it("turns any other error into a plain Error with its name and message (an internal error: exit 70)", () => {
    const revived = reviveError(structuredClone(serializeError(new TypeError("x is not a function"))));
    expect(revived.name).toBe("TypeError");
    expect(revived.message).toBe("x is not a function");
    expect(exitCodeOf(revived)).toBe(70);
    expect(reviveError(serializeError("a thrown string")).message).toBe("a thrown string");
  });
});
