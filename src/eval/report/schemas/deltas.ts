/**
 * The report's `deltas` section: per-split deltas with their tests
 * (docs/statistics.md).
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";
import { count, finite, interval } from "./primitives.js";

const groupDeltaObject = z.object({
  key: z.string(),
  /** Split dimension, e.g. "locale". */
  split: z.string(),
  group: z.string(),
  reference: z.string(),
  nGroup: z.number().int(),
  nReference: z.number().int(),
  meanGroup: finite,
  meanReference: finite,
  /** meanGroup − meanReference. */
  diff: finite,
  /** Distinct cases in each group. */
  nCasesGroup: count.optional(),
  nCasesReference: count.optional(),
  /** Unadjusted 95% percentile-bootstrap interval of `diff` (absent when a group has < 2 units). */
  ci95: interval.optional(),
  /** Raw two-sided p-value, inverted from the same bootstrap interval (p < 0.05 exactly when ci95 excludes 0). */
  pValue: finite,
  /** Holm–Bonferroni adjusted p-value within the family of all deltas of the same key. */
  pAdjusted: finite.optional(),
  /** Number of tests in that family. */
  familySize: count.optional(),
  /** pAdjusted < 0.05. */
  significant: z.boolean().optional(),
  /** The verdict every rendering prints, worded when the report was built (src/eval/report/verdict.ts); absent in reports written before it. */
  verdict: z.string().optional(),
});
/**
 * Significance test of one split group against a reference group (extension
 * of the report, so split deltas are not merely indicative): a stratified
 * case-level bootstrap of the difference, the p-value inverted from the same
 * interval, Holm-adjusted within the key's family (docs/statistics.md).
 */
export interface GroupDelta extends z.output<typeof groupDeltaObject> {}
export const GroupDeltaSchema: z.ZodType<GroupDelta> = groupDeltaObject;
