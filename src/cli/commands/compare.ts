/**
 * `retrace compare A B`: paired comparison of two runs of the same dataset
 * (report JSON from `retrace eval --out json:FILE`, or a baseline file), per
 * metric: n turns and cases, both means, B − A with its 95% paired bootstrap
 * interval (whole cases resampled by default, `--resample turn` for single
 * turns) and the p-value inverted from that same interval, so the verdict
 * always agrees with the interval (docs/statistics.md).
 *
 * Before the table: every run property that differs (src/eval/gate/run-diff.ts);
 * after it: the turns whose hit@k flipped, both directions (docs/ci.md), and
 * those that moved while hit@k held. All of it is one Comparison built once
 * (src/eval/gate/compare.ts `buildComparison`): the text
 * (src/eval/report/render/compare-text.ts), `--json` (the comparison itself)
 * and every `--out` format only format it.
 * Answer-side rows are paired over the held-out turns, as `eval` reports them.
 * `--out FORMAT:FILE` (html, pr-comment, json) writes the comparison through
 * the one output registry (src/cli/out-formats.ts).
 */
import type { Command } from "commander";
import { buildComparison, readRunSide } from "../../eval/gate/compare.js";
import { renderComparisonText } from "../../eval/report/render/compare-text.js";
import { log } from "../../log.js";
import type { ResampleUnit } from "../../eval/stats/bootstrap.js";
import { action, out, outText } from "../io.js";
import { checkOutputs, writeOutputs } from "../../output-set.js";
import { addOutOption, outSpecs, renderOuts, type OutTarget } from "../out-formats.js";
import { addRetired } from "../old-spellings.js";
import { addConfigOption } from "../settings.js";

export function register(program: Command): void {
  const cmd = program
    .command("compare")
    .description(
      "Paired comparison of two runs of the same dataset (report JSON or baseline files): difference, 95% case-level bootstrap CI and p per metric",
    )
    .argument("<a>", "the reference run (report JSON from retrace eval --out json:FILE, or a baseline)")
    .argument("<b>", "the run compared with it")
    .option("--json", "print JSON");
  addOutOption(cmd, "comparison", "the comparison");
  // run.seed and run.resample (the bootstrap's seed and unit) are settings of --config, as on eval.
  addRetired(addConfigOption(cmd, { retrievalWhy: "not a setting of retrace compare (it compares two reports)" }));
  cmd.action(
    action(
      async (
        fileA: string,
        fileB: string,
        opts: { json?: boolean; outputs?: OutTarget[]; seed: number; resample: ResampleUnit },
      ) => {
        await checkOutputs(outSpecs(opts.outputs)); // before anything is read (exit 2)
        const [a, b] = await Promise.all([readRunSide(fileA), readRunSide(fileB)]);
        // Computed once (src/eval/gate/compare.ts); the text, --json and every --out format only format it.
        const comparison = buildComparison(a, b, { seed: opts.seed, resample: opts.resample });
        for (const note of comparison.notes) log.warn(note); // e.g. "graph module changed since the baseline"
        const { outputs } = await renderOuts({ kind: "comparison", a, b, comparison }, opts.outputs);
        await writeOutputs(outputs); // all or none, then stdout
        if (opts.json) out(JSON.stringify(comparison, null, 2));
        else outText(renderComparisonText(comparison));
      },
    ),
  );
}
