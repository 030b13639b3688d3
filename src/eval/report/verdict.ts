/**
 * Verdicts worded once, when the report is built (docs/statistics.md): a
 * split delta's verdict goes into the report (`deltas[].verdict`,
 * ./aggregate.ts), so the terminal table, the markdown and the HTML page
 * print the report's words instead of wording a test themselves.
 */
import { SIGNIFICANCE_LEVEL } from "../stats/bootstrap.js";
import type { GroupDelta } from "./types.js";

/** A p-value as every rendering prints it: three decimals, `<0.001` below. */
export function fmtP(p: number): string {
  return p < 0.001 ? "<0.001" : p.toFixed(3);
}

/**
 * "significant" when the Holm-adjusted p is below the level; "not significant
 * after Holm (…)" when only the raw p is, naming both and the family size;
 * else "not significant".
 */
export function wordDeltaVerdict(d: Omit<GroupDelta, "verdict">): string {
  const significant = d.significant ?? d.pValue < SIGNIFICANCE_LEVEL;
  if (significant) return "significant";
  if (d.pAdjusted !== undefined && d.pValue < SIGNIFICANCE_LEVEL)
    return `not significant after Holm (the unadjusted 95% CI excludes 0, raw p=${fmtP(d.pValue)}, but adjusted p=${fmtP(d.pAdjusted)} in a family of ${d.familySize ?? 1})`;
  return "not significant";
}
