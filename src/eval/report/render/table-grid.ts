/**
 * What both forms of the stdout table (./table.ts, ./table-compact.ts) draw with:
 * the ANSI painter, the padded grid, the split groups' type and the gate lines.
 */
import type { Aggregate, Report } from "../types.js";
import { quarantineText } from "./shared.js";
import { padVisible, visibleLength } from "./wrap.js";

export const ANSI = {
  bold: "\x1b[1m",
  dim: "\x1b[2m",
  red: "\x1b[31m",
  green: "\x1b[32m",
  yellow: "\x1b[33m",
  reset: "\x1b[0m",
} as const;

export type Paint = (style: keyof typeof ANSI, s: string) => string;

export function painter(color: boolean): Paint {
  return color ? (style, s) => `${ANSI[style]}${s}${ANSI.reset}` : (_style, s) => s;
}

/** Columns padded on the visible text, then painted (so colour codes do not break alignment). */
export function grid(rows: { cells: string[]; style?: (keyof typeof ANSI | undefined)[] }[], paint: Paint): string[] {
  const widths: number[] = [];
  // Terminal columns (a full-width character counts 2: src/eval/report/render/wrap.ts).
  for (const r of rows) r.cells.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, visibleLength(c))));
  return rows.map((r) =>
    r.cells
      .map((c, i) => {
        const padded = i === r.cells.length - 1 ? c : padVisible(c, widths[i] ?? 0);
        const style = r.style?.[i];
        return style === undefined ? padded : paint(style, padded);
      })
      .join("  ")
      .trimEnd(),
  );
}

export type Groups = [string, Record<string, Aggregate> | undefined][];

export function gateLines(report: Report, paint: Paint): string[] {
  const g = report.gate;
  if (g === null)
    return [
      report.shard !== undefined
        ? `gate: not evaluated (partial report of shard ${report.shard.index}/${report.shard.count}; the merged report gates)`
        : "gate: not evaluated",
    ];
  const checks = g.checks ?? [];
  const lines: string[] = [];
  if (g.passed)
    lines.push(
      `gate: ${paint("green", "PASS")}${g.checks !== undefined && checks.length === 0 ? " (no floor or baseline check was set)" : ""}`,
    );
  else {
    lines.push(`gate: ${paint("red", "FAIL")} (${g.failures.length} failure${g.failures.length === 1 ? "" : "s"})`);
    lines.push(...g.failures.map((f) => `  - [${f.kind}] ${f.reason}`));
  }
  if (g.tolerance !== undefined) lines.push(`  baseline tolerance: ${g.tolerance.maxDrop} (${g.tolerance.source})`);
  if (g.dropTest !== undefined) lines.push(`  baseline drop test: ${g.dropTest.description}`);
  const quarantined = quarantineText(report);
  if (quarantined !== null) lines.push(`  ${quarantined}`);
  const passed = checks.filter((c) => c.verdict === "pass");
  const shown = passed.slice(0, 6).map((c) => `${c.option} ${c.scope === "all" ? c.key : `${c.key}[${c.scope}]`}`);
  if (passed.length > 6)
    shown.push(`… and ${passed.length - 6} more (every check is in the JSON report's gate.checks)`);
  if (passed.length > 0) lines.push(`  passed checks (${passed.length}): ${shown.join("; ")}`);
  return lines;
}
