/**
 * `retrace compare A B`'s text output: the Comparison of
 * src/eval/gate/compare.ts (../comparison.ts) laid out for a terminal — the
 * run properties that differ, one row per metric (n turns and cases, both
 * means, B − A, its paired interval, p and the verdict), the hit@k flips, the
 * turns that moved while hit@k held, the two method lines, then both stage
 * funnels and their paired differences. It computes nothing: every figure,
 * order and verdict comes from the comparison (docs/statistics.md).
 */
import type { Comparison, FunnelComparison, MovedTurn, RunDifference } from "../comparison.js";
import type { FunnelStage } from "../types.js";
import { f3, fmtP, fmtSigned, metricLabel } from "./shared.js";
import { padVisible, visibleLength } from "./wrap.js";

/** Flips and moved turns listed in the text output before "and N more". */
export const FLIPS_SHOWN = 50;

/** A value as the text header shows it: hashes cut to 12 characters, absent as "—", objects as JSON. */
export function differenceValue(v: unknown): string {
  if (v === undefined) return "— (not recorded)";
  if (v === null) return "null";
  if (typeof v === "string") return /^[0-9a-f]{40,}$/.test(v) ? v.slice(0, 12) : v;
  return JSON.stringify(v);
}

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

/** The flip section: the comparison's counts both ways, then the turns (`caseId#turn`, as every key names them, and the locale), at most FLIPS_SHOWN a direction. */
export function flipLines(flips: Comparison["flips"], k: number): string[] {
  const lost = flips.turns.filter((f) => f.direction === "hit→miss");
  const gained = flips.turns.filter((f) => f.direction === "miss→hit");
  const out = [`hit@${k} flips: ${flips.hitToMiss} hit→miss, ${flips.missToHit} miss→hit (turns scored in both runs)`];
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

/** The moved-turn section: the turns in the comparison's order (biggest drop first), at most FLIPS_SHOWN. */
export function movedLines(moved: { threshold: number; turns: readonly MovedTurn[] }, k: number): string[] {
  const out = [
    `turns that moved (hit@${k} held; |Δ recall| or |Δ nDCG| ≥ ${moved.threshold}): ${moved.turns.length}, biggest drop first`,
  ];
  for (const m of moved.turns.slice(0, FLIPS_SHOWN))
    out.push(
      `    ${m.id}${m.locale !== undefined ? `  ${m.locale}` : ""}  ${m.hit === 1 ? "hit" : "miss"}  Δ recall ${fmtSigned(m.recall)}  Δ nDCG ${fmtSigned(m.ndcg)}`,
    );
  if (moved.turns.length > FLIPS_SHOWN)
    out.push(`    … and ${moved.turns.length - FLIPS_SHOWN} more (every moved turn is in --json)`);
  return out;
}

/** Columns padded to their widest cell in terminal columns (a full-width character counts 2; the first left-aligned, the others right-aligned). */
function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((_, i) =>
    Math.max(visibleLength(header[i]!), ...rows.map((row) => visibleLength(row[i]!))),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? padVisible(c, widths[i]!) : " ".repeat(Math.max(0, widths[i]! - visibleLength(c))) + c))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** The interval of a row: `[−0.100, +0.050]`, or why there is none. */
export function ciText(ci: readonly [number, number] | null, unit: string): string {
  return ci === null ? `(< 2 ${unit}s)` : `[${fmtSigned(ci[0])}, ${fmtSigned(ci[1])}]`;
}

/** The comparison's header, metric table, flips, moved turns and method lines. */
export function renderComparison(c: Comparison): string {
  const k = c.k;
  const held = c.comparisons.filter((r) => r.turns === "holdout");
  const header = [
    "metric",
    "n turns",
    "n cases",
    "A",
    "B",
    "B − A",
    `95% CI (${c.method.unit}s)`,
    "p",
    "p adj (m)",
    "",
  ];
  const rows = c.comparisons.map((r) => [
    r.turns === "holdout" ? `${metricLabel(r.key, k)} (held-out)` : metricLabel(r.key, k),
    String(r.n),
    String(r.nCases),
    f3(r.meanA),
    f3(r.meanB),
    fmtSigned(r.diff),
    ciText(r.ci95, r.unit),
    fmtP(r.pValue),
    `${fmtP(r.pAdjusted)} (${r.familySize})`,
    r.verdict,
  ]);
  return [
    `A: ${c.a}`,
    `B: ${c.b}`,
    ...differenceLines(c.differences),
    "",
    ...table(header, rows),
    "",
    ...flipLines(c.flips, k),
    "",
    ...movedLines(c.moved, k),
    "",
    ...(held.length > 0
      ? [
          `Rows marked (held-out) are answer-side keys paired over the held-out turns only, as retrace eval reports them (docs/holdout.md); retrieval rows over every shared turn.`,
        ]
      : []),
    ...c.note,
  ].join("\n");
}

/** Both funnels and the paired difference per stage ("the reranker now drops 4% more gold", with its interval). */
export function renderFunnelComparison(fc: FunnelComparison | undefined, unit: string): string {
  if (fc === undefined)
    return "\nstage funnel: not compared (a baseline file holds no per-turn stages; compare report JSON files)";
  const share = (rows: FunnelStage[], stage: string) => {
    const r = rows.find((x) => x.stage === stage);
    return r === undefined
      ? "—"
      : `${f3(r.share)} [${r.ci95 === undefined ? "—" : `${f3(r.ci95[0])}, ${f3(r.ci95[1])}`}] n=${r.n}`;
  };
  const header = ["stage", "A (95% CI)", "B (95% CI)", "n paired", "B − A", `95% CI (${unit}s)`, "p"];
  const rows = fc.diff.map((d) => [
    d.label,
    share(fc.a, d.stage),
    share(fc.b, d.stage),
    String(d.n),
    fmtSigned(d.diff),
    d.ci95 === null ? "—" : `[${fmtSigned(d.ci95[0])}, ${fmtSigned(d.ci95[1])}]`,
    fmtP(d.pValue),
  ]);
  return [
    "",
    "stage funnel (share of gold-bearing turns whose gold is still present; paired over the turns both runs measured):",
    ...table(header, rows),
  ].join("\n");
}

/** `retrace compare`'s whole text output. */
export function renderComparisonText(c: Comparison): string {
  return `${renderComparison(c)}\n${renderFunnelComparison(c.funnels, c.method.unit)}`;
}
