/**
 * `retrace compare A B`: paired comparison of two runs of the same dataset
 * (report JSON from `retrace eval --report-json`, or a baseline file), per
 * metric: n turns and cases, both means, B − A with its 95% paired bootstrap
 * interval (whole cases resampled by default, `--resample turn` for single
 * turns) and the p-value inverted from that same interval, so the verdict
 * always agrees with the interval (docs/statistics.md).
 */
import path from "node:path";
import { Option, type Command } from "commander";
import { writeFileAtomic } from "../../atomic.js";
import { DataValidationError } from "../../errors.js";
import { compareFunnels, compareRuns, comparisonMethod, readRunSide, type FunnelComparison, type KeyComparison, type RunSide } from "../../eval/gate/compare.js";
import type { FunnelStage } from "../../eval/report/types.js";
import { renderHtmlComparison } from "../../eval/gate/compare-page.js";
import type { Report } from "../../eval/report/types.js";
import { metricLabel, SIGNIFICANCE_LEVEL } from "../../eval/report/render.js";
import { RESAMPLE_UNITS, type ResampleUnit } from "../../eval/stats/bootstrap.js";
import { action, out, outText } from "../io.js";
import { seedOption } from "../options.js";

const f = (x: number) => x.toFixed(3);
const signed = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(3)}`;
const fmtP = (p: number) => (p < 0.001 ? "<0.001" : p.toFixed(3));

export function renderComparison(rows: KeyComparison[], k: number, a: string, b: string, method = comparisonMethod()): string {
  const header = ["metric", "n turns", "n cases", "A", "B", "B − A", `95% CI (${method.unit}s)`, "p", "p adj (m)", ""];
  const table = rows.map((r) => [
    metricLabel(r.key, k),
    String(r.n),
    String(r.nCases),
    f(r.meanA),
    f(r.meanB),
    signed(r.diff),
    r.ci95 === null ? `(< 2 ${r.unit}s)` : `[${signed(r.ci95[0])}, ${signed(r.ci95[1])}]`,
    fmtP(r.pValue),
    `${fmtP(r.pAdjusted)} (${r.familySize})`,
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
    `Paired over the turns both runs scored (caseId#turn). Interval: ${method.test}; resampling unit: ${method.unit}, ${method.samples} resamples, seed ${method.seed}.`,
    `Significant when the adjusted p < ${SIGNIFICANCE_LEVEL}, which is exactly when the 95% interval excludes 0. Correction: ${method.correction}.`,
  ].join("\n");
}

/** Both funnels and the paired difference per stage ("the reranker now drops 4% more gold", with its interval). */
export function renderFunnelComparison(fc: FunnelComparison | null, method = comparisonMethod()): string {
  if (fc === null) return "\nstage funnel: not compared (a baseline file holds no per-turn stages; compare report JSON files)";
  const share = (rows: FunnelStage[], stage: string) => {
    const r = rows.find((x) => x.stage === stage);
    return r === undefined ? "—" : `${f(r.share)} [${r.ci95 === undefined ? "—" : `${f(r.ci95[0])}, ${f(r.ci95[1])}`}] n=${r.n}`;
  };
  const header = ["stage", "A (95% CI)", "B (95% CI)", "n paired", "B − A", `95% CI (${method.unit}s)`, "p"];
  const table = fc.diff.map((d) => [d.label, share(fc.a, d.stage), share(fc.b, d.stage), String(d.n), signed(d.diff), d.ci95 === null ? "—" : `[${signed(d.ci95[0])}, ${signed(d.ci95[1])}]`, fmtP(d.pValue)]);
  const widths = header.map((_, i) => Math.max(header[i]!.length, ...table.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd();
  return ["", "stage funnel (share of gold-bearing turns whose gold is still present; paired over the turns both runs measured):", line(header), ...table.map(line)].join("\n");
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
    .description("Paired comparison of two runs of the same dataset (report JSON or baseline files): difference, 95% case-level bootstrap CI and p per metric")
    .argument("<a>", "the reference run (report JSON from --report-json, or a baseline)")
    .argument("<b>", "the run compared with it")
    .option("--json", "print JSON")
    .option("--html <file>", "also write both runs side by side as one self-contained HTML page (needs report JSON files, not baselines; docs/html-report.md)")
    .option("--seed <n>", "seed of the bootstrap", seedOption(), 42)
    .addOption(new Option("--resample <unit>", "what the bootstrap resamples: whole cases, or single turns (ignores the correlation of a case's turns)").choices([...RESAMPLE_UNITS]).default("case"))
    .action(
      action(async (fileA: string, fileB: string, opts: { json?: boolean; html?: string; seed: number; resample: ResampleUnit }) => {
        const [a, b] = await Promise.all([readRunSide(fileA), readRunSide(fileB)]);
        const copts = { seed: opts.seed, resample: opts.resample };
        const rows = compareRuns(a, b, copts);
        const funnels = compareFunnels(a, b, copts);
        const method = comparisonMethod(copts);
        if (opts.html !== undefined) {
          const page = renderHtmlComparison({ name: path.basename(fileA), report: asReport(a) }, { name: path.basename(fileB), report: asReport(b) }, rows, { seed: opts.seed });
          await writeFileAtomic(opts.html, page);
        }
        if (opts.json) out(JSON.stringify({ version: 1, a: fileA, b: fileB, datasetHash: a.datasetHash, k: a.k, method, comparisons: rows, ...(funnels !== null ? { funnels } : {}) }, null, 2));
        else outText(`${renderComparison(rows, a.k, fileA, fileB, method)}\n${renderFunnelComparison(funnels, method)}`);
      }),
    );
}
