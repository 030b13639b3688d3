/**
 * A sweep over several threads (`retrace eval --workers N`, docs/throughput.md).
 *
 * One thread runs one graph invocation at a time: LangGraph's per-invocation
 * work, the nodes and the in-process retrieval all share it, so async
 * `--concurrency` interleaves cases but never uses a second core. Here this
 * thread runs cases as the single-thread sweep does while N − 1 worker
 * threads each open the same retriever (`openRetriever`: the same analyzers,
 * embedder, BM25 parameters, and the exact dense index's matrices over
 * shared memory, not copied), build the same graph from the same defaults,
 * and run the cases sent to them with the one case runner of every sweep
 * (`graphCaseRunner`, src/eval/sweep/external-graph.ts). Every thread takes
 * the next case not yet taken (`sweepGraphCases`); results are assembled in
 * dataset order. Every case runs on its own thread id from a fresh state, so
 * which thread ran it cannot change its result: reports are identical at any
 * number of workers (test/eval/parallel.test.ts).
 *
 * A failure in a worker (a case that throws, a worker that cannot start)
 * rejects the sweep with the error rebuilt in this thread: its class, code
 * and exit code survive the thread boundary.
 */
import type { Worker } from "node:worker_threads";
import { moduleWorker } from "../../module-worker.js";
import { HumanMessage } from "@langchain/core/messages";
import * as errors from "../../errors.js";
import { InternalError } from "../../errors.js";
import { buildGraph } from "../../graph/build.js";
import type { TunableConfig } from "../../graph/configuration.js";
import type { SplitPart } from "../../kb/split.js";
import type { Chunk, EvalCase, KnowledgeBase, Locale } from "../../kb/types.js";
import { resolveRetrievalSettings } from "../../graph/configuration.js";
import { retrievalSettingsFor } from "../../nodes/configuration.js";
import type { AnalyzerConfig, Analyzers } from "../../retrieval/analyzer.js";
import type { Retriever } from "../../retrieval/types.js";
import type { EvaluatorSpec } from "../../eval/measures/evaluators.js";
import type { RetrieveAgain } from "../../eval/sweep/graph-counterfactual.js";
import type { CaseLane, GraphSweepOptions, GraphTurn, InputMapper } from "../../eval/sweep/external-graph.js";
import { historyMessages, type Replay } from "../../eval/sweep/replay.js";
import { sweepCheckpointer } from "./reference-serde.js";

/** What one thread's share of a sweep of retrace's own graph is built from (`ownGraphCaseOptions`). */
export interface OwnGraphSweep {
  /** null: the store-less graph. */
  retriever: Retriever | null;
  kb: KnowledgeBase;
  /** The analyzers of the graph's answerer and follow-up detection (the KB's). */
  analyzers: Analyzers;
  /** The graph's configuration defaults (`buildGraph({ defaults })`). */
  defaults: Partial<TunableConfig>;
  evaluators: readonly EvaluatorSpec[];
  knownIds: ReadonlySet<string>;
  partOf?: ReadonlyMap<string, SplitPart>;
  threadPrefix: string;
  /** Cutoff of the evaluators, written into the turn summaries. */
  k: number;
  /** Whether gold-bearing turns are also retrieved with the raw message and the `standalone` oracle (docs/query-attribution.md). Needs a retriever. */
  counterfactual?: boolean;
  /** What earlier turns the graph sees (`run.replay`; default own: src/eval/sweep/replay.ts). */
  replay?: Replay;
}

/**
 * Counterfactual retrieval over the graph's own retriever with the graph's
 * own settings for the turn's locale (what the retrieve node forwards: the
 * defaults' retrieval keys, per-locale overrides applied), so an alternative
 * query is retrieved exactly as the graph's query was. Deterministic.
 */
export function ownCounterfactual(retriever: Retriever, defaults: Partial<TunableConfig>): RetrieveAgain {
  const settings = resolveRetrievalSettings(defaults as Record<string, unknown>);
  return async (query, { locale, turn }) => {
    const trace = await retriever.retrieve(query, {
      ...retrievalSettingsFor(settings, locale),
      turn,
      locale: locale as Locale,
    });
    const parents = trace.stages.parents;
    return parents.length > 0 ? parents.map((r) => r.id) : trace.retrievedIds;
  };
}

/** Each turn's input to retrace's own graph: the user message, and the case's locale (which filters retrieval to that locale's cards). */
export const ownGraphInput: InputMapper = (turn, c) => ({
  messages: [...historyMessages(turn.history), new HumanMessage(turn.user)],
  locale: c.locale,
});

/**
 * How the one sweep reads retrace's own graph: each turn's input with the
 * case's locale, the trace from the returned state (no callback handler per
 * turn), no state size measured (its state is retrace's own).
 */
export const OWN_GRAPH_CAPTURE = {
  input: ownGraphInput,
  traceSource: "state",
  measureState: false,
} as const satisfies Partial<GraphSweepOptions>;

/**
 * One thread's sweep options for retrace's own graph, the main thread's and
 * each worker's alike (`cases` and `concurrency` aside): the graph over
 * `retriever` with a MemorySaver of its own (the sweep deletes each finished
 * case's thread from it), each turn's trace read from the returned state,
 * alternative queries retrieved by the graph's own retriever
 * (docs/throughput.md, docs/query-attribution.md).
 */
export function ownGraphCaseOptions(s: OwnGraphSweep): Omit<GraphSweepOptions, "cases" | "concurrency"> {
  // Values kept by reference, not serialized: a turn costs the same at any position in a long conversation (./reference-serde.ts).
  const checkpointer = sweepCheckpointer();
  return {
    graph: buildGraph({ store: s.retriever, cards: s.kb, analyzers: s.analyzers, defaults: s.defaults, checkpointer }),
    evaluators: s.evaluators,
    knownIds: s.knownIds,
    k: s.k,
    // retrace's own graph returns each turn's trace in state: no callback handler per turn; its state is retrace's own, not measured.
    ...OWN_GRAPH_CAPTURE,
    retrieves: s.retriever !== null,
    threadPrefix: s.threadPrefix,
    ...(s.replay !== undefined ? { replay: s.replay } : {}),
    ...(s.partOf !== undefined ? { partOf: s.partOf } : {}),
    ...(s.counterfactual === true && s.retriever !== null
      ? { counterfactual: true, retrieveAgain: ownCounterfactual(s.retriever, s.defaults) }
      : {}),
  };
}

/** What every worker is started with (plain data, cloned once per worker; the dense matrices are shared, not cloned). */
export interface SweepWorkerInit<Recipe = unknown> {
  /** How the worker opens its retriever (the composition root's RetrieverRecipe, plain data); null: the store-less graph. */
  recipe: Recipe | null;
  chunks: readonly Chunk[];
  kb: KnowledgeBase;
  /** The analyzer overrides of the graph (`Analyzers.overrides`, rebuilt with `createAnalyzers`; the recipe carries the retriever's). */
  analyzers: AnalyzerConfig;
  cases: readonly EvalCase[];
  /** The graph's configuration defaults (`buildGraph({ defaults })`). */
  defaults: Partial<TunableConfig>;
  /** Cutoff of the evaluators. */
  k: number;
  knownIds: readonly string[];
  partOf: readonly (readonly [string, SplitPart])[] | null;
  threadPrefix: string;
  /** Counterfactual retrieval on (OwnGraphSweep.counterfactual): the workers run it too, the same way. */
  counterfactual: boolean;
  /** The per-turn deadline, ms (unset: the sweep's default). */
  turnTimeoutMs?: number;
  /** What earlier turns the graph sees (`run.replay`; unset: own). */
  replay?: Replay;
}

/** Messages from a worker. */
export type WorkerMessage =
  | { type: "ready" }
  | { type: "done"; index: number; result: GraphTurn[] }
  | { type: "failed"; index: number | null; error: SerializedError };

export { reviveError, serializeError, type SerializedError } from "../../thread-errors.js";
import { reviveError, type SerializedError } from "../../thread-errors.js";

interface Pending {
  resolve: (r: GraphTurn[]) => void;
  reject: (e: Error) => void;
}

/** One worker thread and the cases it is running. */
class SweepWorker {
  readonly pending = new Map<number, Pending>();
  private readonly worker: Worker;
  private failure: Error | null = null;
  readonly ready: Promise<void>;

  constructor(
    entry: URL,
    init: SweepWorkerInit,
    readonly id: number,
  ) {
    // `entry`: the composition root's SWEEP_WORKER_ENTRY, compiled or from its TypeScript source (src/module-worker.ts).
    this.worker = moduleWorker(entry, init);
    this.ready = new Promise<void>((resolve, reject) => {
      this.worker.on("message", (m: WorkerMessage) => {
        if (m.type === "ready") resolve();
        else if (m.type === "done") this.settle(m.index, (p) => p.resolve(m.result));
        else if (m.index === null) reject(this.fail(reviveError(m.error)));
        else this.settle(m.index, (p) => p.reject(reviveError(m.error)));
      });
      this.worker.on("error", (e) => reject(this.fail(e instanceof Error ? e : new InternalError(String(e)))));
      this.worker.on("exit", (code) =>
        reject(
          this.fail(
            new InternalError(`sweep worker ${id} exited (code ${code}) with ${this.pending.size} case(s) unfinished`),
          ),
        ),
      );
    });
    // A startup failure is reported through `ready` and every pending case; never an unhandled rejection.
    this.ready.catch(() => {});
  }

  run(index: number): Promise<GraphTurn[]> {
    if (this.failure !== null) return Promise.reject(this.failure);
    return new Promise<GraphTurn[]>((resolve, reject) => {
      this.pending.set(index, { resolve, reject });
      this.worker.postMessage({ type: "run", index });
    });
  }

  terminate(): Promise<number> {
    this.worker.removeAllListeners("exit");
    return this.worker.terminate();
  }

  private settle(index: number, f: (p: Pending) => void): void {
    const p = this.pending.get(index);
    if (p === undefined) return;
    this.pending.delete(index);
    f(p);
  }

  /** The first failure of this worker: every pending case is rejected with it. */
  private fail(e: Error): Error {
    if (this.failure === null) this.failure = e;
    for (const p of this.pending.values()) p.reject(this.failure);
    this.pending.clear();
    return this.failure;
  }
}

export interface WorkerLanesOptions {
  init: SweepWorkerInit;
  /** The worker threads' entry module (the composition root's SWEEP_WORKER_ENTRY): it opens the retriever `init.recipe` describes. */
  workerEntry: URL;
  /** Threads running cases (≥ 1): this one and `threads − 1` workers. */
  threads: number;
  /** Cases in flight per thread (≥ 1). */
  concurrency: number;
}

/**
 * The worker threads of a sweep of `init.cases` over `threads` threads, as
 * lanes of the one sweep (`sweepGraphCases({ lanes })`): this thread starts
 * at once, each worker joins as soon as it has opened its retriever, and
 * every thread takes the next case until none is left. No worker for a sweep
 * this thread alone can cover (one case per lane at most). `close`
 * terminates them. The same turns as a sweep on this thread alone.
 */
export function startWorkerLanes(opts: WorkerLanesOptions): { lanes: CaseLane[]; close: () => Promise<void> } {
  for (const [name, n] of [
    ["threads", opts.threads],
    ["concurrency", opts.concurrency],
  ] as const) {
    if (!Number.isInteger(n) || n < 1) throw new errors.InvalidArgumentError(name, "a positive integer", n);
  }
  const workers = Math.max(0, Math.min(opts.threads, Math.ceil(opts.init.cases.length / opts.concurrency)) - 1);
  const pool = Array.from({ length: workers }, (_, i) => new SweepWorker(opts.workerEntry, opts.init, i + 1));
  return {
    lanes: pool.map((w) => ({ ready: w.ready, run: (i: number) => w.run(i), thread: w.id })),
    close: async () => {
      await Promise.all(pool.map((w) => w.terminate()));
    },
  };
}
