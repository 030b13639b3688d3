/**
 * The eval sweep: every case through the graph, turn by turn (one thread per
 * case), evaluators applied per turn. Each turn's retrieval trace comes from
 * what the graph itself publishes, never from graph internals, one of two ways
 * (`traceSource`):
 *   - `events` (the default, for any graph that embeds the retrieve node): the
 *     `retrieval_trace` custom event, caught by a RetrievalTraceCollector
 *     passed as a callback handler;
 *   - `state`: the turn's trace in the `retrieval` channel of the state that
 *     `invoke` returns (RetrievalAnnotation's channel, which retrace's own graph
 *     declares). No callback handler is attached, so LangChain's per-runnable
 *     callback work (run ids, start/end events for every node, edge and
 *     channel write) is not paid on every turn (docs/throughput.md). The
 *     retrieve node writes the ONE trace value both ways, so both sources give
 *     the same reports.
 *
 * Results are returned in dataset order whatever the concurrency, and each
 * case runs on its own thread, so a run at concurrency 1 and at 8 produce
 * identical turns.
 */
import { HumanMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { InvalidArgumentError } from "../../errors.js";
import { RetrievalTraceCollector, type CollectedTrace } from "../../graph/collector.js";
import type { SplitPart } from "../../kb/split.js";
import { isToLabel, type EvalCase, type EvalTurn } from "../../kb/types.js";
import type { RetrievalTrace } from "../../retrieval/types.js";
import { runEvaluators, type EvaluatorSpec } from "../../eval/measures/evaluators.js";
import { attributeTurn, type TurnQueries } from "../../eval/report/query-attribution.js";
import { summarizeTrace } from "../../eval/report/trace-summary.js";
import type { RetrievalRunConfig, TurnReport } from "../../eval/report/types.js";
import { DEFAULT_CONCURRENCY, runQueue, turnArtifacts, turnReport } from "../../eval/sweep/turns.js";

export { DEFAULT_CONCURRENCY, runQueue, turnArtifacts, turnReport };

/** What the runner needs of a compiled graph: one turn in, the turn's final state out. */
export interface InvokableGraph {
  invoke(input: Record<string, unknown>, config?: RunnableConfig): Promise<unknown>;
}

export interface SweepOptions {
  graph: InvokableGraph;
  cases: readonly EvalCase[];
  evaluators: readonly EvaluatorSpec[];
  /** Ids of every KB card (citation correctness checks existence). */
  knownIds: ReadonlySet<string>;
  /** True when the graph has a retrieval node: a turn without a collected trace is then an error. */
  storeBacked: boolean;
  concurrency?: number;
  /** Extra `configurable` for every invocation (k, mode, ...). */
  configurable?: Record<string, unknown>;
  /** Thread ids are `<prefix><case id>`; a fresh prefix per run keeps checkpointed threads apart. */
  threadPrefix?: string;
  onCaseDone?: (done: number, total: number) => void;
  /** Part of each case id in the committed split (docs/holdout.md); each turn report then carries its `part`. */
  partOf?: ReadonlyMap<string, SplitPart>;
  /** Where each turn's trace is read (see the module comment); default `events`. */
  traceSource?: TraceSource;
  /**
   * Called with a case's thread id once the case is done (a sweep never
   * returns to a thread), e.g. `(id) => checkpointer.deleteThread(id)`: the
   * checkpoints of finished cases then do not pile up in memory.
   */
  releaseThread?: (threadId: string) => Promise<void>;
  /**
   * LangGraph's `durability` for every invocation. `exit` saves one
   * checkpoint when a turn ends instead of one after every step: the same
   * nodes on the same state, so the same turn (the conversation still carries
   * over between turns), without the intermediate checkpoints a sweep never
   * resumes from (docs/throughput.md). Default: the graph's own (`async`).
   */
  durability?: "exit" | "async" | "sync";
  /** False: the result's `traces` stays empty (the turn reports keep their trace summaries); saves memory on long sweeps. Default true. */
  keepTraces?: boolean;
  /**
   * Counterfactual retrieval (docs/query-attribution.md): retrieves with an
   * alternative query (the raw user message, the case's `standalone` oracle)
   * with the settings the graph's own retrieval used. Given, every
   * gold-bearing turn with a trace gets its query attribution
   * (`TurnReport.queries`); its own scores never change. Must be
   * deterministic and side-effect free.
   */
  counterfactual?: CounterfactualRetrieve;
}

/** Retrieval with an alternative query: the card ids in rank order (the full list, at least the top k). */
export type CounterfactualRetrieve = (
  query: string,
  turn: { locale: string; turn: number; caseId: string },
) => Promise<string[]>;

/** How the sweep gets each turn's retrieval trace (see the module comment). */
export type TraceSource = "events" | "state";

interface TurnState {
  answer?: unknown;
  citedIds?: unknown;
  refused?: unknown;
  query?: unknown;
  retrieval?: unknown;
}

/** The latest trace of `turn` in a returned state's `retrieval` channel, if it holds one. */
function stateTraceOf(state: TurnState, turn: number): RetrievalTrace | undefined {
  if (!Array.isArray(state.retrieval)) return undefined;
  for (let i = state.retrieval.length - 1; i >= 0; i--) {
    const t = state.retrieval[i] as Partial<RetrievalTrace> | null;
    if (typeof t === "object" && t !== null && t.turn === turn && Array.isArray(t.retrievedIds))
      return t as RetrievalTrace;
  }
  return undefined;
}

/** Wall time (ms) summed over the sweep's graph invocations and evaluator runs (the report's `timings.phases`). */
export interface SweepPhases {
  graph: number;
  evaluate: number;
}

/**
 * Everything one case gives the sweep: its turn reports, and apart from
 * them each turn's stage timings and retrieval settings (keyed `caseId#turn`),
 * the traces collected and the time spent. Plain data, so a case run in a
 * worker thread (src/app/own-graph/parallel.ts) comes back unchanged.
 */
export interface CaseResult {
  reports: TurnReport[];
  timings: [string, Record<string, number>][];
  configs: [string, { locale: string; config: RetrievalRunConfig }][];
  traces: CollectedTrace[];
  phases: SweepPhases;
}

/** What running one case needs of the sweep options. */
export type CaseRunOptions = Pick<
  SweepOptions,
  | "graph"
  | "evaluators"
  | "knownIds"
  | "storeBacked"
  | "configurable"
  | "threadPrefix"
  | "partOf"
  | "traceSource"
  | "releaseThread"
  | "durability"
  | "keepTraces"
  | "counterfactual"
>;

/** Card ids of a trace in rank order: the parents list (full depth) when the trace has one, else the scored top-k. */
function rankedCards(trace: RetrievalTrace): string[] {
  const parents = trace.stages.parents;
  return parents !== undefined && parents.length > 0 ? parents.map((r) => r.id) : trace.retrievedIds;
}

/** The turn's query attribution: the graph's own trace, and the raw message and the oracle retrieved counterfactually (a query equal to the graph's reuses its list). */
async function turnQueries(
  c: EvalCase,
  turn: number,
  trace: RetrievalTrace,
  retrieve: CounterfactualRetrieve,
): Promise<TurnQueries | null> {
  const t = c.turns[turn] as EvalTurn;
  const gold = t.must_cite_one_of ?? []; // a turn to label has none
  if (gold.length === 0) return null;
  const own = rankedCards(trace);
  const ctx = { locale: c.locale as string, turn, caseId: c.id };
  const run = async (query: string) => ({ query, ranked: query === trace.query ? own : await retrieve(query, ctx) });
  const raw = await run(t.user);
  const standalone = t.standalone !== undefined ? await run(t.standalone) : undefined;
  return attributeTurn(
    { graph: { query: trace.query, ranked: own }, raw, ...(standalone !== undefined ? { standalone } : {}) },
    gold,
    trace.k,
    t.relevant,
  );
}

/** Runs one case through the graph, turn by turn on its own thread, and scores each turn. */
export async function runCase(c: EvalCase, opts: CaseRunOptions): Promise<CaseResult> {
  const collector = new RetrievalTraceCollector();
  const result: CaseResult = { reports: [], timings: [], configs: [], traces: [], phases: { graph: 0, evaluate: 0 } };
  const threadId = `${opts.threadPrefix ?? ""}${c.id}`;
  const fromState = opts.traceSource === "state";
  for (const [turn, t] of c.turns.entries()) {
    let t0 = performance.now();
    const config: RunnableConfig & { durability?: SweepOptions["durability"] } = {
      configurable: { ...opts.configurable, thread_id: threadId },
      ...(fromState ? {} : { callbacks: [collector] }),
      ...(opts.durability !== undefined ? { durability: opts.durability } : {}),
    };
    const state = (await opts.graph.invoke(
      { messages: [new HumanMessage(t.user)], locale: c.locale },
      config,
    )) as TurnState;
    result.phases.graph += performance.now() - t0;
    if (fromState) {
      const own = stateTraceOf(state, turn);
      if (own !== undefined) collector.add({ threadId, trace: own, source: "state" });
    }
    const trace = collector.forTurn(threadId, turn);
    if (opts.storeBacked && trace === undefined) {
      const wanted = fromState
        ? "a graph whose returned state holds this turn's trace in its `retrieval` channel"
        : "a graph whose retrieve node emits a retrieval_trace event for every turn";
      throw new InvalidArgumentError("graph", `${wanted} (none for case ${c.id} turn ${turn})`, "no trace");
    }
    const artifacts = turnArtifacts(c, turn, trace === undefined ? null : trace.retrievedIds, {
      citedIds: Array.isArray(state.citedIds) ? (state.citedIds as string[]) : [],
      answer: typeof state.answer === "string" ? state.answer : "",
      refused: state.refused === true,
      knownIds: opts.knownIds,
    });
    t0 = performance.now();
    // A turn to label (no gold, no expect) runs but scores nothing (docs/synthetic-cases.md#importing-conversations).
    const report = turnReport(c, artifacts, isToLabel(t) ? [] : await runEvaluators(opts.evaluators, artifacts));
    result.phases.evaluate += performance.now() - t0;
    if (trace !== undefined) {
      report.trace = summarizeTrace(trace, t.must_cite_one_of ?? []);
      if (opts.counterfactual !== undefined) {
        const queries = await turnQueries(c, turn, trace, opts.counterfactual);
        if (queries !== null) report.queries = queries;
      }
      result.timings.push([`${c.id}#${turn}`, trace.timingsMs]);
      const { embedder: _e, mode: _m, rerank: _r, ...config } = trace.config;
      result.configs.push([`${c.id}#${turn}`, { locale: trace.locale ?? "*", config }]);
    }
    const part = opts.partOf?.get(c.id);
    if (part !== undefined) report.part = part;
    result.reports.push(report);
  }
  await opts.releaseThread?.(threadId);
  if (opts.keepTraces !== false) result.traces = collector.all();
  return result;
}

/** What a sweep returns (see runSweep). */
export interface SweepResult {
  turns: TurnReport[];
  traces: RetrievalTraceCollector;
  timings: Record<string, Record<string, number>>;
  phases: SweepPhases;
  /** Retrieval settings by locale (`*` without one), from the first traced turn of each in dataset order. */
  retrieval: Record<string, RetrievalRunConfig>;
  /** Cases run on each thread (index 0: this one); wall-clock bookkeeping, never in a report. */
  casesByThread: number[];
}

/** One executor of cases in a sweep: it takes cases once `ready` resolves, one at a time. */
export interface SweepLane {
  ready?: Promise<void>;
  run: (index: number) => Promise<CaseResult>;
  /** The thread the lane runs on (0: this one), for `casesByThread`; default 0. */
  thread?: number;
}

/**
 * The sweep over `cases`: every lane takes the next case not yet taken until
 * none is left (a lane with `ready` starts once it resolves), so a lane that
 * starts late or runs slowly simply takes fewer cases. Whatever lane ran a
 * case and whatever order the cases finish in, everything is assembled in
 * dataset order.
 */
export async function sweepCases(
  cases: readonly EvalCase[],
  lanes: readonly SweepLane[],
  onCaseDone?: (done: number, total: number) => void,
): Promise<SweepResult> {
  const casesByThread = Array.from({ length: Math.max(0, ...lanes.map((l) => l.thread ?? 0)) + 1 }, () => 0);
  const results = await runQueue(cases.length, lanes, (i, lane) => lane.run(i), {
    ready: (lane) => lane.ready,
    onDone: (done, total, lane) => {
      casesByThread[lane.thread ?? 0]! += 1;
      onCaseDone?.(done, total);
    },
  });
  const collector = new RetrievalTraceCollector();
  const phases: SweepPhases = { graph: 0, evaluate: 0 };
  const ordered: Record<string, Record<string, number>> = {};
  const byLocale = new Map<string, RetrievalRunConfig>();
  for (const r of results) {
    for (const t of r.traces) collector.add(t);
    phases.graph += r.phases.graph;
    phases.evaluate += r.phases.evaluate;
    for (const [id, ms] of r.timings) ordered[id] = ms;
    for (const [, c] of r.configs) if (!byLocale.has(c.locale)) byLocale.set(c.locale, c.config);
  }
  // Dataset order picks each locale's config (never completion order); keys sorted for a stable report.
  const retrieval = Object.fromEntries([...byLocale].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return {
    turns: results.flatMap((r) => r.reports),
    traces: collector,
    timings: ordered,
    phases,
    retrieval,
    casesByThread,
  };
}

/**
 * Runs the sweep; turn reports come back in dataset order. Wall-clock stage
 * timings are returned apart (`timings`, keyed `caseId#turn`, in dataset
 * order), never inside the turn reports (docs/determinism.md).
 */
export async function runSweep(opts: SweepOptions): Promise<SweepResult> {
  const concurrency = opts.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new InvalidArgumentError("concurrency", "a positive integer", concurrency);
  const lane: SweepLane = { run: (i) => runCase(opts.cases[i]!, opts) };
  return sweepCases(
    opts.cases,
    Array.from({ length: Math.min(concurrency, Math.max(1, opts.cases.length)) }, () => lane),
    opts.onCaseDone,
  );
}
