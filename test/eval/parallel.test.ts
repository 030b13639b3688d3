/**
 * The sweep over worker threads (src/app/own-graph/parallel.ts): real worker threads
 * running the real graph over the same retriever; the turns must equal the
 * single-thread sweep's, whatever thread ran each case. Failures in a worker
 * come back as the same retrace error class and exit code.
 */
import path from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DataValidationError, exitCodeOf, InvalidArgumentError } from "../../src/errors.js";
import {
  ownCounterfactual,
  ownGraphCaseOptions,
  reviveError,
  runSweepInWorkers,
  serializeError,
  type SweepWorkerInit,
} from "../../src/app/own-graph/parallel.js";
import { runSweep, type CaseRunOptions } from "../../src/app/own-graph/runner.js";
import { evaluatorsFor } from "../../src/eval/sweep/storeless.js";
import { buildGraph } from "../../src/graph/build.js";
import { ExactDenseIndex } from "../../src/retrieval/exact-dense.js";
import { HybridRetriever } from "../../src/retrieval/hybrid.js";
import type { Retriever } from "../../src/retrieval/types.js";
import { openSystem, SWEEP_WORKER_ENTRY, type RetraceSystem } from "../../src/system.js";
import { SHIPPED_KB } from "../helpers/fixtures.js";

const defaults = { k: 5, mode: "hybrid" as const, rerank: false };

describe("runSweepInWorkers", () => {
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
    traces: true,
    // Counterfactual retrieval runs in the workers too (docs/query-attribution.md): the same attributions at any thread count.
    counterfactual: true,
  });
  // The single-thread reference, written out here; the parallel runs take this thread's share from ownGraphCaseOptions, as eval does.
  const localFor = (retriever: Retriever): CaseRunOptions => {
    const checkpointer = new MemorySaver();
    return {
      graph: buildGraph({ store: retriever, cards: sys.kb, defaults, checkpointer }),
      evaluators: evaluatorsFor({ k: 5, storeBacked: true }),
      knownIds: new Set(sys.kb.byId.keys()),
      storeBacked: true,
      traceSource: "state",
      partOf: sys.split!.partOf,
      threadPrefix: "p:",
      releaseThread: (id) => checkpointer.deleteThread(id),
      durability: "exit",
      counterfactual: ownCounterfactual(retriever, defaults),
    };
  };

  const shareFor = (retriever: Retriever) =>
    ownGraphCaseOptions({
      retriever,
      kb: sys.kb,
      analyzers: sys.analyzers,
      defaults,
      evaluators: evaluatorsFor({ k: 5, storeBacked: true }),
      knownIds: new Set(sys.kb.byId.keys()),
      partOf: sys.split!.partOf,
      threadPrefix: "p:",
      keepTraces: true,
      counterfactual: true,
    });

  it("gives the single-thread sweep's turns at 2 and 3 threads (workers rebuild the memory store's index)", async () => {
    const local = localFor(sys.retriever!);
    const single = await runSweep({ ...local, cases: cases(), concurrency: 1 });
    expect(single.turns.length).toBeGreaterThan(80);
    // Every gold-bearing turn is attributed; some follow-ups were retrieved with their standalone oracle.
    expect(single.turns.filter((t) => t.gold.length > 0).every((t) => t.queries !== undefined)).toBe(true);
    expect(single.turns.some((t) => t.queries?.standalone !== undefined)).toBe(true);
    const done: number[] = [];
    for (const threads of [2, 3]) {
      const multi = await runSweepInWorkers({
        workerEntry: SWEEP_WORKER_ENTRY,
        init: initFor(sys.retrieverRecipe),
        threads,
        concurrency: 2,
        local: shareFor(sys.retriever!),
        onCaseDone: (d) => done.push(d),
      });
      expect(JSON.stringify(multi.turns)).toBe(JSON.stringify(single.turns));
      expect(multi.retrieval).toEqual(single.retrieval);
      expect(Object.keys(multi.timings)).toEqual(Object.keys(single.timings));
      // Traces come back from the workers too, in dataset order.
      expect(multi.traces.all().map((t) => t.trace.retrievedIds)).toEqual(
        single.traces.all().map((t) => t.trace.retrievedIds),
      );
    }
    expect(done.slice(0, cases().length)).toEqual(cases().map((_, i) => i + 1));
  }, 120_000);

  it("puts every thread to work on a sweep long enough to outlast a worker's start", async () => {
    const all = sys.cases;
    const multi = await runSweepInWorkers({
      workerEntry: SWEEP_WORKER_ENTRY,
      init: { ...initFor(sys.retrieverRecipe), cases: all, traces: false },
      threads: 2,
      concurrency: 1,
      local: shareFor(sys.retriever!),
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
    const single = await runSweep({ ...localFor(retriever), cases: cases(), concurrency: 1 });
    const multi = await runSweepInWorkers({
      workerEntry: SWEEP_WORKER_ENTRY,
      init: { ...initFor({ ...sys.retrieverRecipe!, dense: exact.share() }), traces: false },
      threads: 2,
      concurrency: 1,
      local: shareFor(retriever),
    });
    expect(JSON.stringify(multi.turns)).toBe(JSON.stringify(single.turns));
  }, 120_000);

  it("fails with the worker's own error class, code and exit code when a worker cannot open the retriever", async () => {
    const init = initFor({ ...sys.retrieverRecipe!, embedderId: "not-the-embedder-of-this-run" });
    const err = await runSweepInWorkers({
      workerEntry: SWEEP_WORKER_ENTRY,
      init,
      threads: 2,
      concurrency: 1,
      local: shareFor(sys.retriever!),
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(InvalidArgumentError.isInstance(err)).toBe(true);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(exitCodeOf(err)).toBe(2);
    expect((err as Error).message).toContain("not-the-embedder-of-this-run");
  }, 60_000);

  it("rejects a non-positive thread count", async () => {
    await expect(
      runSweepInWorkers({
        workerEntry: SWEEP_WORKER_ENTRY,
        init: initFor(sys.retrieverRecipe),
        threads: 0,
        concurrency: 1,
        local: shareFor(sys.retriever!),
      }),
    ).rejects.toThrow("Expected `threads` to be a positive integer, got 0");
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
