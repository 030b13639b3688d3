/**
 * Use-case: the per-turn debugger (`retrace trace CASE_ID [--turn N]`,
 * `traceCase` for library users). Runs one case's turns through the
 * store-backed graph (earlier turns too: a follow-up needs them) and returns,
 * for each turn, its report line, the retrieval trace (every stage's ranked
 * list) and where each gold card stood at each stage and why it was or was
 * not retrieved; with `graph`, the same for a graph of your own, through the
 * same sweep (its captured retriever runs); with `traces`, the same for a
 * recorded turn, read, joined and scored as `eval --traces` does (nothing
 * re-run). The case id and turn are checked before any store starts.
 */
import { GraphInputError, InvalidArgumentError } from "../errors.js";
import { allEvaluators } from "../eval/measures/evaluators.js";
import { explainGold, type GoldExplanation } from "../eval/report/attribution.js";
import type { TurnReport } from "../eval/report/types.js";
import type { GraphTurn } from "../eval/sweep/external-graph.js";
import { runGraphSweep } from "../eval/sweep/external-graph.js";
import type { CapturedRetrieval } from "../eval/sweep/capture.js";
import type { EvalCase, KnowledgeBase } from "../kb/types.js";
import type { RetrievalTrace } from "../retrieval/types.js";
import { loadData, resolveStoreChoice, type LoadedData } from "../system.js";
import { resolveDataPaths } from "./data.js";
import { resolveSettings } from "./settings/read.js";
import { graphDefaultsFor, openEvalSystem, type SystemSettings } from "./eval.js";
import { ownGraphCaseOptions } from "./own-graph/parallel.js";
import { EVAL_DEFAULTS, type EvalOptions } from "./eval-plan.js";
import { idOptionsFor, loadGraphData, sweepGraph, type ExternalGraphOptions } from "./graph-eval.js";
import { recordedTracesSource, type RecordedTracesOptions } from "./traces-eval.js";
import { retrievalSideEvaluators } from "../eval/measures/evaluators.js";

/** What a trace retrieves with: the retrieval options of an eval. */
export type TraceCaseOptions = Pick<
  EvalOptions,
  | "store"
  | "kb"
  | "cases"
  | "k"
  | "denseK"
  | "bm25K"
  | "mode"
  | "embedder"
  | "rerank"
  | "dataDir"
  | "config"
  | "retrievalConfig"
  | "localeConfigs"
  | "timeout"
  | "maxCardBytes"
  | "history"
  | "replay"
> & {
  /** Only this turn (0-based; earlier turns still run for context); unset: every turn. */
  turn?: number;
};

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

/** What `planTrace` read: the options with their config file applied, the KB and cases. */
export interface TracePlan {
  options: TraceCaseOptions;
  data: LoadedData;
  casesFile: string;
}

/** What a trace checks before a store starts: the store word, the config file, and the data (its case ids are what `traceCase` accepts). */
export async function planTrace(options: TraceCaseOptions): Promise<TracePlan> {
  resolveStoreChoice(options.store ?? EVAL_DEFAULTS.store); // a bad store is a usage error before anything is read
  const o = await resolveSettings("trace", options, "traceCase options"); // as the CLI reads them (src/app/settings/read.ts)
  const paths = resolveDataPaths(o);
  const data = await loadData(
    paths.kb,
    paths.cases,
    o.maxCardBytes !== undefined ? { maxCardBytes: o.maxCardBytes } : {},
  );
  return { options: o, data, casesFile: paths.cases };
}

/** The options of a trace of a graph of your own (`--graph`): how it is loaded, driven and read. */
export type GraphTraceOptions = ExternalGraphOptions & Pick<EvalOptions, "kb" | "cases" | "k"> & { turn?: number };

/** The options of a trace of recorded traces (`--traces`): the recording, and how its retriever calls are read (id rule, call mode). */
export type RecordedTraceOptions = RecordedTracesOptions &
  Pick<ExternalGraphOptions, "idKey" | "idMap" | "retrievalCall" | "catalog" | "maxCardBytes"> &
  Pick<EvalOptions, "kb" | "cases" | "k"> & { turn?: number };

/**
 * Traces case `caseId` (its turns up to `turn`; earlier turns run too: a
 * follow-up is contextualized from them) through the one sweep of every
 * graph: retrace's own graph over the system the options describe, or with
 * `graph` a graph of your own. Each turn: its report line, its capture (the
 * retrace trace when there is one: every stage's ranked list) and an
 * explanation per gold card of where it stood. `plan`: what `planTrace`
 * read (retrace's own graph), or the KB (or catalog) and cases already loaded
 * (`loadGraphData`, a graph of your own).
 */
export async function traceCase(
  caseId: string,
  options: TraceCaseOptions & Partial<GraphTraceOptions> & RecordedTracesOptions,
  plan?: TracePlan | { kb: KnowledgeBase; cases: EvalCase[]; casesFile: string },
): Promise<CaseTrace> {
  if (options.traces !== undefined) {
    const loaded = plan !== undefined && "kb" in plan ? plan : await loadGraphData(options);
    return traceRecorded(caseId, options, loaded);
  }
  if (options.graph !== undefined) {
    options = await resolveSettings("trace", options, "traceCase options"); // as the CLI reads them (src/app/settings/read.ts)
    const loaded = plan !== undefined && "kb" in plan ? plan : await loadGraphData(options);
    const { c, upTo } = caseUpTo(loaded.cases, caseId, options.turn, loaded.casesFile);
    const { turns } = await sweepGraph(options, [upTo], loaded.kb, 1);
    return {
      case: caseHeader(c),
      turns: turns.filter((t) => options.turn === undefined || t.report.turn === options.turn).map(traced),
    };
  }
  const { options: o, data, casesFile } = plan !== undefined && "options" in plan ? plan : await planTrace(options);
  const turn = options.turn;
  caseUpTo(data.cases, caseId, turn, casesFile); // before any store starts or anything is ingested
  const k = o.k ?? EVAL_DEFAULTS.k;
  const system = await openEvalSystem(o satisfies SystemSettings, undefined, data);
  try {
    const { c, upTo } = caseUpTo(system.cases, caseId, turn, casesFile);
    const settings = { ...o, k, mode: o.mode ?? EVAL_DEFAULTS.mode };
    const turns = await runGraphSweep({
      ...ownGraphCaseOptions({
        retriever: system.retriever,
        kb: system.kb,
        analyzers: system.analyzers,
        defaults: graphDefaultsFor(system, settings),
        evaluators: allEvaluators({ k }),
        knownIds: new Set(system.kb.byId.keys()),
        threadPrefix: "",
        k,
        // The three queries side by side (docs/query-attribution.md): the raw message and the standalone oracle retrieved as the graph's query was.
        counterfactual: options.counterfactual !== false,
        ...(o.replay !== undefined ? { replay: o.replay } : {}),
      }),
      cases: [upTo],
      concurrency: 1,
      ...(options.turnTimeout !== undefined ? { turnTimeoutMs: options.turnTimeout * 1000 } : {}),
    });
    return {
      case: caseHeader(c),
      turns: turns.filter((t) => turn === undefined || t.report.turn === turn).map(traced),
    };
  } finally {
    await system.close();
  }
}

/**
 * A case's recorded turns (up to `turn`; every turn when unset), read, joined
 * and scored by the source of `eval --traces` (src/app/traces-eval.ts: the
 * same reader, join, id rule, call mode and scoring); nothing is re-run, so
 * only the case itself is joined. The other cases are the selection: their
 * conversations are left alone, not reported as conversations without a
 * case. A turn the recording does not hold (or whose user text differs from
 * the case's) is exit 2 naming it.
 */
async function traceRecorded(
  caseId: string,
  o: RecordedTraceOptions,
  loaded: { kb: KnowledgeBase; cases: EvalCase[]; casesFile: string },
): Promise<CaseTrace> {
  const { c } = caseUpTo(loaded.cases, caseId, o.turn, loaded.casesFile);
  const k = o.k ?? EVAL_DEFAULTS.k;
  const source = await recordedTracesSource(o, () => idOptionsFor(o), "keep");
  const swept = await source.sweep([c], loaded.kb, retrievalSideEvaluators({ k }), () => {}, loaded.cases);
  const scored = new Set(swept.turns.map((t) => t.report.turn));
  if (o.turn !== undefined && !scored.has(o.turn))
    throw new GraphInputError(
      `--traces ${o.traces!}: case ${c.id} turn ${o.turn} is not in the recording, or its recorded user text differs from the case's (not scored); turns of case ${c.id} the recording gives: ${[...scored].join(", ") || "none"}`,
    );
  const notRecorded = c.turns.map((_, i) => i).filter((i) => o.turn === undefined && !scored.has(i));
  return {
    case: caseHeader(c),
    turns: swept.turns.filter((t) => o.turn === undefined || t.report.turn === o.turn).map(traced),
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
