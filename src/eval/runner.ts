/**
 * The eval sweep: every case through the graph, turn by turn (one thread per
 * case), retrieval traces collected through the graph's own callback events
 * (the `retrieval_trace` custom event, via RetrievalTraceCollector — never by
 * reading graph internals), evaluators applied per turn.
 *
 * Results are returned in dataset order whatever the concurrency, and each
 * case runs on its own thread, so a run at concurrency 1 and at 8 produce
 * identical turns.
 */
import { HumanMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { InvalidArgumentError } from "../errors.js";
import { RetrievalTraceCollector } from "../graph/collector.js";
import type { SplitPart } from "../kb/split.js";
import type { EvalCase, EvalTurn } from "../kb/types.js";
import { cardIdOf } from "../retrieval/parents.js";
import type { RetrievalTrace } from "../retrieval/types.js";
import { runEvaluators, type EvaluatorSpec } from "./evaluators.js";
import { stageHeads } from "./stage-heads.js";
import type { EvalResult, GoldPositions, RetrievalRunConfig, TraceSummary, TurnArtifacts, TurnReport } from "./types.js";

export const DEFAULT_CONCURRENCY = 4;

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
}

interface TurnState {
  answer?: unknown;
  citedIds?: unknown;
  refused?: unknown;
  query?: unknown;
}

/** One turn's artifacts for the evaluators: identity and gold from the case, what was retrieved, and the answer side. */
export function turnArtifacts(
  c: EvalCase,
  turn: number,
  retrievedIds: string[] | null,
  answer: Pick<TurnArtifacts, "citedIds" | "answer" | "refused" | "knownIds">,
): TurnArtifacts {
  const t = c.turns[turn] as EvalTurn;
  return { caseId: c.id, turn, locale: c.locale, kind: c.kind, gold: t.must_cite_one_of, expect: t.expect, retrievedIds, ...answer };
}

/** The report of one turn (before its trace, part and capture extras): its artifacts, the user's text and the results. */
export function turnReport(c: EvalCase, a: TurnArtifacts, results: EvalResult[]): TurnReport {
  return {
    caseId: a.caseId,
    turn: a.turn,
    locale: a.locale,
    kind: a.kind,
    user: (c.turns[a.turn] as EvalTurn).user,
    gold: a.gold,
    expect: a.expect,
    retrievedIds: a.retrievedIds,
    citedIds: a.citedIds,
    refused: a.refused,
    answer: a.answer,
    results,
  };
}

/**
 * Where each gold card stood at each stage of a trace: `{ goldId: { stage: rank } }`,
 * rank 1-based (for chunk-level stages, the rank of the card's best chunk),
 * null when the card is absent from that stage's list.
 */
export function goldPositions(trace: RetrievalTrace, gold: readonly string[]): GoldPositions {
  const firstRank: [string, Map<string, number>][] = [];
  for (const [stage, ranked] of Object.entries(trace.stages)) {
    if (ranked === undefined) continue;
    const first = new Map<string, number>();
    for (const r of ranked) {
      const card = cardIdOf(r);
      if (!first.has(card)) first.set(card, r.rank);
    }
    firstRank.push([stage, first]);
  }
  return Object.fromEntries(gold.map((g) => [g, Object.fromEntries(firstRank.map(([stage, first]) => [stage, first.get(g) ?? null]))]));
}

export function summarizeTrace(trace: RetrievalTrace, gold: readonly string[]): TraceSummary {
  // Wall-clock timings stay out of the per-turn summary: they go to the report's `timings` section (docs/determinism.md).
  return { query: trace.query, k: trace.k, retrievedIds: trace.retrievedIds, goldPositions: goldPositions(trace, gold), ...stageHeads(trace) };
}

/** Wall time (ms) summed over the sweep's graph invocations and evaluator runs (the report's `timings.phases`). */
export interface SweepPhases {
  graph: number;
  evaluate: number;
}

async function runCase(
  c: EvalCase,
  opts: SweepOptions,
  collector: RetrievalTraceCollector,
  timings: Map<string, Record<string, number>>,
  phases: SweepPhases,
  configs: Map<string, { locale: string; config: RetrievalRunConfig }>,
): Promise<TurnReport[]> {
  const threadId = `${opts.threadPrefix ?? ""}${c.id}`;
  const reports: TurnReport[] = [];
  for (const [turn, t] of c.turns.entries()) {
    let t0 = performance.now();
    const state = (await opts.graph.invoke(
      { messages: [new HumanMessage(t.user)], locale: c.locale },
      { configurable: { ...opts.configurable, thread_id: threadId }, callbacks: [collector] },
    )) as TurnState;
    phases.graph += performance.now() - t0;
    const trace = collector.forTurn(threadId, turn);
    if (opts.storeBacked && trace === undefined) {
      throw new InvalidArgumentError("graph", `a graph whose retrieve node emits a retrieval_trace event for every turn (none for case ${c.id} turn ${turn})`, "no trace");
    }
    const artifacts = turnArtifacts(c, turn, trace === undefined ? null : trace.retrievedIds, {
      citedIds: Array.isArray(state.citedIds) ? (state.citedIds as string[]) : [],
      answer: typeof state.answer === "string" ? state.answer : "",
      refused: state.refused === true,
      knownIds: opts.knownIds,
    });
    t0 = performance.now();
    const report = turnReport(c, artifacts, await runEvaluators(opts.evaluators, artifacts));
    phases.evaluate += performance.now() - t0;
    if (trace !== undefined) {
      report.trace = summarizeTrace(trace, t.must_cite_one_of);
      timings.set(`${c.id}#${turn}`, trace.timingsMs);
      const { embedder: _e, mode: _m, rerank: _r, ...config } = trace.config;
      configs.set(`${c.id}#${turn}`, { locale: trace.locale ?? "*", config });
    }
    const part = opts.partOf?.get(c.id);
    if (part !== undefined) report.part = part;
    reports.push(report);
  }
  return reports;
}

/**
 * Runs the sweep; turn reports come back in dataset order. Wall-clock stage
 * timings are returned apart (`timings`, keyed `caseId#turn`, in dataset
 * order), never inside the turn reports (docs/determinism.md).
 */
export async function runSweep(
  opts: SweepOptions,
): Promise<{
  turns: TurnReport[];
  traces: RetrievalTraceCollector;
  timings: Record<string, Record<string, number>>;
  phases: SweepPhases;
  /** Retrieval settings by locale (`*` without one), from the first traced turn of each in dataset order. */
  retrieval: Record<string, RetrievalRunConfig>;
}> {
  const concurrency = opts.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new InvalidArgumentError("concurrency", "a positive integer", concurrency);
  const collector = new RetrievalTraceCollector();
  const results: TurnReport[][] = new Array(opts.cases.length);
  const timings = new Map<string, Record<string, number>>();
  const phases: SweepPhases = { graph: 0, evaluate: 0 };
  const configs = new Map<string, { locale: string; config: RetrievalRunConfig }>();
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < opts.cases.length) {
      const i = next++;
      results[i] = await runCase(opts.cases[i]!, opts, collector, timings, phases, configs);
      done += 1;
      opts.onCaseDone?.(done, opts.cases.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, opts.cases.length)) }, worker));
  const turns = results.flat();
  const ordered: Record<string, Record<string, number>> = {};
  const byLocale = new Map<string, RetrievalRunConfig>();
  for (const t of turns) {
    const id = `${t.caseId}#${t.turn}`;
    const ms = timings.get(id);
    if (ms !== undefined) ordered[id] = ms;
    const c = configs.get(id);
    if (c !== undefined && !byLocale.has(c.locale)) byLocale.set(c.locale, c.config);
  }
  // Dataset order picks each locale's config (never completion order); keys sorted for a stable report.
  const retrieval = Object.fromEntries([...byLocale].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { turns, traces: collector, timings: ordered, phases, retrieval };
}
