/**
 * What `retrace eval` and `retrace start` do once their options are parsed
 * (./eval.ts registers them and loads this module only when the command
 * runs, so that `retrace eval --help` loads no use-case): the eval sweep of
 * retrace's own graph (src/app/own-graph/eval.ts), of yours with `--graph`, or of
 * recorded traces with `--traces` (src/app/graph-eval.ts); it prints the
 * report, writes the files asked for and turns the gate into the exit code.
 */
import { existsSync } from "node:fs";
import { runEval, sourceFlag } from "../../app/sources/registry.js";
import { baselineFileFor, checkShardOptions, EVAL_DEFAULTS, type EvalOptions } from "../../app/eval-plan.js";
import type { GraphEvalOptions } from "../../app/graph-eval.js";
import { graphWarnings } from "../../eval/report/graph-report.js";
import { ALLOW_NO_RETRIEVAL_DEPRECATED } from "../../eval/sweep/graph-checks.js";
import type { Report } from "../../eval/report/types.js";
import { log } from "../../log.js";
import { resolveDataPaths } from "../../app/data.js";
import { checkReportOutputs, emitReport, type ReportOutputs } from "../emit.js";
import { prepareGithub, type GithubOptions } from "../github.js";
import { EXIT } from "../io.js";
import { progressReporter } from "../progress.js";
import { nextSteps } from "../next-steps.js";
import { checkWriteBackEarly, isWriteBackTarget } from "../out/write-back.js";

/** `eval` / `start` options as parsed (commander fills the defaults). */
export type EvalCommandOptions = EvalOptions & ReportOutputs & GithubOptions;
/** `eval --graph` options as parsed. */
export type GraphCommandOptions = GraphEvalOptions &
  ReportOutputs &
  GithubOptions & {
    /** Deprecated, no effect (src/eval/sweep/graph-checks.ts). */ allowNoRetrieval?: boolean;
  };

/** The exit code of a finished run: 1 when its gate failed, else 0. */
const exitOf = (report: Report) => (report.gate?.passed === false ? EXIT.gateFailed : EXIT.ok);

/** The baseline file of a run: `--baseline`, else `<kb>/eval/baseline.json` (for every source). */
const baselineOf = (o: EvalCommandOptions & GraphCommandOptions) => baselineFileFor(o);

/** `--traces REC` with a write-back file (`--out langsmith:` …) REC's format does not take: refused from REC's first record, before the run (src/cli/out/write-back.ts; `--traces -` only after it). */
async function checkWriteBack(o: EvalCommandOptions & GraphCommandOptions): Promise<void> {
  if (o.traces === undefined || !(o.outputs ?? []).some((t) => isWriteBackTarget(t.format))) return;
  const { firstRecordFormat } = await import("../../eval/traces/first-format.js");
  checkWriteBackEarly(o.outputs, o.tracesFormat ?? (await firstRecordFormat(o.traces)));
}

/** The action of `eval` and `start`: one use-case (`runEval`), whatever the source. */
export async function runEvalAction(o: EvalCommandOptions & GraphCommandOptions): Promise<number> {
  checkShardOptions(o); // --shard with a gate option or --graph: exit 2 before anything starts
  if (o.allowNoRetrieval === true) log.warn(ALLOW_NO_RETRIEVAL_DEPRECATED);
  const baselineFile = o.updateBaseline ? baselineOf(o) : undefined;
  await checkReportOutputs(o, baselineFile); // every output path, before a store starts, the graph loads or a trace is read (exit 2)
  await checkWriteBack(o); // --out langsmith: / phoenix: / langfuse: of a recording they do not take, before it is read (exit 2)
  const github = await prepareGithub(o, resolveDataPaths(o).cases);
  const { report, baseline, recorded } = await runEval(o, { progress: progressReporter });
  if (o.json === true) for (const w of graphWarnings(report)) log.warn(w); // the table prints them itself
  const source = sourceFlag(o); // ` --traces FILE`, ` --graph FILE#export`, or "" (retrace's own graph)
  const reference = baseline !== null ? { file: baselineOf(o), data: baseline } : null;
  const seed = report.bootstrap?.seed ?? o.seed ?? EVAL_DEFAULTS.seed;
  const title = `retrace eval${source}`;
  // Every --out file (the write-back records of --traces too), the baseline and the step summary: one output set, all written or none.
  await emitReport(
    report,
    o,
    baselineFile,
    { comment: { reference, seed, title }, ...(recorded !== undefined ? { recorded } : {}) },
    github.files(report, reference, seed, title),
  );
  await github.emit(report);
  if (baselineFile !== undefined) log.info(`baseline written to ${baselineFile}`);
  for (const line of nextSteps(report, o, { compared: baseline !== null, exists: existsSync(baselineOf(o)) }))
    log.info(line);
  return exitOf(report);
}
