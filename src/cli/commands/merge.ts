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
import { EVAL_DEFAULTS } from "../../app/eval-defaults.js";
import { mergeBaselineFile, mergeCasesFile, mergeShardReports, type MergeOptions } from "../../app/merge.js";
import { FLOOR_OPTIONS } from "../../eval/gate/gate.js";
import { log } from "../../log.js";
import { checkReportOutputs, emitReport, type ReportOutputs } from "../emit.js";
import { addGateOption, addOutputOptions, applyOutputHooks } from "../eval-options.js";
import { prepareGithub, type GithubOptions } from "../github.js";
import { action, EXIT } from "../io.js";
import { addRetired } from "../old-spellings.js";
import { addConfigOption } from "../settings.js";

type MergeCommandOptions = MergeOptions & ReportOutputs & GithubOptions;

export async function mergeCommand(files: string[], o: MergeCommandOptions): Promise<number> {
  const baselineFile = o.updateBaseline ? mergeBaselineFile(o) : undefined;
  await checkReportOutputs(o, baselineFile); // every output path, before a shard is read (exit 2)
  const github = await prepareGithub(o, mergeCasesFile(o));
  const { report, baseline } = await mergeShardReports(files, o);
  const reference = baseline !== null ? { file: mergeBaselineFile(o), data: baseline } : null;
  const seed = report.bootstrap?.seed ?? EVAL_DEFAULTS.seed;
  // The report's files, the baseline and the step summary: all or none.
  await emitReport(
    report,
    o,
    baselineFile,
    { comment: { reference, seed, title: "retrace merge" } },
    github.files(report, reference, seed, "retrace merge"),
  );
  await github.emit(report);
  if (baselineFile !== undefined) log.info(`baseline written to ${baselineFile}`);
  return report.gate?.passed === false ? EXIT.gateFailed : EXIT.ok;
}

/** The checks `merge` gates on: the floors and baseline checks of `eval`, and the --graph and --repeat checks of their shards. */
const MERGE_GATES = [
  ...FLOOR_OPTIONS.map((f) => f.flag.slice(2)),
  "max-drop",
  "max-flips",
  "max-errors",
  "max-no-retrieval",
  "max-flaky",
  "max-unjudged",
];

export function register(program: Command): void {
  const cmd = program
    .command("merge")
    .description(
      "Merge the partial reports of retrace eval --shard i/n into the report and gate verdict of the unsharded run",
    )
    .argument(
      "<shards...>",
      "every shard report of one run (written by retrace eval --shard i/n --out json:FILE, or --json)",
    );
  addGateOption(cmd, MERGE_GATES)
    .option("--kb <dir>", "knowledge-base folder, for the default baseline <kb>/eval/baseline.json", "kb")
    .option(
      "--baseline <file>",
      "the baseline file the baseline checks (--gate max-drop, max-flips, max-stage-drop) compare with, default <kb>/eval/baseline.json; it adds or removes no check; --update-baseline writes it there",
    )
    .option(
      "--cases <file>",
      "the cases file of the run (default <kb>/eval/cases.jsonl): --quarantine entries are checked against it, GitHub annotations point into it",
    )
    .option(
      "--quarantine <file>",
      "turns the gate leaves out, `caseId#turn reason` a line, as on retrace eval (docs/ci.md)",
    )
    .option(
      "--update-baseline",
      "write the baseline from the merged report (to --baseline, default <kb>/eval/baseline.json)",
    );
  // It reads no setting: --config and the project file (its kb, baseline, cases and gates) as every command reads them.
  addRetired(
    addConfigOption(addOutputOptions(cmd, "the merged report"), {
      retrievalWhy: "not a setting of retrace merge (it merges reports)",
      projectKeys: ["kb", "baseline", "cases"],
    }),
  );
  applyOutputHooks(cmd).action(action((files: string[], o: MergeCommandOptions) => mergeCommand(files, o)));
}
