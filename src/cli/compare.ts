/**
 * `retrace compare A B`: paired comparison of two runs of the same dataset
 * (report JSON from `retrace eval --report-json`, or a baseline file), per
 * metric: n, both means, B − A with its 95% interval and the paired
 * randomization-test p-value.
 */
import type { Command } from "commander";
import { compareRuns, readRunSide, type KeyComparison } from "../eval/compare.js";
import { metricLabel, SIGNIFICANCE_LEVEL } from "../eval/report.js";
import { action, out, parsePositiveInt } from "./io.js";

const f = (x: number) => x.toFixed(3);
const signed = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(3)}`;

export function renderComparison(rows: KeyComparison[], k: number, a: string, b: string): string {
  const header = ["metric", "n", "A", "B", "B − A", "95% CI", "p", ""];
  const table = rows.map((r) => [
    metricLabel(r.key, k),
    String(r.n),
    f(r.meanA),
    f(r.meanB),
    signed(r.diff),
    r.ci95 === null ? "(n < 2)" : `[${signed(r.ci95[0])}, ${signed(r.ci95[1])}]`,
    r.pValue < 0.001 ? "<0.001" : r.pValue.toFixed(3),
    r.significant ? "significant" : "not significant",
  ]);
  const widths = header.map((_, i) => Math.max(header[i]!.length, ...table.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd();
  return [
    `A: ${a}`,
    `B: ${b}`,
    "",
    line(header),
    ...table.map(line),
    "",
    `Paired over the turns both runs scored (caseId#turn); two-sided sign-flip randomization test, significant when p < ${SIGNIFICANCE_LEVEL}.`,
  ].join("\n");
}

export function register(program: Command): void {
  program
    .command("compare")
    .description("Paired comparison of two runs of the same dataset (report JSON or baseline files): difference, 95% CI and randomization-test p per metric")
    .argument("<a>", "the reference run (report JSON from --report-json, or a baseline)")
    .argument("<b>", "the run compared with it")
    .option("--json", "print JSON")
    .option("--seed <n>", "seed of the bootstrap and the randomization test", parsePositiveInt("--seed"), 42)
    .action(
      action(async (fileA: string, fileB: string, opts: { json?: boolean; seed: number }) => {
        const [a, b] = await Promise.all([readRunSide(fileA), readRunSide(fileB)]);
        const rows = compareRuns(a, b, { seed: opts.seed });
        if (opts.json) out(JSON.stringify({ version: 1, a: fileA, b: fileB, datasetHash: a.datasetHash, k: a.k, comparisons: rows }, null, 2));
        else out(renderComparison(rows, a.k, fileA, fileB));
      }),
    );
}
