/**
 * Use-case: the per-turn debugger (`retrace trace CASE_ID [--turn N]`,
 * `traceCase` for library users). Runs one case's turns through the
 * store-backed graph (earlier turns too: a follow-up needs them) and returns,
 * for each turn, its report line, the retrieval trace (every stage's ranked
 * list) and where each gold card stood at each stage and why it was or was
 * not retrieved; with `graph`, the same for a graph of your own, through the
 * same sweep (its captured retriever runs); with `traces`, the same for a
 * recorded turn, read, joined and scored as `eval --traces` does (nothing
 * re-run). Each source's turns come from the source registry, as `label`'s
 * do (docs/architecture.md, "…a source"). The case id and turn are checked
 * before any store starts.
 */
import { InvalidArgumentError } from "../errors.js";
import { explainGold, type GoldExplanation } from "../eval/report/attribution.js";
import type { TurnReport } from "../eval/report/types.js";
import type { GraphTurn } from "../eval/sweep/external-graph.js";
import type { CapturedRetrieval } from "../eval/sweep/capture.js";
import type { EvalCase, KnowledgeBase } from "../kb/types.js";
import type { RetrievalTrace } from "../retrieval/types.js";
import { EVAL_DEFAULTS } from "./eval-plan.js";
import type { ExternalGraphOptions } from "./graph-options.js";
import type { RecordedTracesOptions } from "./traces-eval.js";
import { sourceTrace, sourceTurns } from "./sources/registry.js";
import type { AnyTraceOptions, GraphTraceOptions, TraceCaseOptions, TracePlan, TraceRead } from "./trace-plan.js";

export { planTrace, type GraphTraceOptions, type TraceCaseOptions, type TracePlan } from "./trace-plan.js";

/** One traced turn: its report line, its retrace trace (null when the turn has none: store-less, or a graph's captured retriever runs), its capture, and an explanation per gold card. */
export interface TracedTurn {
  report: TurnReport;
  trace: RetrievalTrace | null;
  /** What the sweep captured (null: no retrieval, or the turn failed); never in `--json` output. */
  retrieval: CapturedRetrieval | null;
  explanations: GoldExplanation[];
}

/** The traced case. */
export interface CaseTrace<T = TracedTurn> {
  case: { id: string; locale: string; kind: string; turns: number };
  turns: T[];
  /** Recorded traces (`traces`): the case's turns the recording does not give (absent, or recorded with other user text), 0-based; absent when it gives every one. */
  notRecorded?: number[];
}

/** The case `caseId` of `cases` and its turns up to `turn` (all when unset); typed errors for an unknown id or a turn out of range. */
export function caseUpTo(
  cases: readonly EvalCase[],
  caseId: string,
  turn: number | undefined,
  casesFile: string,
): { c: EvalCase; upTo: EvalCase } {
  const c = cases.find((x) => x.id === caseId);
  if (c === undefined) throw new InvalidArgumentError("CASE_ID", `the id of a case in ${casesFile}`, caseId);
  if (turn !== undefined && !(Number.isInteger(turn) && turn >= 0 && turn < c.turns.length))
    throw new InvalidArgumentError(
      "--turn",
      `an integer from 0 to ${c.turns.length - 1} (0-based; case ${c.id} has ${c.turns.length} turn${c.turns.length === 1 ? "" : "s"})`,
      turn,
    );
  return { c, upTo: { ...c, turns: c.turns.slice(0, (turn ?? c.turns.length - 1) + 1) } };
}

const caseHeader = (c: EvalCase) => ({ id: c.id, locale: c.locale, kind: c.kind, turns: c.turns.length });

/**
 * What a trace reads before anything runs, by the source the options
 * select (its `trace.read`, ./sources/*.ts): the options' settings as
 * `retrace trace` reads them, and the KB (or catalog) and cases; for
 * retrace's own graph `planTrace` (the KB's chunks, which its store is
 * opened over), for a graph of yours or a recording as their eval reads
 * them (`loadGraphData`).
 */
export async function traceData<O extends AnyTraceOptions>(o: O): Promise<TraceRead<O>> {
  return sourceTrace(o).read(o);
}

/** The options of a trace of recorded traces (`--traces`): the recording, and how its retriever calls are read (id rule, call mode). */
export type RecordedTraceOptions = RecordedTracesOptions &
  Pick<ExternalGraphOptions, "idKey" | "idMap" | "retrievalCall" | "catalog" | "maxCardBytes"> &
  Pick<AnyTraceOptions, "kb" | "cases" | "k"> & { turn?: number };

/**
 * Traces case `caseId` (its turns up to `turn`; earlier turns run too: a
 * follow-up is contextualized from them) by the source the options select,
 * whose turns come from the source registry (./sources/registry.ts
 * `sourceTurns`, the sweep its eval runs): retrace's own graph over the
 * system the options describe, with `graph` a graph of your own, with
 * `traces` the case's recorded turns. What differs by source is the
 * source's to say (`Source.trace`): what it reads first, which turns it
 * sweeps, whether a `turn` it does not score is an error. Each turn: its
 * report line, its capture (the retrace trace when there is one: every
 * stage's ranked list) and an explanation per gold card of where it stood.
 * `plan`: what `planTrace` read (retrace's own graph), or the KB (or
 * catalog) and cases already loaded (`loadGraphData`, a graph of your own).
 */
export async function traceCase(
  caseId: string,
  options: TraceCaseOptions & Partial<GraphTraceOptions> & RecordedTracesOptions,
  plan?: TracePlan | { kb: KnowledgeBase; cases: EvalCase[]; casesFile: string },
): Promise<CaseTrace> {
  // The source the options select (./sources/registry.ts), which gives the turns as its eval sweeps them.
  const source = sourceTrace(options);
  const turn = options.turn;
  const read = await source.read(options, plan);
  const o = read.options;
  const { c, upTo } = caseUpTo(read.cases, caseId, turn, read.casesFile); // before any store starts or graph loads
  const k = o.k ?? EVAL_DEFAULTS.k;
  const [turns] = await sourceTurns(o, {
    // A recording's turns as recorded (only the case itself is joined; the others are the selection, their
    // conversations left alone); a graph runs the case's turns up to `turn` (a follow-up is contextualized from them).
    cases: [source.sweeps === "recorded" ? c : upTo],
    selection: read.cases,
    kb: read.kb,
    ...(read.data !== undefined ? { data: read.data } : {}),
    k,
    concurrency: 1,
    // retrace's own trace shows the three queries side by side (docs/query-attribution.md).
    counterfactual: options.counterfactual !== false,
  });
  const scored = [...new Set(turns!.map((t) => t.report.turn))];
  if (turn !== undefined && !scored.includes(turn) && source.unscoredTurn !== undefined)
    throw source.unscoredTurn(o, c.id, turn, scored);
  // The case's turns the source did not score (a recording that does not give them; a graph's sweep gives every turn it ran).
  const notRecorded = c.turns.map((_, i) => i).filter((i) => turn === undefined && !scored.includes(i));
  return {
    case: caseHeader(c),
    turns: turns!.filter((t) => turn === undefined || t.report.turn === turn).map(traced),
    ...(notRecorded.length > 0 ? { notRecorded } : {}),
  };
}

/** A swept turn as traced: the explanation of each gold card from its retrace trace (none without one). */
function traced(t: GraphTurn): TracedTurn {
  const trace = t.retrieval?.trace ?? null;
  return {
    report: t.report,
    trace,
    retrieval: t.retrieval,
    explanations: trace === null ? [] : t.report.gold.map((g) => explainGold(trace, g)),
  };
}
