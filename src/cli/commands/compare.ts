/**
 * `retrace compare A B`: paired comparison of two runs of the same dataset
 * (report JSON from `retrace eval --out json:FILE`, or a baseline file), per
 * metric: n turns and cases, both means, B − A with its 95% paired bootstrap
 * interval (whole cases resampled by default, `--resample turn` for single
 * turns) and the p-value inverted from that same interval, so the verdict
 * always agrees with the interval (docs/statistics.md).
 *
 * Before the table: every run property that differs (src/eval/gate/run-diff.ts);
 * after it: the turns whose hit@k flipped, both directions (docs/ci.md).
 * Answer-side rows are paired over the held-out turns, as `eval` reports them.
 * `--out FORMAT:FILE` (html, pr-comment, json) writes the comparison through
 * the one output registry (src/cli/out-formats.ts).
 */
import type { Command } from "commander";
import {
  compareFunnels,
  compareRuns,
  comparisonMethod,
  comparisonNote,
  pairingNotes,
  readRunSide,
  turnFlips,
  type FunnelComparison,
  type KeyComparison,
  type TurnFlip,
} from "../../eval/gate/compare.js";
import { differenceValue, runDifferences, type RunDifference } from "../../eval/gate/run-diff.js";
import type { FunnelStage } from "../../eval/report/types.js";
import { log } from "../../log.js";
import { metricLabel } from "../../eval/report/render.js";
import type { ResampleUnit } from "../../eval/stats/bootstrap.js";
import { action, out, outText } from "../io.js";
import { checkOutputs, writeOutputs } from "../../output-set.js";
import { addOutOption, outSpecs, renderOuts, type OutTarget } from "../out-formats.js";
import { addRetired } from "../old-spellings.js";
import { addConfigOption } from "../settings.js";

const f = (x: number) => x.toFixed(3);
const signed = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(3)}`;
const fmtP = (p: number) => (p < 0.001 ? "<0.001" : p.toFixed(3));

/** Flips listed in the text output before "and N more". */
export const FLIPS_SHOWN = 50;

/** The header lines naming what differs between the runs. */
export function differenceLines(diffs: readonly RunDifference[]): string[] {
  const settings = diffs.filter((d) => !d.outcome);
  const outcomes = diffs.filter((d) => d.outcome);
  if (diffs.length === 0) return ["Runs differ in: nothing recorded (same data, configuration and seed)"];
  const row = (d: RunDifference) => `  ${d.name}: A ${differenceValue(d.a)} → B ${differenceValue(d.b)}`;
  return [
    ...(settings.length > 0
      ? [`Runs differ in (${settings.length}):`, ...settings.map(row)]
      : ["Runs differ in: no setting"]),
    ...(outcomes.length > 0 ? [`Run outcomes that differ (${outcomes.length}):`, ...outcomes.map(row)] : []),
  ];
}

/** The flip section: counts both ways, then the turns (`caseId#turn`, as every key names them, and the locale), at most FLIPS_SHOWN a direction. */
export function flipLines(flips: readonly TurnFlip[], k: number): string[] {
  const lost = flips.filter((f) => f.direction === "hit→miss");
  const gained = flips.filter((f) => f.direction === "miss→hit");
  const out = [`hit@${k} flips: ${lost.length} hit→miss, ${gained.length} miss→hit (turns scored in both runs)`];
  for (const [label, list] of [
    ["hit→miss", lost],
    ["miss→hit", gained],
  ] as const) {
    if (list.length === 0) continue;
    out.push(`  ${label}:`);
    for (const f of list.slice(0, FLIPS_SHOWN)) out.push(`    ${f.id}${f.locale !== undefined ? `  ${f.locale}` : ""}`);
    if (list.length > FLIPS_SHOWN) out.push(`    … and ${list.length - FLIPS_SHOWN} more (every flip is in --json)`);
  }
  return out;
}

export function renderComparison(
  rows: KeyComparison[],
  k: number,
  a: string,
  b: string,
  method = comparisonMethod(),
  extra: { diffs?: readonly RunDifference[]; flips?: readonly TurnFlip[] } = {},
): string {
  const held = rows.filter((r) => r.turns === "holdout");
  const header = ["metric", "n turns", "n cases", "A", "B", "B − A", `95% CI (${method.unit}s)`, "p", "p adj (m)", ""];
  const table = rows.map((r) => [
    r.turns === "holdout" ? `${metricLabel(r.key, k)} (held-out)` : metricLabel(r.key, k),
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
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [
    `A: ${a}`,
    `B: ${b}`,
    ...(extra.diffs !== undefined ? differenceLines(extra.diffs) : []),
    "",
    line(header),
    ...table.map(line),
    "",
    ...(extra.flips !== undefined ? [...flipLines(extra.flips, k), ""] : []),
    ...(held.length > 0
      ? [
          `Rows marked (held-out) are answer-side keys paired over the held-out turns only, as retrace eval reports them (docs/holdout.md); retrieval rows over every shared turn.`,
        ]
      : []),
    ...comparisonNote(method),
  ].join("\n");
}

/** Both funnels and the paired difference per stage ("the reranker now drops 4% more gold", with its interval). */
export function renderFunnelComparison(fc: FunnelComparison | null, method = comparisonMethod()): string {
  if (fc === null)
    return "\nstage funnel: not compared (a baseline file holds no per-turn stages; compare report JSON files)";
  const share = (rows: FunnelStage[], stage: string) => {
    const r = rows.find((x) => x.stage === stage);
    return r === undefined
      ? "—"
      : `${f(r.share)} [${r.ci95 === undefined ? "—" : `${f(r.ci95[0])}, ${f(r.ci95[1])}`}] n=${r.n}`;
  };
  const header = ["stage", "A (95% CI)", "B (95% CI)", "n paired", "B − A", `95% CI (${method.unit}s)`, "p"];
  const table = fc.diff.map((d) => [
    d.label,
    share(fc.a, d.stage),
    share(fc.b, d.stage),
    String(d.n),
    signed(d.diff),
    d.ci95 === null ? "—" : `[${signed(d.ci95[0])}, ${signed(d.ci95[1])}]`,
    fmtP(d.pValue),
  ]);
  const widths = header.map((_, i) => Math.max(header[i]!.length, ...table.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [
    "",
    "stage funnel (share of gold-bearing turns whose gold is still present; paired over the turns both runs measured):",
    line(header),
    ...table.map(line),
  ].join("\n");
}

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
        const copts = { seed: opts.seed, resample: opts.resample };
        const rows = compareRuns(a, b, copts);
        for (const note of pairingNotes(a, b)) log.warn(note); // e.g. "graph module changed since the baseline"
        const funnels = compareFunnels(a, b, copts);
        const method = comparisonMethod(copts);
        const diffs = a.data !== undefined && b.data !== undefined ? runDifferences(a.data, b.data) : [];
        const flips = turnFlips(a, b);
        const flipCounts = {
          hitToMiss: flips.filter((f) => f.direction === "hit→miss").length,
          missToHit: flips.filter((f) => f.direction === "miss→hit").length,
        };
        const json = {
          version: 1,
          a: fileA,
          b: fileB,
          datasetHash: a.datasetHash,
          k: a.k,
          differences: diffs,
          method,
          comparisons: rows,
          flips: { ...flipCounts, turns: flips },
          ...(funnels !== null ? { funnels } : {}),
        };
        const { outputs } = await renderOuts(
          { kind: "comparison", a, b, comparisons: rows, method, funnels, flips, seed: opts.seed, json },
          opts.outputs,
        );
        await writeOutputs(outputs); // all or none, then stdout
        if (opts.json) out(JSON.stringify(json, null, 2));
        else
          outText(
            `${renderComparison(rows, a.k, fileA, fileB, method, { diffs, flips })}\n${renderFunnelComparison(funnels, method)}`,
          );
      },
    ),
  );
}
