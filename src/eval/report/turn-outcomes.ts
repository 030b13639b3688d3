/**
 * The report's `turnOutcomes` and `summaryRepeats` (issue 55, item 2;
 * docs/schema-versions.md): figures and verdicts every rendering prints,
 * computed once when the report is built (./aggregate.ts `buildReport`) and
 * filled in on read for older reports (./derived-on-read.ts), so no renderer
 * applies the rule itself.
 *
 * - `turnOutcomes`: the gold-bearing turns counted, and the missed turns
 *   (hit@k = 0: no gold card in the top-k; an error turn is an error, not a
 *   miss) listed by their index in `turns`, in dataset order, and counted.
 * - `summaryRepeats`: the summary's columns and tables that would repeat the
 *   all column (docs/html-report.md, "Summary"), each with the words why.
 *
 * Pure.
 */
import { isDeepStrictEqual } from "node:util";
import { HIT_KEY } from "../measures/metrics.js";
import type { Report, TurnReport } from "./types.js";

export type TurnOutcomes = NonNullable<Report["turnOutcomes"]>;
export type SummaryRepeat = NonNullable<Report["summaryRepeats"]>[number];

/** Whether a turn is a miss: it ran (no error) and its hit@k is 0. */
export function isMissed(t: Pick<TurnReport, "error" | "results">): boolean {
  return t.error === undefined && t.results.find((r) => r.key === HIT_KEY)?.score === 0;
}

/** The gold-bearing turns counted, the missed ones listed (indices into `turns`) and counted. */
export function turnOutcomesOf(turns: readonly TurnReport[]): TurnOutcomes {
  let goldBearing = 0;
  const missedTurns: number[] = [];
  turns.forEach((t, i) => {
    if (t.gold.length > 0) goldBearing++;
    if (isMissed(t)) missedTurns.push(i);
  });
  return { goldBearing, missed: missedTurns.length, missedTurns };
}

/**
 * The summary's columns and tables that repeat the all column: a kind column
 * whose every figure equals the all column's (every case is of that kind:
 * `group` the kind), or a split table of one group equal to the all column
 * (`group: null`, e.g. one locale). The turn-position split is drawn in the
 * Conversation view and never hidden.
 */
export function summaryRepeatsOf(report: Pick<Report, "splits" | "aggregates">): SummaryRepeat[] {
  const out: SummaryRepeat[] = [];
  for (const [split, groups] of Object.entries(report.splits)) {
    if (split === "position" || groups === undefined) continue;
    const same = Object.keys(groups).filter((g) => isDeepStrictEqual(groups[g], report.aggregates));
    if (split === "kind")
      for (const g of same) out.push({ split, group: g, why: `every case is ${g}: its column is the all column` });
    else if (Object.keys(groups).length === 1 && same.length === 1)
      out.push({ split, group: null, why: `one ${split} (${same[0]}): its table is the all column` });
  }
  return out;
}
