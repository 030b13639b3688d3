/**
 * `retrace compare A B`: paired comparison of two runs of the same dataset
 * (report JSON from `retrace eval --report-json`, or a baseline file), per
 * metric: n, both means, B − A with its 95% interval and the paired
 * randomization-test p-value.
 */
import path from "node:path";
import type { Command } from "commander";
import { writeFileAtomic } from "../atomic.js";
import { DataValidationError } from "../errors.js";
import { compareRuns, readRunSide, type KeyComparison, type RunSide } from "../eval/compare.js";
import { renderHtmlComparison } from "../eval/html/compare-page.js";
import type { Report } from "../eval/types.js";
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

/** The full report behind a run side; a baseline file has no per-turn artifacts to show. */
function asReport(side: RunSide): Report {
  const r = side.source as Partial<Report>;
  if (!Array.isArray(r.turns) || r.splits === undefined)
    throw new DataValidationError([{ file: side.file, field: "turns", message: "--html needs report JSON files (retrace eval --report-json); a baseline holds no per-turn artifacts" }]);
  return side.source as Report;
}

export function register(program: Command): void {
  program
    .command("compare")
    .description("Paired comparison of two runs of the same dataset (report JSON or baseline files): difference, 95% CI and randomization-test p per metric")
    .argument("<a>", "the reference run (report JSON from --report-json, or a baseline)")
    .argument("<b>", "the run compared with it")
    .option("--json", "print JSON")
    .option("--html <file>", "also write both runs side by side as one self-contained HTML page (needs report JSON files, not baselines; docs/html-report.md)")
    .option("--seed <n>", "seed of the bootstrap and the randomization test", parsePositiveInt("--seed"), 42)
    .action(
      action(async (fileA: string, fileB: string, opts: { json?: boolean; html?: string; seed: number }) => {
        const [a, b] = await Promise.all([readRunSide(fileA), readRunSide(fileB)]);
        const rows = compareRuns(a, b, { seed: opts.seed });
        if (opts.html !== undefined) {
          const page = renderHtmlComparison({ name: path.basename(fileA), report: asReport(a) }, { name: path.basename(fileB), report: asReport(b) }, rows, { seed: opts.seed });
          await writeFileAtomic(opts.html, page);
        }
        if (opts.json) out(JSON.stringify({ version: 1, a: fileA, b: fileB, datasetHash: a.datasetHash, k: a.k, comparisons: rows }, null, 2));
        else out(renderComparison(rows, a.k, fileA, fileB));
      }),
    );
}
