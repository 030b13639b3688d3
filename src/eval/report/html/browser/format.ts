/**
 * Formatting shared by the report and compare pages: numbers, intervals, turn ids and outcomes, as the server side words them. Part of the page script (./report.ts).
 */
import { positionLabel } from "../../positions.js";
import { el } from "./dom.js";
import type { Captured, Interval, Run, Turn } from "./registry.js";
import { HIT } from "./registry.js";

// ------------------------------------------------------------ formatting
export function f3(x: number): string {
  return x.toFixed(3);
}
export function signed(x: number): string {
  return (x >= 0 ? "+" : "\u2212") + Math.abs(x).toFixed(3);
}
export function fmtP(p: number): string {
  return p < 0.001 ? "<0.001" : p.toFixed(3);
}
export function turnId(t: Turn): string {
  return t.caseId + "#" + t.turn;
}
export function score(t: Turn, key: string): number | undefined {
  for (const r of t.results) if (r.key === key) return r.score;
  return undefined;
}
export function outcome(t: Turn): string {
  if (t.error !== undefined) return "error";
  const h = score(t, HIT);
  if (h === 0) return "miss";
  if (h === 1) return "hit";
  return t.gold.length === 0 ? "no gold" : "not measured";
}
// A --graph turn that made no retriever run says so wherever its outcome shows (a gold-bearing one is a miss).
// Unknown ids (naming no card of the KB or catalog) are counted there too.
export function outcomeText(t: Turn): string {
  const u = t.captured && t.captured.unknownIds ? t.captured.unknownIds.length : 0;
  return (
    outcome(t) +
    (t.noRetrieval ? " \u00b7 no retrieval" : "") +
    (u > 0 ? " \u00b7 " + u + " unknown id" + (u === 1 ? "" : "s") : "")
  );
}
// The lists of a turn captured from a user's graph's retriever runs (--graph), or null (retrace's own trace).
export function capturedOf(t: Turn): Captured | null {
  return t.captured && t.captured.source === "callbacks" ? t.captured : null;
}
export function label(run: Run, key: string): string {
  return run.labels[key] || key;
}
// The ids the turn's retrieval scored (its top-k, in rank order), or a dash when it has no trace.
export function topKText(t: Turn): string {
  return t.trace ? (t.trace.retrievedIds.length === 0 ? "(none)" : t.trace.retrievedIds.join(", ")) : "\u2014";
}
export function rankText(v: number | null | undefined): string {
  return v === null || v === undefined ? "\u2014" : String(v);
}
export function ciText(c: Interval): string {
  return c ? "[" + f3(c[0]) + ", " + f3(c[1]) + "]" : "(no CI)";
}
export function groupLabel(split: string, g: string): string {
  return split === "position" ? positionLabel(g) : g;
}
export function ths(heads: readonly string[]): HTMLTableCellElement[] {
  return heads.map((h) => el("th", { text: h }));
}
