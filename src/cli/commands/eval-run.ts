/**
 * What `retrace eval` and `retrace start` do once their options are parsed
 * (./eval.ts registers them and loads this module only when the command
 * runs, so that `retrace eval --help` loads no use-case): the eval sweep of
 * retrace's own graph (src/app/eval.ts), of yours with `--graph`, or of
 * recorded traces with `--traces` (src/app/graph-eval.ts); it prints the
 * report, writes the files asked for and turns the gate into the exit code.
 */
import { existsSync } from "node:fs";
import { runEval } from "../../app/eval.js";
import { baselineFileFor, checkShardOptions, EVAL_DEFAULTS, type EvalOptions } from "../../app/eval-plan.js";
import { graphBaselineFile, runGraphEval, type GraphEvalOptions } from "../../app/graph-eval.js";
import { graphWarnings } from "../../eval/report/graph-report.js";
import { ALLOW_NO_RETRIEVAL_DEPRECATED } from "../../eval/sweep/graph-checks.js";
import type { Report } from "../../eval/report/types.js";
import { log } from "../../log.js";
import { resolveDataPaths } from "../../app/data.js";
import { checkReportOutputs, emitReport, type ReportOutputs } from "../emit.js";
import { prepareGithub, type GithubOptions } from "../github.js";
import { writeBackOutputs } from "../../app/traces-eval.js";
import { EXIT } from "../io.js";
import { progressReporter } from "../progress.js";
import { nextSteps } from "../next-steps.js";

/** `eval` / `start` options as parsed (commander fills the defaults). */
export type EvalCommandOptions = EvalOptions & ReportOutputs & GithubOptions;
/** `eval --graph` options as parsed. */
export type GraphCommandOptions = GraphEvalOptions &
  Pick<ReportOutputs, "json" | "out" | "junit" | "reportJson" | "html"> &
  GithubOptions & {
    /** Deprecated, no effect (src/eval/sweep/graph-checks.ts). */ allowNoRetrieval?: boolean;
    /** `--traces`: the write-back files. */ annotationsOut?: string;
    feedbackOut?: string;
  };

/** The exit code of a finished run: 1 when its gate failed, else 0. */
const exitOf = (report: Report) => (report.gate?.passed === false ? EXIT.gateFailed : EXIT.ok);

export async function evalCommand(o: EvalCommandOptions): Promise<number> {
  const baselineFile = o.updateBaseline ? baselineFileFor(o) : undefined;
  await checkReportOutputs(o, baselineFile); // every output path, before a store starts (exit 2)
  const github = await prepareGithub(o, resolveDataPaths(o).cases);
  const { report, baseline } = await runEval(o, { progress: progressReporter });
  await emitReport(report, o, baselineFile); // the files (and baseline) together, then stdout
  await github.emit(
    report,
    baseline !== null ? { file: baselineFileFor(o), data: baseline } : null,
    report.bootstrap?.seed ?? o.seed ?? EVAL_DEFAULTS.seed,
    "retrace eval",
  );
  if (baselineFile !== undefined) log.info(`baseline written to ${baselineFile}`);
  for (const line of nextSteps(report, o, { compared: baseline !== null, exists: existsSync(baselineFileFor(o)) }))
    log.info(line);
  return exitOf(report);
}

export async function evalGraphCommand(o: GraphCommandOptions): Promise<number> {
  if (o.allowNoRetrieval === true) log.warn(ALLOW_NO_RETRIEVAL_DEPRECATED);
  const baselineFile = o.updateBaseline ? graphBaselineFile(o) : undefined; // follows --kb, as for retrace's own graph
  const writeBack = [
    ...(o.annotationsOut !== undefined ? [{ option: "--annotations-out", path: o.annotationsOut }] : []),
    ...(o.feedbackOut !== undefined ? [{ option: "--feedback-out", path: o.feedbackOut }] : []),
  ];
  await checkReportOutputs(o, baselineFile, writeBack); // every output path, before the graph is loaded or a trace read (exit 2)
  const github = await prepareGithub(o, resolveDataPaths(o).cases);
  const { report, baseline, recorded } = await runGraphEval(o, { progress: progressReporter });
  if (o.json === true) for (const w of graphWarnings(report)) log.warn(w); // the table prints them itself
  // The write-back files join the report's output set: all written or none (src/app/traces-eval.ts).
  const extra = recorded !== undefined ? writeBackOutputs(report, recorded, o) : [];
  await emitReport(report, o, baselineFile, extra); // the files (and baseline) together, then stdout
  const source = o.traces !== undefined ? `--traces ${o.traces}` : `--graph ${o.graph ?? ""}`;
  await github.emit(
    report,
    baseline !== null ? { file: o.baseline ?? graphBaselineFile(o), data: baseline } : null,
    report.bootstrap?.seed ?? o.seed ?? EVAL_DEFAULTS.seed,
    `retrace eval ${source}`,
  );
  if (baselineFile !== undefined) log.info(`baseline written to ${baselineFile}`);
  for (const line of nextSteps(report, o, { compared: baseline !== null, exists: existsSync(graphBaselineFile(o)) }))
    log.info(line);
  return exitOf(report);
}

/** The action of `eval` and `start`: one switch, three sources. */
export function runEvalAction(o: EvalCommandOptions & GraphCommandOptions): Promise<number> {
  checkShardOptions(o); // --shard with a gate option or --graph: exit 2 before anything starts
  // Recorded traces are scored as recorded: nothing re-runs, so there is no query attribution.
  if (o.traces !== undefined) return evalGraphCommand({ ...o, counterfactual: false });
  // One switch, two defaults: query attribution is on for retrace's own graph, and for --graph only when asked (its retriever must be side-effect free).
  if (o.graph !== undefined) return evalGraphCommand({ ...o, counterfactual: o.counterfactual === true });
  return evalCommand({ ...o, counterfactual: o.counterfactual ?? true });
}
