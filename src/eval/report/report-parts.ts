/**
 * Text of the tune/holdout parts in the report renderings (docs/holdout.md):
 * the answerer line, the "(held-out)" mark of answer-side rows and the note
 * that says where answer-side figures come from. Computes no number: every
 * count comes from the report object.
 */
import type { SplitPart } from "../../kb/split.js";
import type { Report } from "./types.js";

/** The part columns, in order, with their headers. */
export const PART_LABELS: readonly [SplitPart, string][] = [
  ["tune", "tune (fitted on)"],
  ["holdout", "holdout"],
];

/** Mark appended to answer-side row labels when their headline figures are held out. */
export const HELD_OUT_MARK = "(held-out)";

/** The answerer as the report names it, or null for reports that predate the field. */
export function answererText(report: Report): string | null {
  return report.run.answerer ?? null;
}

/**
 * What earlier turns the graph saw, when the run says (`run.replay: recorded`,
 * docs/configuration.md#replay-own-or-recorded-history); null for the default
 * (the graph's own answers), which reports leave unsaid so they stay as they were.
 */
export function replayText(report: Report): string | null {
  return report.run.replay === "recorded"
    ? "recorded history (each turn on a fresh thread fed the case's recorded conversation, its assistant messages included)"
    : null;
}

/** `label (held-out)` for an answer-side key of a run with a split; the label otherwise. */
export function rowLabel(report: Report, key: string, label: string): string {
  const side = report.answerSide;
  return side !== undefined && side.scope === "holdout" && side.keys.includes(key)
    ? `${label} ${HELD_OUT_MARK}`
    : label;
}

/** Where the answer-side figures come from; null for reports without the field (or without answer-side keys). */
export function answerSideNote(report: Report): string | null {
  const side = report.answerSide;
  if (side === undefined || side.keys.length === 0) return null;
  if (side.scope === "all")
    return `no held-out part: no split.json beside the cases, so answer-side figures (${side.keys.join(", ")}) are on every turn, including any the answerer's rules were tuned on.`;
  return (
    `answer-side rows (${side.keys.join(", ")}) of the overall, kind and locale tables are on the holdout part only ` +
    `(${side.turns.holdout} of ${side.turns.holdout + side.turns.tune} turns); the tune part is what the answerer's rules were fitted on. ` +
    `Retrieval rows are on every turn, and per part in the part table.`
  );
}
