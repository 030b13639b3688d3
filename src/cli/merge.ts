/**
 * `retrace merge shard-*.json`: the partial reports of `retrace eval --shard
 * i/n` (all n of them) back into the report an unsharded run writes, and its
 * gate verdict (docs/reliability.md, "Sharded sweeps"). The shards are
 * verified to belong together (src/eval/gate/shard-merge.ts); every aggregate,
 * interval, p-value and chance level is recomputed from the merged per-turn
 * scores by the code `retrace eval` uses (./eval-report.ts), and the gate is
 * applied there: floors, a baseline, drops and flips, as on `eval`. Only
 * `timings`, the wall-clock section, differs from an unsharded run's.
 *
 * stdout: the report (table, or JSON with --json). Exit 0 pass, 1 gate
 * failed, 2 bad usage or shards that do not belong together.
 */
import { existsSync } from "node:fs";
import type { Command } from "commander";
import { DataValidationError, InternalError, InvalidArgumentError } from "../errors.js";
import { readBaseline, storeKindOf, writeBaseline, type Baseline } from "../eval/gate/baseline.js";
import { DEFAULT_MAX_DROP } from "../eval/gate/gate.js";
import { mergeShards, type ShardFile } from "../eval/gate/shard-merge.js";
import { readTextFileOrThrow } from "../kb/text.js";
import { log } from "../log.js";
import { defaultBaselineFile } from "./baseline.js";
import { addFloorOptions } from "./eval.js";
import { applyGate, emitReport, reportOf, type GateOptions, type ReportOutputs } from "./eval-report.js";
import { action, EXIT } from "./io.js";
import { countOption, probabilityOption } from "./options.js";
import { evaluatorsFor } from "../eval/sweep/storeless.js";

export interface MergeOptions extends GateOptions, ReportOutputs {
  kb: string;
  baseline?: string;
  updateBaseline?: boolean;
}

/** Reads each shard file (strict UTF-8, JSON); exit 2 naming the file when it is neither. */
export async function readShardFiles(files: readonly string[]): Promise<ShardFile[]> {
  return Promise.all(
    files.map(async (file) => {
      const text = await readTextFileOrThrow(file);
      try {
        return { file, data: JSON.parse(text) as unknown };
      } catch (e) {
        throw new DataValidationError([{ file, message: `expected a shard report JSON written by retrace eval --shard i/n (${(e as Error).message})` }]);
      }
    }),
  );
}

/** Whether the options compare with a baseline (as on eval: --baseline, --max-drop or --max-flips, unless writing one). */
function wantsBaseline(o: MergeOptions): boolean {
  return !o.updateBaseline && (o.baseline !== undefined || o.maxDrop !== undefined || o.maxFlips !== undefined);
}

export async function mergeCommand(files: string[], o: MergeOptions): Promise<number> {
  if (o.updateBaseline && (o.maxDrop !== undefined || o.maxFlips !== undefined))
    throw new InvalidArgumentError("--update-baseline", "used without --max-drop/--max-flips (it writes the baseline; it compares with nothing)", "both");
  const baselineFile = o.baseline ?? defaultBaselineFile(o.kb);
  let baseline: Baseline | null = null;
  if (wantsBaseline(o)) {
    if (!existsSync(baselineFile)) throw new InvalidArgumentError("--baseline", "an existing baseline file (create one with `retrace eval --update-baseline`, or `retrace merge … --update-baseline`)", baselineFile);
    baseline = await readBaseline(baselineFile);
  }
  const merged = mergeShards(await readShardFiles(files));
  const storeBacked = (merged.run.storeKind ?? storeKindOf(merged.run.store)) !== "none";
  // A merge never judges: the shards' groundedness scores are in their turns; the stand-in only gives the evaluator its shape.
  const judge = merged.judge !== undefined ? () => Promise.reject(new InternalError("retrace merge does not call the judge")) : undefined;
  const evaluators = evaluatorsFor({ k: merged.run.k, storeBacked, ...(judge !== undefined ? { judge } : {}) });
  const report = reportOf({
    run: merged.run,
    turns: merged.turns,
    evaluators,
    seed: merged.bootstrap.seed,
    samples: merged.bootstrap.samples,
    resample: merged.bootstrap.unit,
    ...(merged.cardsPerLocale !== undefined ? { cardsPerLocale: merged.cardsPerLocale } : {}),
  });
  applyGate(report, o, merged.bootstrap.seed, baseline);
  if (merged.timings !== undefined) report.timings = merged.timings;
  if (merged.judge !== undefined) report.judge = merged.judge;
  log.info(`merged ${merged.count} shard${merged.count === 1 ? "" : "s"}: ${new Set(merged.turns.map((t) => t.caseId)).size} cases, ${merged.turns.length} turns`);
  if (report.gate?.tolerance !== undefined) log.info(`baseline tolerance: --max-drop ${report.gate.tolerance.maxDrop} (${report.gate.tolerance.source})`);
  await emitReport(report, o);
  if (o.updateBaseline) {
    await writeBaseline(baselineFile, report);
    log.info(`baseline written to ${baselineFile}`);
  }
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
    .option("--update-baseline", "write the baseline from the merged report (to --baseline, default <kb>/eval/baseline.json)")
    .option("--json", "print the merged report as JSON (with a version field) instead of the table")
    .option("--out <file>", "also write the merged report as markdown")
    .option("--junit <file>", "also write JUnit XML (one test case per gold-bearing turn)")
    .option("--report-json <file>", "also write the merged report as JSON")
    .option("--html <file>", "also write the merged report as one self-contained HTML page (docs/html-report.md)")
    .action(action((files: string[], o: MergeOptions) => mergeCommand(files, o)));
}
