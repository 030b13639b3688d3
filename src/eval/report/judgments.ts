/**
 * Graded relevance and judged@k in a report (docs/metrics.md, "Relevance
 * apart from the citation contract" and "judged@k"): which nDCG the run used
 * (how many turns had graded gains, how many were relevance-only), how many
 * turns carry judgments, and the turns whose top-k holds cards nobody judged;
 * plus the warning a run gets when its judged@k is below `JUDGED.warnBelow`.
 *
 * Pure functions over turn reports; inputs are never mutated.
 */
import { carriesJudgments, judgedSet } from "../measures/evaluators.js";
import { INCOMPLETE_JUDGMENT_MEASURES, JUDGED, METRICS, unjudgedAtK } from "../measures/metrics.js";
import type { JudgmentHole, JudgmentsSection, Report, TurnReport } from "./types.js";

/** The registry's graded metric (nDCG@k): the one a turn's `relevant` changes. */
const GRADED_KEYS: ReadonlySet<string> = new Set(METRICS.filter((m) => m.trec.graded).map((m) => m.key));

/** How many holes the stderr warning names before "… and N more" (the report's `judgments.holes` lists them all). */
export const WARNING_HOLES_SHOWN = 20;

/**
 * The report's `judgments` section for the turns at cutoff k, or undefined
 * when no turn carries `relevant` or `judged`. A hole is a turn with a
 * judged@k result below 1: its unjudged top-k cards are listed in rank order.
 */
export function judgmentsOf(turns: readonly TurnReport[], k: number): JudgmentsSection | undefined {
  const carrying = turns.filter((t) => carriesJudgments(t));
  if (carrying.length === 0) return undefined;
  const holes: JudgmentHole[] = [];
  for (const t of carrying) {
    const score = t.results.find((r) => r.key === JUDGED.key)?.score;
    if (score === undefined || score >= 1 || t.retrievedIds === null) continue;
    holes.push({
      caseId: t.caseId,
      turn: t.turn,
      judged: score,
      unjudged: unjudgedAtK(t.retrievedIds, judgedSet(t), k),
    });
  }
  return {
    gradedTurns: turns.filter((t) => t.relevant !== undefined && t.results.some((r) => GRADED_KEYS.has(r.key))).length,
    relevanceOnlyTurns: turns.filter((t) => t.relevanceOnly === true).length,
    judgedTurns: carrying.length,
    warnBelow: JUDGED.warnBelow,
    holes,
  };
}

/** Why the measures that need judged-non-relevant information were not computed (the report's `measuresNotComputed`). */
export const NOT_COMPUTED_REASON =
  "no case carries `judged` lists or graded `relevant` (retrace label writes them): a card nobody judged cannot be told from a judged non-relevant one";

/**
 * The report's `measuresNotComputed` (docs/metrics.md, "Incomplete judgments
 * in reports"): when turns with gold were scored (retrieval ran) but none
 * carries judgments, the registry's measures that need judged-non-relevant
 * information (judged@k and INCOMPLETE_JUDGMENT_MEASURES), with the reason;
 * undefined otherwise (a run with judgments has them; a store-less run lists
 * them as vacuous).
 */
export function measuresNotComputedOf(turns: readonly TurnReport[]): { keys: string[]; reason: string }[] | undefined {
  if (turns.some((t) => carriesJudgments(t))) return undefined;
  if (!turns.some((t) => t.gold.length > 0 && t.retrievedIds !== null)) return undefined;
  const keys = [JUDGED, ...INCOMPLETE_JUDGMENT_MEASURES].filter((m) => m.needsJudgedNonrelevant).map((m) => m.key);
  return [{ keys, reason: NOT_COMPUTED_REASON }];
}

/** `case#1 [x, y]`: a hole as the warning names it. */
function holeText(h: JudgmentHole): string {
  return `${h.caseId}#${h.turn} [${h.unjudged.join(", ")}]`;
}

/**
 * The warning of a run whose judged@k (the headline aggregate) is below
 * `judgments.warnBelow`, naming the turns with holes (caseId#turn and their
 * unjudged card ids, the first WARNING_HOLES_SHOWN), or null when judged@k is
 * at or above the level or not measured.
 */
export function judgmentWarning(report: Pick<Report, "aggregates" | "judgments" | "run">): string | null {
  const agg = report.aggregates[JUDGED.key];
  const j = report.judgments;
  if (agg === undefined || j === undefined || agg.mean >= j.warnBelow) return null;
  const label = JUDGED.label.replace(/@k$/, `@${report.run.k}`);
  const shown = j.holes.slice(0, WARNING_HOLES_SHOWN).map(holeText);
  const more =
    j.holes.length > shown.length
      ? `; … and ${j.holes.length - shown.length} more (the report's judgments.holes lists them all)`
      : "";
  return (
    `${label} is ${agg.mean.toFixed(3)} (n=${agg.n}), below ${j.warnBelow}: unjudged cards are scored as not relevant; ` +
    `label them (retrace label) before trusting nDCG and recall. ${j.holes.length} turn${j.holes.length === 1 ? "" : "s"} with unjudged cards in the top-${report.run.k}: ${shown.join("; ")}${more}`
  );
}

/**
 * The report's line on which nDCG it used, e.g. "nDCG@5: graded gains on 3 of
 * 10 scored turns (1 relevance-only: nDCG only), binary over must_cite_one_of
 * on the others", or null without graded turns.
 */
export function gradedNdcgText(report: Pick<Report, "aggregates" | "judgments" | "run">): string | null {
  const j = report.judgments;
  if (j === undefined || j.gradedTurns === 0) return null;
  const n = [...GRADED_KEYS].map((key) => report.aggregates[key]?.n).find((x) => x !== undefined);
  const of = n !== undefined ? ` of ${n} scored turns` : "";
  const only = j.relevanceOnlyTurns > 0 ? ` (${j.relevanceOnlyTurns} relevance-only: scored for nDCG only)` : "";
  return `nDCG@${report.run.k}: graded gains (the turn's relevant) on ${j.gradedTurns} turn${j.gradedTurns === 1 ? "" : "s"}${of}${only}; binary over must_cite_one_of on the others`;
}
