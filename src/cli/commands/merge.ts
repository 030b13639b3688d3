/**
 * `retrace merge shard-*.json`: the partial reports of `retrace eval --shard
 * i/n` (all n of them) merged back into the report an unsharded run writes,
 * and its gate verdict (src/app/merge.ts; docs/reliability.md, "Sharded
 * sweeps"), printed and written as `retrace eval` does.
 *
 * stdout: the report (table, or JSON with --json). Exit 0 pass, 1 gate
 * failed, 2 bad usage or shards that do not belong together.
 */
import type { Command } from "commander";
import { EVAL_DEFAULTS } from "../../app/eval-plan.js";
import { mergeBaselineFile, mergeCasesFile, mergeShardReports, type MergeOptions } from "../../app/merge.js";
import { DEFAULT_MAX_DROP } from "../../eval/gate/gate.js";
import { log } from "../../log.js";
import { checkReportOutputs, emitReport, type ReportOutputs } from "../emit.js";
import { addGithubOptions, prepareGithub, type GithubOptions } from "../github.js";
import { addFloorOptions } from "../floor-options.js";
import { action, EXIT } from "../io.js";
import { countOption, probabilityOption } from "../options.js";

type MergeCommandOptions = MergeOptions & ReportOutputs & GithubOptions;

export async function mergeCommand(files: string[], o: MergeCommandOptions): Promise<number> {
  const baselineFile = o.updateBaseline ? mergeBaselineFile(o) : undefined;
  await checkReportOutputs(o, baselineFile); // every output path, before a shard is read (exit 2)
  const github = await prepareGithub(o, mergeCasesFile(o));
  const { report, baseline } = await mergeShardReports(files, o);
  await emitReport(report, o, baselineFile);
  await github.emit(report, baseline !== null ? { file: mergeBaselineFile(o), data: baseline } : null, report.bootstrap?.seed ?? EVAL_DEFAULTS.seed, "retrace merge");
  if (baselineFile !== undefined) log.info(`baseline written to ${baselineFile}`);
  return report.gate?.passed === false ? EXIT.gateFailed : EXIT.ok;
}

export function register(program: Command): void {
  const cmd = program
    .command("merge")
    .description("Merge the partial reports of retrace eval --shard i/n into the report and gate verdict of the unsharded run")
    .argument("<shards...>", "every shard report of one run (written by retrace eval --shard i/n --report-json, or --json)");
  addFloorOptions(cmd, "as on retrace eval")
    .option("--kb <dir>", "knowledge-base folder, for the default baseline <kb>/eval/baseline.json", "kb")
    .option("--baseline <file>", "compare with this baseline (default <kb>/eval/baseline.json when --max-drop/--max-flips is set); --update-baseline writes it there")
    .option("--max-drop <x>", `tolerated drop of each triad mean against the baseline, as on retrace eval (default 0 or ${DEFAULT_MAX_DROP})`, probabilityOption("--max-drop"))
    .option("--max-flips <n>", "tolerated number of turns whose hit@k went from 1 to 0 against the baseline (off by default)", countOption("--max-flips"))
    .option("--cases <file>", "the cases file of the run (default <kb>/eval/cases.jsonl): --quarantine entries are checked against it, GitHub annotations point into it")
    .option("--quarantine <file>", "turns the gate leaves out, `caseId#turn reason` a line, as on retrace eval (docs/ci.md)")
    .option("--update-baseline", "write the baseline from the merged report (to --baseline, default <kb>/eval/baseline.json)")
    .option("--max-errors <n>", "shards of a --graph run: turns whose graph run threw that the gate tolerates (default 0)", countOption("--max-errors"))
    .option("--max-no-retrieval <n>", "shards of a --graph run: gold-bearing turns with no retriever run (scored as misses) the gate tolerates (default: not gated)", countOption("--max-no-retrieval"))
    .option("--max-flaky <n>", "shards of a --repeat run: flaky turns (hit in some repeats, missed in others) the gate tolerates (default: not gated)", countOption("--max-flaky"))
    .option("--json", "print the merged report as JSON (with a version field) instead of the table")
    .option("--out <file>", "also write the merged report as markdown")
    .option("--junit <file>", "also write JUnit XML (one test case per gold-bearing turn)")
    .option("--report-json <file>", "also write the merged report as JSON")
    .option("--html <file>", "also write the merged report as one self-contained HTML page (docs/html-report.md)");
  addGithubOptions(cmd).action(action((files: string[], o: MergeCommandOptions) => mergeCommand(files, o)));
}
