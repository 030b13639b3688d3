/**
 * The options and results of a graph sweep (./external-graph.ts): what the
 * sweep is given (`GraphSweepOptions`), where it reads each turn's retrieval
 * (`TraceSource`), its phases' wall time, the lanes of other threads, and one
 * swept turn (`GraphTurn`). Re-exported by ./external-graph.ts.
 */
import type { EvalCase } from "../../kb/types.js";
import type { CapturedRetrieval, IdOptions, RetrievalCall } from "./capture.js";
import type { EvaluatorSpec } from "../measures/evaluators.js";
import type { Replay } from "./replay.js";
import type { RetrieveAgain } from "./graph-counterfactual.js";
import type { TurnReport } from "../report/types.js";
import type { SplitPart } from "../../kb/split.js";
import type { EvaluableGraph, InputMapper } from "./graph-module.js";

export interface GraphSweepOptions extends IdOptions {
  graph: EvaluableGraph;
  cases: readonly EvalCase[];
  evaluators: readonly EvaluatorSpec[];
  /** Ids of every KB card (or catalog entry): a scored id outside them is recorded per turn (`captured.unknownIds`; none recorded when empty). */
  knownIds: ReadonlySet<string>;
  /** k written into the turn summaries (the evaluators carry their own k). */
  k: number;
  /** Maps a turn to the graph input; default `{ messages: [HumanMessage(turn.user)] }`. */
  input?: InputMapper;
  /** Which top-level retriever calls are scored (default "last": the last step, all its calls; ./capture.ts). */
  retrievalCall?: RetrievalCall;
  /** Cases in flight (default DEFAULT_CONCURRENCY, as the built-in sweep). */
  concurrency?: number;
  /** Per-turn deadline, ms (default DEFAULT_TURN_TIMEOUT_S × 1000; `--turn-timeout`): a turn still running then is given up (./turn-guard.ts). */
  turnTimeoutMs?: number;
  /** Thread ids are `<prefix><case id>` (`<prefix><case id>#<turn>` with `replay: "recorded"`). */
  threadPrefix?: string;
  /**
   * What earlier turns the graph sees (./replay.ts, docs/configuration.md#replay-own-or-recorded-history):
   * `own` (default) its own answers, the case's turns in order on one thread; `recorded` the case's
   * recorded conversation, each turn on a fresh thread fed it (the input gets `InputTurn.history`).
   */
  replay?: Replay;
  /** Extra `configurable` for every invocation. */
  configurable?: Record<string, unknown>;
  /**
   * Query attribution (docs/query-attribution.md, "`--graph`"): after each
   * gold-bearing turn, the scored call's retriever is invoked again with the
   * raw message and the `standalone` question (./graph-counterfactual.ts);
   * the turn gets `queries` (or `queriesOff`, why not) and
   * `counterfactualCalls`, its own scores unchanged. Costs extra retriever
   * calls; the retriever must be side-effect free. Default off.
   */
  counterfactual?: boolean;
  /**
   * With `counterfactual`: the BaseRetriever classes whose instances are
   * recorded besides retrace's own @langchain/core copy (`baseRetrieversFor(moduleFile)`:
   * the copies the graph module resolves). Default: retrace's own only.
   */
  retrieverBases?: readonly unknown[];
  /**
   * Where each turn's retrieval is read (docs/evaluate-your-graph.md, "Where
   * the trace is read"): `callbacks` (default) a `RetrieverCapture` handed
   * to every invocation, recording retriever runs and retrace's
   * `retrieval_trace` events; `state` the turn's trace in the `retrieval`
   * channel of the state `invoke` returns (any graph that declares retrace's
   * RetrievalAnnotation: the retrieve node writes the one trace both ways).
   * No callback handler is attached then, so LangChain's per-runnable
   * callback work is not paid on every turn (docs/throughput.md).
   */
  traceSource?: TraceSource;
  /**
   * With `counterfactual`: retrieval with an alternative query that the
   * graph's source provides itself (retrace's own graph: its retriever with
   * the graph's settings), used for turns scored from retrace's trace
   * instead of re-invoking a LangChain retriever (./graph-counterfactual.ts).
   */
  retrieveAgain?: RetrieveAgain;
  /** Part of each case id in the KB's committed split (docs/holdout.md): each turn report then carries its `part`. */
  partOf?: ReadonlyMap<string, SplitPart>;
  /** False: the graph retrieves nothing by design (retrace's store-less graph): a turn without retrieval is not measured, never a miss. Default true. */
  retrieves?: boolean;
  /** False: no turn's state size is measured (`stateBytes`; default true). */
  measureState?: boolean;
  /** Wall time of the graph invocations and of the evaluators, added to as the sweep runs (the report's `timings.phases`). */
  phases?: SweepPhases;
  /** Executors of cases besides this thread's lanes (worker threads: src/app/own-graph/parallel.ts); each takes the next case not yet taken once it is ready. */
  lanes?: readonly CaseLane[];
  onCaseDone?: (done: number, total: number) => void;
  /**
   * Told when a turn's run starts (its input mapped, then the graph invoked)
   * and when it ends: the watch of the thread running a user's graph, which
   * ends that thread when a turn runs past its deadline without yielding
   * (src/app/graph-isolation.ts).
   */
  onTurn?: (where: string, phase: "start" | "end") => void;
}

/** How a sweep reads each turn's retrieval (GraphSweepOptions.traceSource). */
export type TraceSource = "callbacks" | "state";

/** Wall time (ms) summed over a sweep's graph invocations and evaluator runs. */
export interface SweepPhases {
  graph: number;
  evaluate: number;
}

/** One executor of cases besides this thread (a worker thread): it runs a case by its index once `ready` resolves. */
export interface CaseLane {
  ready?: Promise<void>;
  run(index: number): Promise<GraphTurn[]>;
  /** Its number in the sweep's `casesByThread` (this thread is 0). */
  thread: number;
}

/** One turn of a graph sweep: the report plus the raw capture (for `retrace trace`). */
export interface GraphTurn {
  report: TurnReport;
  retrieval: CapturedRetrieval | null;
}
