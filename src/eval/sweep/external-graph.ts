/**
 * Evaluate any LangGraph.js graph (docs/evaluate-your-graph.md): load it from
 * a module (`file.ts#exportName`, a compiled graph or a possibly async
 * factory), drive each case turn by turn on its own thread, capture every
 * retriever run with `RetrieverCapture`, map documents to card ids and score
 * the chosen call per turn.
 *
 * A turn whose run throws is recorded as an error (not a miss), and so is a
 * turn given up at its deadline or stalled (./turn-guard.ts). A turn with no
 * retriever run is "no retrieval", judged by its gold: with empty gold it is
 * fine (none needed), a gold-bearing one is scored as a miss (hit, recall,
 * nDCG 0) and labelled so. Both are counted (./graph-checks.ts:
 * `graphRunFacts`, `graphGateFailures`).
 *
 * With `counterfactual`, each gold-bearing turn is also attributed after it is
 * scored: the scored call's retriever is invoked again with the raw message
 * and the `standalone` question (./graph-counterfactual.ts; the instance
 * recorded by ./retriever-instances.ts while the sweep runs).
 */
import type { DocumentInterface } from "@langchain/core/documents";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { MemorySaver } from "@langchain/langgraph";
import { GraphInputError, InvalidArgumentError } from "../../errors.js";
import { isToLabel, type EvalCase, type EvalTurn } from "../../kb/types.js";
import { buildWith, importUserModule, userFunction } from "../../user-module.js";
import {
  capturedGoldPositions,
  RetrieverCapture,
  stateTraceRuns,
  scoredDocuments,
  selectRetrieval,
  type CapturedDocument,
  type CapturedRetrieval,
  type CapturedStage,
  type IdOptions,
  type RetrievalCall,
  type RetrieverRuns,
} from "./capture.js";
import { runEvaluators, type EvaluatorSpec } from "../measures/evaluators.js";
import { METRICS } from "../measures/metrics.js";
import { DEFAULT_CONCURRENCY, runQueue, turnArtifacts, turnReport } from "./turns.js";
import { historyMessages, recordedHistory, type RecordedMessage, type Replay } from "./replay.js";
import { DEFAULT_TURN_TIMEOUT_S, invokeTurn, STALLED_MESSAGE, stateSize, TurnGuard } from "./turn-guard.js";
import { graphTurnQueries, retrieveAgainQueries, type RetrieveAgain } from "./graph-counterfactual.js";
import { recordRetrieverInvocations, type RetrieverRecorder } from "./retriever-instances.js";
import { log } from "../../log.js";
import { summarizeTrace } from "../report/trace-summary.js";
import { NO_RETRIEVAL } from "../report/graph-report.js";
import type { TurnReport } from "../report/types.js";
import type { SplitPart } from "../../kb/split.js";
export { graphGateFailures, type GraphGateOptions } from "./graph-checks.js";

export const DEFAULT_GRAPH_EXPORT = "graph";

/** What the runner needs of a compiled graph. */
export interface EvaluableGraph {
  invoke(input: unknown, config?: RunnableConfig): Promise<unknown>;
  checkpointer?: unknown;
  channels?: Record<string, unknown>;
}

/** A turn handed to an `--input` mapper: the case's turn without its `context` (the labeller's view of the conversation; docs/synthetic-cases.md). */
export interface InputTurn extends Omit<EvalTurn, "context"> {
  /** 0-based turn index. */
  index: number;
  /**
   * With `run.replay: recorded` only (./replay.ts): the recorded conversation
   * before this turn, oldest first — each earlier user message and the
   * assistant's recorded messages (`context`). The turn runs on a fresh thread,
   * so the graph sees what the input sends: the default input sends these as
   * messages on the `messages` channel before the turn's own. Absent with `own`.
   */
  history?: RecordedMessage[];
}

export type InputMapper = (turn: InputTurn, evalCase: EvalCase) => unknown;

/** `./agent.ts#myGraph` → file and export name (default `graph`). */
export function parseModuleSpec(spec: string, defaultExport: string): { file: string; exportName: string } {
  const hash = spec.lastIndexOf("#");
  if (hash < 0) return { file: spec, exportName: defaultExport };
  const exportName = spec.slice(hash + 1);
  return { file: spec.slice(0, hash), exportName: exportName === "" ? defaultExport : exportName };
}

/** True for a compiled LangGraph graph (a Pregel instance: invoke, stream, channels, nodes). */
export function isCompiledGraph(x: unknown): x is EvaluableGraph {
  if (typeof x !== "object" || x === null) return false;
  const g = x as Record<string, unknown>;
  return (
    typeof g.invoke === "function" &&
    typeof g.stream === "function" &&
    typeof g.channels === "object" &&
    g.channels !== null &&
    typeof g.nodes === "object"
  );
}

export interface LoadedGraph {
  graph: EvaluableGraph;
  file: string;
  exportName: string;
  /** True when the runner added an in-memory checkpointer. */
  addedCheckpointer: boolean;
  /** The module's exports (where `--counterfactual` also looks for the graph's retriever classes: ./retriever-instances.ts). */
  exports: Record<string, unknown>;
}

/**
 * Loads `file[#export]`: the export must be a compiled graph or a (possibly
 * async) factory returning one. Adds a `MemorySaver` checkpointer when the
 * graph has none (each case needs its thread's history across turns).
 * Every failure is a GraphInputError (exit 2) naming the file and the export.
 */
export async function loadGraph(spec: string): Promise<LoadedGraph> {
  const { file, exportName } = parseModuleSpec(spec, DEFAULT_GRAPH_EXPORT);
  const where = `--graph ${file}#${exportName}`;
  const { exports: mod } = await importUserModule(file, "--graph", { exportName });
  if (!(exportName in mod) || mod[exportName] === undefined) {
    const names = Object.keys(mod).sort();
    throw new GraphInputError(
      `${where}: the module has no export "${exportName}"; it exports ${names.length === 0 ? "nothing" : names.join(", ")}`,
    );
  }
  const exported: unknown = mod[exportName];
  const value = await buildWith(
    exported,
    typeof exported === "function" && !isCompiledGraph(exported),
    where,
    "the graph",
  );
  if (!isCompiledGraph(value)) {
    const hint =
      typeof value === "object" && value !== null && typeof (value as { compile?: unknown }).compile === "function"
        ? " (a StateGraph that is not compiled: export graph.compile())"
        : "";
    throw new GraphInputError(
      `${where}: expected a compiled LangGraph graph or a factory returning one, got ${value === null ? "null" : typeof value}${hint}`,
    );
  }
  const graph = value;
  let addedCheckpointer = false;
  if (graph.checkpointer === undefined || graph.checkpointer === null) {
    graph.checkpointer = new MemorySaver();
    addedCheckpointer = true;
  }
  return { graph, file, exportName, addedCheckpointer, exports: mod };
}

/**
 * Loads a function export (`--input`, `--id-map`): `file[#name]`, default
 * export `default`. With `on` (what a call was on, for messages), a throw of
 * the function when called is a GraphInputError naming the module
 * (`userFunction`).
 */
export async function loadFunction<F extends (...args: never[]) => unknown>(
  spec: string,
  option: string,
  on?: (...args: Parameters<F>) => string,
): Promise<F> {
  const { file, exportName } = parseModuleSpec(spec, "default");
  const { exports: mod } = await importUserModule(file, option, { exportName });
  const fn = mod[exportName];
  if (typeof fn !== "function")
    throw new GraphInputError(
      `${option} ${file}#${exportName}: expected the export "${exportName}" to be a function, got ${typeof fn}`,
    );
  return (
    on === undefined
      ? fn
      : userFunction(fn as (...args: Parameters<F>) => ReturnType<F>, `${option} ${file}#${exportName}`, on)
  ) as F;
}

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

function lastAnswer(state: unknown): string {
  const s = (state ?? {}) as Record<string, unknown>;
  if (typeof s.answer === "string") return s.answer;
  const messages = Array.isArray(s.messages) ? (s.messages as BaseMessage[]) : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    // By LangChain's message brand and type, whichever @langchain/core copy made it (docs/langchain-integration.md); never a method call on a plain object.
    if (m !== undefined && AIMessage.isInstance(m))
      return typeof m.content === "string" ? m.content : JSON.stringify(m.content);
  }
  return "";
}

/** Default input: the turn as a human message on the `messages` channel (after the recorded conversation, `turn.history`, with `run.replay: recorded`). */
export function defaultInput(turn: InputTurn): unknown {
  return { messages: [...historyMessages(turn.history), new HumanMessage(turn.user)] };
}

const RETRIEVAL_KEYS: ReadonlySet<string> = new Set(METRICS.map((m) => m.key));

/** A captured list as the report keeps it (the HTML turn view shows it under its step). */
const capturedList = (st: CapturedStage) => ({
  key: st.key,
  role: st.role,
  ids: st.ids,
  error: st.error,
  ...(st.step !== undefined ? { step: st.step } : {}),
});

/** `{ documents }` of a turn's scored top-k when any of them has a page content, else nothing. */
function documentsOf(
  topK: readonly string[],
  texts: Record<string, string[]> | undefined,
): { documents?: CapturedDocument[] } {
  const documents = texts === undefined ? [] : scoredDocuments(topK, texts);
  return documents.length > 0 ? { documents } : {};
}

/** What running one case needs besides the sweep options. */
interface CaseContext {
  guard: TurnGuard;
  timeoutMs: number;
  /** Deletes a finished case's thread from the checkpointer (an in-memory one), or nothing. */
  release: (threadId: string) => Promise<void>;
  /** With counterfactual retrieval: which retriever instance ran each captured run. */
  retrievers?: RetrieverRecorder;
  /** With counterfactual retrieval: each case's first gold-bearing turn with a scored retriever run, as checked (`Reinvocable`). */
  reinvocable?: Reinvocable;
}

/**
 * `--counterfactual` on a graph none of whose scored retrievers can be
 * re-invoked is exit 2, decided by the first gold-bearing turn with a scored
 * LangChain retriever run in dataset order (not the first to finish: the
 * verdict is the same at any concurrency). Each case reports its own first
 * such turn (or that it has none); as soon as every case before the
 * deciding one has reported, the verdict is known, and a refusal stops the
 * run from whichever case completes the picture.
 */
class Reinvocable {
  /** Per case index: undefined while pending, null when the case had no such turn, else the turn's verdict. */
  private readonly verdicts: ({ ok: boolean; message: string } | null | undefined)[];
  private decided = false;
  constructor(cases: number) {
    this.verdicts = new Array(cases).fill(undefined);
  }

  /** Whether case `index` still needs its first such turn checked. */
  pending(index: number): boolean {
    return !this.decided && this.verdicts[index] === undefined;
  }

  /** Case `index`'s verdict (null: it finished with no such turn); throws the refusal once it is decided. */
  report(index: number, verdict: { ok: boolean; message: string } | null): void {
    if (this.decided || this.verdicts[index] !== undefined) return;
    this.verdicts[index] = verdict;
    for (const v of this.verdicts) {
      if (v === undefined) return; // an earlier case has not reported: not decided yet
      if (v === null) continue;
      this.decided = true;
      if (!v.ok) throw new GraphInputError(v.message);
      return;
    }
  }
}

/** The verdict of a turn for `Reinvocable`, or undefined when the turn does not decide (no gold, no scored LangChain run). */
function reinvocableVerdict(
  turn: EvalTurn,
  retrieval: CapturedRetrieval | null,
  capture: RetrieverCapture,
  where: string,
): { ok: boolean; message: string } | undefined {
  if (
    (turn.must_cite_one_of ?? []).length === 0 ||
    retrieval === null ||
    retrieval.source === "retrace" ||
    retrieval.scoredRunIds.length === 0
  )
    return undefined;
  const ok = retrieval.scoredRunIds.some((id) => capture.instanceOf(id) !== undefined);
  return {
    ok,
    message:
      `--counterfactual: the graph's scored retriever ${[...new Set(retrieval.retrievers)].join(", ")} cannot be re-invoked (${where}, the first gold-bearing turn with a retriever run): ` +
      "no BaseRetriever.invoke retrace could wrap ran it — a retriever of a @langchain/core copy retrace did not find, a class whose invoke does not call BaseRetriever's, or a run reported through callbacks alone — " +
      "so no turn could be attributed (docs/query-attribution.md); run without --counterfactual",
  };
}

/** A turn without its `context` (what a graph may see of it). */
function graphTurn(t: EvalTurn): Omit<EvalTurn, "context"> {
  const { context: _context, ...rest } = t;
  return rest;
}

/** What a turn's outcome was, for `scoreCapturedTurn`: the run's error (and why it was given up), else its final state. */
export interface TurnOutcome {
  error?: string;
  givenUp?: TurnReport["givenUp"];
  /** The graph's final state (`answer`, `citedIds`, `refused`, `messages` read from it). */
  state?: unknown;
  /** The state's serialized size (a `--graph` run's --max-state-mb check), recorded on a turn that did not fail. */
  stateBytes?: number;
}

/**
 * One turn scored from its capture — the one step a `--graph` run and a
 * recorded-traces run share (docs/recorded-traces.md): the scored
 * retrieval chosen by `--retrieval-call` (`selectRetrieval`), its top k
 * scored by the evaluators, and the report's `trace` and `captured` views
 * (stages, the scored documents' text). A failed turn is an error turn
 * (nothing captured before the failure is scored); a turn with no retriever
 * run is "no retrieval" (a miss when gold-bearing).
 */
export async function scoreCapturedTurn(
  c: EvalCase,
  index: number,
  capture: RetrieverRuns,
  outcome: TurnOutcome,
  opts: Pick<
    GraphSweepOptions,
    "evaluators" | "knownIds" | "k" | "retrievalCall" | "traceSource" | "phases" | "retrieves"
  > & {
    ids: IdOptions;
  },
  where: string,
): Promise<GraphTurn> {
  const t = c.turns[index]!;
  const { error, givenUp, state } = outcome;
  // Retrieval captured before a failure is not scored: the turn is an error.
  const retrieval =
    error === undefined
      ? selectRetrieval(capture, opts.retrievalCall ?? "last", opts.ids, where, { texts: true })
      : null;
  // A graph with no retrieval at all (retrace's store-less graph) measures none: not a miss.
  const noRetrieval = error === undefined && retrieval === null && opts.retrieves !== false;
  // What is scored at k: the chosen calls' cards, cut at k (the stages keep the full lists); a turn with no retriever run retrieved nothing.
  const retrievedIds = retrieval !== null ? retrieval.retrievedIds.slice(0, opts.k) : noRetrieval ? [] : null;
  const s = (state ?? {}) as Record<string, unknown>;
  const artifacts = turnArtifacts(c, index, retrievedIds, {
    citedIds: Array.isArray(s.citedIds) ? (s.citedIds as string[]) : [],
    answer: error === undefined ? lastAnswer(state) : "",
    refused: s.refused === true,
    knownIds: opts.knownIds,
  });
  // A turn to label (no gold, no expect) runs but scores nothing (docs/synthetic-cases.md#importing-conversations).
  const t0 = performance.now();
  let results = error === undefined && !isToLabel(t) ? await runEvaluators(opts.evaluators, artifacts) : [];
  if (opts.phases !== undefined) opts.phases.evaluate += performance.now() - t0;
  // A gold-bearing turn with no retrieval is a miss, and says why in every view that shows the comment.
  if (noRetrieval)
    results = results.map((r) =>
      RETRIEVAL_KEYS.has(r.key)
        ? { ...r, comment: `${NO_RETRIEVAL} (the turn made no retriever run): ${r.comment ?? ""}`.trimEnd() }
        : r,
    );
  const report = turnReport(c, artifacts, results);
  if (error !== undefined) {
    report.error = error;
    if (givenUp !== undefined) report.givenUp = givenUp;
  } else {
    if (noRetrieval) report.noRetrieval = true;
    if (outcome.stateBytes !== undefined) report.stateBytes = outcome.stateBytes;
  }
  if (retrieval !== null) {
    if (retrieval.trace !== undefined) {
      report.trace = { ...summarizeTrace(retrieval.trace, t.must_cite_one_of ?? []), retrievedIds: retrievedIds ?? [] };
    } else {
      report.trace = {
        query: retrieval.query,
        k: opts.k,
        retrievedIds: retrievedIds ?? [],
        goldPositions: capturedGoldPositions(retrieval.stages, t.must_cite_one_of ?? []),
      };
    }
    // A trace read from the returned state is the whole capture: its stages are in `trace` (docs/evaluate-your-graph.md).
    if (opts.traceSource !== "state")
      report.captured = {
        source: retrieval.source,
        retrievers: retrieval.retrievers,
        topLevelRuns: retrieval.topLevelRuns,
        steps: retrieval.steps,
        stages: retrieval.stages.map(capturedList),
        ...(retrieval.unscored.length > 0 ? { unscored: retrieval.unscored.map(capturedList) } : {}),
        noChildRuns: retrieval.noChildRuns,
        ...(opts.knownIds.size > 0 ? { unknownIds: (retrievedIds ?? []).filter((id) => !opts.knownIds.has(id)) } : {}),
        // The scored top-k's page contents, bounded (docs/schema-versions.md): what the HTML turn view shows.
        ...documentsOf(retrievedIds ?? [], retrieval.texts),
      };
  }
  return { report, retrieval };
}

async function runCase(
  c: EvalCase,
  caseIndex: number,
  opts: GraphSweepOptions,
  ctx: CaseContext,
): Promise<GraphTurn[]> {
  const recorded = opts.replay === "recorded";
  // Replayed on the recorded conversation, the case keeps its `context` (what the graph is fed); else the graph never sees it.
  const graphCase: EvalCase = recorded ? c : { ...c, turns: c.turns.map(graphTurn) };
  const caseThread = `${opts.threadPrefix ?? ""}${c.id}`;
  const out: GraphTurn[] = [];
  const mapInput = opts.input ?? defaultInput;
  const ids: IdOptions = {
    ...(opts.idKey !== undefined ? { idKey: opts.idKey } : {}),
    ...(opts.idMap !== undefined ? { idMap: opts.idMap } : {}),
  };
  const fromState = opts.traceSource === "state";
  for (const [index, t] of c.turns.entries()) {
    // Yield to the event loop before each turn: a graph whose retrieval runs in process (retrace's own) settles on
    // microtasks alone, and a signal's handler (Ctrl-C: src/interrupt.ts) or a worker's message waits for the next
    // turn of the event loop (docs/reliability.md, "Every sweep stops when asked").
    await new Promise<void>((resolve) => setImmediate(resolve));
    const where = `case ${c.id} turn ${index}`;
    // Recorded replay: a fresh thread a turn, fed the recorded conversation up to it.
    const threadId = recorded ? `${caseThread}#${index}` : caseThread;
    const live = fromState
      ? undefined
      : new RetrieverCapture(ctx.retrievers !== undefined ? { retrievers: ctx.retrievers } : {});
    let state: unknown = undefined;
    let error: string | undefined;
    let givenUp: TurnReport["givenUp"];
    opts.onTurn?.(where, "start");
    const input = mapInput(
      { ...graphTurn(t), index, ...(recorded ? { history: recordedHistory(c, index) } : {}) },
      graphCase,
    );
    // durability "exit": one checkpoint when the turn ends, not one per step — the same nodes on the same state, about half
    // LangGraph's cost per invocation (docs/throughput.md), and an aborted turn leaves nothing half-written on the thread.
    const configurable = { ...opts.configurable, thread_id: threadId };
    const config: RunnableConfig & { durability: "exit" } = {
      configurable,
      ...(live !== undefined ? { callbacks: [live] } : {}),
      durability: "exit",
    };
    const t0 = performance.now();
    const outcome = await invokeTurn((c) => opts.graph.invoke(input, c), config, {
      timeoutMs: ctx.timeoutMs,
      guard: ctx.guard,
      where,
    });
    opts.onTurn?.(where, "end");
    if (opts.phases !== undefined) opts.phases.graph += performance.now() - t0;
    if (outcome.kind === "done") state = outcome.state;
    else error = outcome.error;
    // Given up (deadline, stalled): an error turn like one that threw; the case goes on with its next turn.
    if (outcome.kind === "stuck") givenUp = outcome.why;
    // The turn's state size, for the report's --max-state-mb check (./graph-checks.ts).
    const stateBytes = error === undefined && opts.measureState !== false ? stateSize(state) : undefined;
    const capture = live ?? stateTraceRuns(state, index);
    const { report, retrieval } = await scoreCapturedTurn(
      c,
      index,
      capture,
      {
        ...(error !== undefined ? { error } : {}),
        ...(givenUp !== undefined ? { givenUp } : {}),
        state,
        ...(stateBytes !== undefined ? { stateBytes } : {}),
      },
      { ...opts, ids },
      where,
    );
    // After the turn is scored: the counterfactual queries (never change the turn's scores; ./graph-counterfactual.ts).
    if (opts.counterfactual === true && !isToLabel(t)) {
      if (opts.retrieveAgain !== undefined && retrieval?.trace !== undefined && error === undefined) {
        // The source retrieves again itself (retrace's own graph): the trace's own lists, the same settings.
        const queries = await retrieveAgainQueries(c, index, retrieval.trace, opts.retrieveAgain);
        if (queries !== null) report.queries = queries;
      } else if (ctx.retrievers !== undefined && live !== undefined) {
        if (ctx.reinvocable?.pending(caseIndex) === true && error === undefined) {
          const verdict = reinvocableVerdict(t, retrieval, live, where);
          if (verdict !== undefined) ctx.reinvocable.report(caseIndex, verdict);
        }
        const cf = await graphTurnQueries(t, retrieval, live, error, {
          ids,
          k: opts.k,
          timeoutMs: ctx.timeoutMs,
          guard: ctx.guard,
          configurable,
          where,
        });
        if (cf !== null) {
          if (cf.queries !== undefined) report.queries = cf.queries;
          if (cf.off !== undefined) report.queriesOff = cf.off;
          report.counterfactualCalls = cf.calls;
        }
      }
    }
    const part = opts.partOf?.get(c.id);
    if (part !== undefined) report.part = part;
    out.push({ report, retrieval });
    if (recorded) await ctx.release(threadId);
  }
  // A sweep never returns to a thread: its checkpoints go (memory bounded by the cases in flight, not the cases run).
  if (!recorded) await ctx.release(caseThread);
  ctx.reinvocable?.report(caseIndex, null); // no turn of this case decided: the verdict waits for a later case
  return out;
}

/** True for LangGraph's in-memory checkpointer (whose finished threads a sweep deletes). */
function isMemorySaver(x: unknown): x is MemorySaver {
  return (
    x instanceof MemorySaver ||
    (typeof x === "object" &&
      x !== null &&
      x.constructor?.name === "MemorySaver" &&
      typeof (x as MemorySaver).deleteThread === "function")
  );
}

/** Runs the cases of one sweep by index: what this thread's lanes and each worker thread run (`graphCaseRunner`). */
export interface GraphCaseRunner {
  run(index: number): Promise<GraphTurn[]>;
  /** Stops recording retriever instances (counterfactual retrieval); call once the sweep is done. */
  close(): void;
}

/**
 * The case runner of a sweep over `opts.cases`: each case turn by turn on
 * its own thread, under the deadline `turnTimeoutMs` and the stall guard
 * (./turn-guard.ts). The one runner of every sweep: this thread's, and each
 * worker thread's over the same options (src/app/own-graph/parallel.ts).
 */
export function graphCaseRunner(opts: GraphSweepOptions): GraphCaseRunner {
  const timeoutMs = opts.turnTimeoutMs ?? DEFAULT_TURN_TIMEOUT_S * 1000;
  if (!(typeof timeoutMs === "number" && timeoutMs > 0))
    throw new InvalidArgumentError("turnTimeoutMs", "a positive number of milliseconds", timeoutMs);
  if (opts.input === undefined && opts.graph.channels !== undefined && !("messages" in opts.graph.channels))
    throw new GraphInputError(
      `the graph has no "messages" channel (channels: ${Object.keys(opts.graph.channels)
        .filter((k) => !k.startsWith("__") && !k.startsWith("branch:"))
        .sort()
        .join(", ")}); give --input MODULE exporting (turn, case) => input`,
    );
  const saver = opts.graph.checkpointer;
  const ctx: CaseContext = {
    guard: new TurnGuard((where) =>
      log.warn(`${where}: ${STALLED_MESSAGE}; recorded as an error turn, the sweep goes on`),
    ),
    timeoutMs,
    release: isMemorySaver(saver) ? (id) => saver.deleteThread(id) : async () => {},
  };
  // Counterfactual retrieval by re-invocation needs each scored call's instance: recorded only while this sweep runs (./retriever-instances.ts).
  if (opts.counterfactual === true && opts.retrieveAgain === undefined && opts.traceSource !== "state") {
    ctx.retrievers = recordRetrieverInvocations(opts.retrieverBases ?? []);
    ctx.reinvocable = new Reinvocable(opts.cases.length);
  }
  return {
    run: (i) => runCase(opts.cases[i]!, i, opts, ctx),
    close: () => ctx.retrievers?.release(),
  };
}

/** What a sweep gives: the turns in dataset order, and how many cases each thread ran (index 0: this one; wall-clock bookkeeping, never in a report). */
export interface GraphSweepResult {
  turns: GraphTurn[];
  casesByThread: number[];
}

/**
 * Runs every case through the graph: cases in parallel up to `concurrency`
 * (default DEFAULT_CONCURRENCY) on this thread, and on the extra `lanes`
 * (worker threads) as they get ready, every lane taking the next case not
 * yet taken (`runQueue`: stop at the first failure); turns of a case in
 * order on one thread. Turns come back in dataset order whatever the
 * concurrency and whichever lane ran a case. Each turn runs under the
 * deadline `turnTimeoutMs` and the stall guard (./turn-guard.ts); a turn
 * given up is an error turn, as one that threw, and the case goes on with
 * its next turn (LangGraph stopped the aborted run). An error of retrace's
 * own (its store, its model: exit 3) stops the sweep. A finished case's
 * thread is deleted from an in-memory checkpointer (`MemorySaver`, the one
 * retrace adds or your own); a persistent checkpointer keeps its threads.
 */
export async function runGraphSweep(opts: GraphSweepOptions): Promise<GraphTurn[]> {
  return (await sweepGraphCases(opts)).turns;
}

/** `runGraphSweep`, with how many cases each thread ran. */
export async function sweepGraphCases(opts: GraphSweepOptions): Promise<GraphSweepResult> {
  const concurrency = opts.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new InvalidArgumentError("concurrency", "a positive integer", concurrency);
  const runner = graphCaseRunner(opts);
  const extra = opts.lanes ?? [];
  type Lane = { ready?: Promise<void>; run: (i: number) => Promise<GraphTurn[]>; thread: number };
  const local: Lane = {
    thread: 0,
    // With worker lanes, a turn that runs on microtasks alone (in-process retrieval) must yield to the event loop
    // before each case, or the workers' messages (ready, results) would wait until this thread ran out of cases.
    run:
      extra.length > 0
        ? (i) => new Promise<void>((resolve) => setImmediate(resolve)).then(() => runner.run(i))
        : (i) => runner.run(i),
  };
  const lanes: Lane[] = [];
  for (let c = 0; c < Math.min(concurrency, Math.max(1, opts.cases.length)); c++) {
    lanes.push(local);
    for (const w of extra) lanes.push(w);
  }
  const casesByThread = Array.from({ length: Math.max(0, ...extra.map((l) => l.thread)) + 1 }, () => 0);
  try {
    const results = await runQueue(opts.cases.length, lanes, (i, lane) => lane.run(i), {
      ready: (lane) => lane.ready,
      onDone: (done, total, lane) => {
        casesByThread[lane.thread]! += 1;
        opts.onCaseDone?.(done, total);
      },
    });
    return { turns: results.flat(), casesByThread };
  } finally {
    runner.close();
  }
}

/** Sorted names of the scored retrievers seen across a sweep. */
export function capturedRetrievers(turns: readonly GraphTurn[]): string[] {
  return [...new Set(turns.flatMap((t) => t.retrieval?.retrievers ?? []))].sort();
}

export type { DocumentInterface };
