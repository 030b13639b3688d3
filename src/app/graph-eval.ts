/**
 * Use-case: an eval of a user's own LangGraph.js graph (`retrace eval --graph
 * FILE[#export]`, `runGraphEval` for library users; docs/evaluate-your-graph.md),
 * and the graph sweep `retrace trace --graph` shares. Retrieval is captured
 * from the graph's retriever runs with a callback handler; nothing in the
 * user's code changes. The KB (`kb`) or a catalog (`catalog`, `id<TAB>locale`
 * a line) gives the ids the integrity check resolves gold against; with
 * neither, the run is refused.
 *
 * The same rules as retrace's own graph (src/app/eval-plan.ts), checked before the graph module is loaded: `--locale`
 * / `--case` against the data, the baseline at `<kb>/eval/baseline.json` unless `--baseline` names one (a drop or flip
 * tolerance without a baseline file is exit 2), the baseline against the dataset, k, the graph and how it is scored.
 * The graph is identified by its module relative to the project root plus the export, and a sha256 of the module file
 * is recorded (docs/evaluate-your-graph.md, "Baselines").
 *
 * The gate fails on floors, baseline drops and flips, turn errors beyond
 * `maxErrors`, and gold-bearing turns with no retrieval beyond
 * `maxNoRetrieval`; a run most of whose retrieved ids name no card is
 * refused (src/eval/sweep/graph-checks.ts). A shard (`shard`) runs whole
 * cases and writes a partial, ungated report for `retrace merge`.
 */
import { existsSync } from "node:fs";
import { InvalidArgumentError } from "../errors.js";
import { checkBaselineTurns, graphScoringOf, readBaseline, type Baseline } from "../eval/gate/baseline.js";
import { sourceOfReport } from "../eval/gate/run-source.js";
import { shardCases } from "../eval/gate/shard.js";
import {
  checkKnownIds,
  graphRunFacts,
  graphRunInfo,
  stateLimitBytes,
  type GraphRunIdentity,
} from "../eval/sweep/graph-checks.js";
import { DEFAULT_MAX_STATE_MB, DEFAULT_TURN_TIMEOUT_S } from "../eval/sweep/turn-guard.js";
import { cardsPerLocale } from "../eval/measures/chance.js";
import { groundednessEvaluator, retrievalSideEvaluators, type EvaluatorSpec } from "../eval/measures/evaluators.js";
import type { Report, TurnReport } from "../eval/report/types.js";
import { describeIdKeys } from "../eval/sweep/capture.js";
import { capturedRetrievers, DEFAULT_GRAPH_EXPORT, parseModuleSpec } from "../eval/sweep/external-graph.js";
import { kbHash } from "../kb/hash.js";
import type { EvalCase } from "../kb/types.js";
import { log } from "../log.js";
import { checkBaselineBeforeRun, defaultBaselineFile } from "./baseline.js";
import { checkLocaleOptions, selectRunCases } from "./data.js";
import { checkRepeatOptions, EVAL_DEFAULTS, runDatasetHash } from "./eval-plan.js";
import type { UseCaseHooks } from "./progress.js";
import { checkBaselineWriting, readRunQuarantine, openRunJudge } from "./run-checks.js";
import { wantsBaseline } from "./report.js";
import type { ModuleSource, SweptTurns } from "./sweep-source.js";
import { evaluate, type EvalOutcome } from "./evaluate.js";
import type { ExternalGraphOptions, GraphEvalOptions } from "./graph-options.js";
import {
  graphModuleIdentity,
  migrateGraphBaseline,
  moduleFileHash,
  parseConfigurable,
  projectPath,
} from "./graph-identity.js";
import { loadGraphData, sweepGraph } from "./graph-sweep.js";
export type { ParsedConfigurable } from "./sweep-source.js";
// The graph eval's parts, where their users have always found them.
export type { ExternalGraphOptions, GraphEvalOptions } from "./graph-options.js";
export {
  graphModuleIdentity,
  migrateGraphBaseline,
  parseConfigurable,
  projectPath,
  projectRootOf,
  type GraphModuleIdentity,
} from "./graph-identity.js";
export { idOptionsFor, loadGraphData, sweepGraph, sweepGraphHere, type GraphSweepOutcome } from "./graph-sweep.js";

/** Why a `--graph` run's report has no query attribution, when it has none: the one reason text (docs/query-attribution.md). */
export const GRAPH_COUNTERFACTUAL_OFF =
  "not asked for: a --graph run attributes queries only with --counterfactual, which invokes your retriever again with each gold-bearing turn's raw message and standalone question (extra retriever calls; the retriever must be side-effect free)";

/** Whether a graph run does counterfactual retrieval, and why not (the report's `queryAttribution` header). */
export function graphCounterfactualOf(o: Pick<ExternalGraphOptions, "counterfactual">): {
  enabled: boolean;
  reason?: string;
} {
  return o.counterfactual === true ? { enabled: true } : { enabled: false, reason: GRAPH_COUNTERFACTUAL_OFF };
}

/** The baseline file a graph eval reads (with `--max-drop` / `--max-flips` / `--baseline`) or writes (`--update-baseline`): `baseline`, else `<kb>/eval/baseline.json` — as for retrace's own graph. */
export function graphBaselineFile(o: Pick<GraphEvalOptions, "baseline" | "kb">): string {
  return o.baseline ?? defaultBaselineFile(o.kb ?? "kb");
}

/** `retrace eval --graph SPEC [--kb KB] [--baseline FILE] …` for messages. */
function graphCommandLine(o: GraphEvalOptions, extra: string): string {
  // The run it names: a recording's command for `--traces`, the graph's otherwise.
  const parts = [
    "retrace",
    "eval",
    ...(o.traces !== undefined ? ["--traces", o.traces] : ["--graph", o.graph ?? "FILE"]),
  ];
  if (o.catalog !== undefined) parts.push("--catalog", o.catalog);
  if (o.kb !== undefined && o.kb !== "kb") parts.push("--kb", o.kb);
  if (o.cases !== undefined) parts.push("--cases", o.cases);
  if (o.k !== undefined) parts.push("-k", String(o.k)); // a baseline is compared at the k it was written with
  if (o.baseline !== undefined) parts.push("--baseline", o.baseline);
  return [...parts, extra].join(" ");
}

/**
 * Option combinations a graph eval refuses before anything loads (the same
 * rules as retrace's graph: src/app/eval-plan.ts): a `--locale` that is not a
 * canonical tag, a baseline written from a filtered run or with a tolerance
 * to compare with, a drop or flip tolerance (or `--baseline`) with no baseline
 * file, `--judge` with a catalog (no card text to grade against).
 */
export function checkGraphEvalOptions(o: GraphEvalOptions): void {
  checkLocaleOptions(o.locale);
  checkBaselineWriting(o); // a filtered run, or a tolerance, with --update-baseline (./run-checks.ts)
  if (o.shard !== undefined && (o.updateBaseline || wantsBaseline(o)))
    throw new InvalidArgumentError(
      "--shard",
      "used without --baseline, a max-drop or max-flips gate, or --update-baseline (a shard's report is partial; `retrace merge` gates)",
      `--shard ${o.shard.index}/${o.shard.count}`,
    );
  if (wantsBaseline(o)) {
    const file = graphBaselineFile(o);
    if (!existsSync(file))
      throw new InvalidArgumentError(
        "--baseline",
        `an existing baseline file (create one with \`${graphCommandLine(o, "--update-baseline")}\`)`,
        file,
      );
  }
  checkRepeatOptions(o.repeat, o.maxFlaky);
  const repeat = o.repeat ?? 1;
  if (o.counterfactual === true && repeat > 1)
    throw new InvalidArgumentError(
      "--counterfactual",
      "used without --repeat (a turn's query attribution compares three lists of one run, while with --repeat its scores are means over the repeats — a flaky turn hits in some and misses in others — so one attribution cannot stand for them; attribute a single run)",
      `--counterfactual --repeat ${repeat}`,
    );
  if (o.judge !== undefined && o.catalog !== undefined)
    throw new InvalidArgumentError(
      "run.judge",
      "used with --kb, not --catalog (the judge grades the answer against the text of the retrieved cards; a catalog lists ids only)",
      o.judge,
    );
}

/**
 * The eval of a graph of your own or of recorded traces (the sources
 * ./sources/graph.ts and ./sources/traces.ts run it with their sweep,
 * `open`): checks, data, baseline, judge, quarantine and the report's header,
 * written once for both; then the one body (./evaluate.ts). The report has
 * its gate applied: floors, the baseline's drops and flips, turn errors and
 * turns without retrieval; a shard's report is partial and not gated.
 * Writes nothing (`updateBaseline`: write it with
 * `writeBaseline(graphBaselineFile(options), report)`). The source's
 * settings rules are checked before (./sources/registry.ts).
 */
export async function runModuleEval(
  o: GraphEvalOptions,
  open: (o: GraphEvalOptions) => Promise<ModuleSource>,
  hooks: UseCaseHooks = {},
): Promise<EvalOutcome> {
  checkGraphEvalOptions(o);
  if (o.graph === undefined && o.traces === undefined)
    throw new InvalidArgumentError("--graph", "a graph module (or --traces, recorded traces)", undefined);
  const k = o.k ?? EVAL_DEFAULTS.k;
  const seed = o.seed ?? EVAL_DEFAULTS.seed;
  const retrievalCall = o.retrievalCall ?? "last";
  const data = await loadGraphData(o);
  const selected = selectRunCases(data.cases, o); // unknown case ids, a locale no case has: exit 2 before the graph loads
  const cases = o.shard === undefined ? selected : shardCases(selected, o.shard); // whole cases, balanced by turns (src/eval/gate/shard.ts)
  // The sweep's source: the graph run (its module identity read before it loads) or recorded traces (src/app/traces-eval.ts).
  const source = await open(o);
  // A recording is scored as recorded: what a graph would have been fed (run.replay) does not apply.
  const replay = source.recorded === true ? undefined : o.replay;
  const hashOf = (cs: readonly EvalCase[]) =>
    runDatasetHash(cs.length === data.cases.length ? data.cases : [...cs], replay);
  const module = source.module!;
  const configurable = source.configurable;
  const idMapHash = o.idMap !== undefined ? await moduleFileHash(o.idMap, "--id-map", "default") : undefined;
  const identity: GraphRunIdentity = {
    file: module.file,
    exportName: module.exportName,
    ...(module.moduleHash !== undefined ? { moduleHash: module.moduleHash } : {}),
    idKey: describeIdKeys(
      o.idMap !== undefined ? { idMap: () => null } : o.idKey !== undefined ? { idKey: o.idKey } : {},
    ),
    retrievalCall,
    ...(o.catalog !== undefined ? { catalog: projectPath(o.catalog) } : {}),
    ...(idMapHash !== undefined ? { idMapHash } : {}),
    ...(configurable !== undefined ? { configurable: configurable.record } : {}),
    ...(source.recorded !== true ? { turnTimeoutSeconds: o.turnTimeout ?? DEFAULT_TURN_TIMEOUT_S } : {}),
  };
  const runSource = source.recorded === true ? ("traces" as const) : ("graph" as const);
  let baseline: Baseline | null = null;
  if (wantsBaseline(o)) {
    const file = graphBaselineFile(o);
    baseline = await readBaseline(file);
    if (o.graph !== undefined) {
      const migrated = migrateGraphBaseline(
        baseline,
        parseModuleSpec(o.graph, DEFAULT_GRAPH_EXPORT).file,
        module.exportName,
        file,
      );
      if (migrated !== undefined) log.info(migrated);
    }
    // The one check before a run, as for retrace's own graph (./baseline.ts): dataset, k, the graph (or recording), its scoring.
    const run = { run: { source: runSource, graph: identity } as Report["run"] };
    const scoring = graphScoringOf(run);
    checkBaselineBeforeRun(
      baseline,
      {
        kb: o.kb ?? "kb",
        ...(o.cases !== undefined ? { cases: o.cases } : {}),
        source: sourceOfReport(run), // the graph module and export, or the recording
        ...(o.graph !== undefined ? { graph: o.graph } : {}),
        ...(o.traces !== undefined ? { traces: o.traces } : {}),
        ...(o.catalog !== undefined ? { catalog: o.catalog } : {}),
        ...(scoring !== undefined ? { scoring } : {}),
        k,
        ...(o.locale !== undefined ? { locale: o.locale } : {}),
        ...(o.case !== undefined ? { case: o.case } : {}),
        baselineFile: file,
        baselineIsDefault: o.baseline === undefined,
      },
      {
        datasetHash: hashOf(cases),
        fullDatasetHash: runDatasetHash(data.cases, replay),
        selected: cases.length,
        total: data.cases.length,
      },
    );
    checkBaselineTurns(baseline, file, data.cases);
  }
  const judge = await openRunJudge(o, data, o);
  const evaluators: EvaluatorSpec[] = [
    ...retrievalSideEvaluators({ k }),
    ...(judge !== undefined ? [groundednessEvaluator({ judge: judge.judge })] : []),
  ];
  const quarantine = await readRunQuarantine(o.quarantine, data.cases); // before the sweep: exit 2 naming file and line
  // The report's header: what was scored, and a refusal (exit 2) when most scored ids name no card (src/eval/sweep/graph-checks.ts).
  const header = (turns: TurnReport[], swept: SweptTurns): Report["run"] => {
    const facts = graphRunFacts(
      turns,
      (id) => data.kb.byId.get(id)?.locale,
      stateLimitBytes(o.maxStateMb ?? DEFAULT_MAX_STATE_MB),
    );
    const metadataKeys =
      swept.captured?.metadataKeys ??
      [...new Set(swept.runs.flat().flatMap((t) => t.retrieval?.metadataKeys ?? []))].sort();
    checkKnownIds(facts, {
      graph: source.label,
      idKeys: describeIdKeys(swept.ids),
      ids: o.catalog !== undefined ? `the catalog ${o.catalog}` : `the KB ${data.kbLabel}`,
      metadataKeys,
    });
    return {
      datasetHash: hashOf(cases),
      kbHash: kbHash(data.kb),
      source: runSource,
      embedder: null, // the graph's own retrievers ran, no embedder of retrace's: what they are is the description
      embedderDescription: source.description,
      k,
      store: "graph",
      storeKind: "graph",
      graph: {
        ...graphRunInfo(identity, turns, swept.captured?.retrievers ?? capturedRetrievers(swept.runs.flat()), facts),
        ...(swept.traces !== undefined ? { traces: swept.traces } : {}),
      },
      ...(replay === "recorded" ? { replay: "recorded" as const } : {}),
    };
  };
  return evaluate(
    {
      source: { ...source, header },
      kb: data.kb,
      selected,
      cases,
      hashOf,
      evaluators,
      cardsPerLocale: cardsPerLocale(data.kb.cards),
      counterfactual: source.counterfactual,
      options: { ...o, seed },
      baseline,
      ...(quarantine !== undefined ? { quarantine } : {}),
      ...(judge !== undefined ? { judge } : {}),
    },
    hooks,
  );
}

/** The graph-run source (`--graph`): its module identity, read before the module loads. */
export async function graphSource(o: GraphEvalOptions): Promise<ModuleSource> {
  const module = await graphModuleIdentity(o.graph!);
  const configurable = o.configurable !== undefined ? await parseConfigurable(o.configurable) : undefined;
  return {
    module,
    ...(configurable !== undefined ? { configurable } : {}),
    label: `--graph ${module.file}#${module.exportName}`,
    counterfactual: graphCounterfactualOf(o),
    description: "the graph's own retriever(s), captured from its retriever runs",
    sweep: (cases, kb, evaluators, onCaseDone) =>
      sweepGraph(o, cases, kb, o.concurrency ?? EVAL_DEFAULTS.concurrency, onCaseDone, {
        ...(configurable !== undefined ? { configurable } : {}),
        evaluators,
        repeat: o.repeat ?? 1,
      }),
  };
}
