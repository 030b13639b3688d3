/**
 * The split groups of a report's turns and the deltas between them
 * (./aggregate.ts; docs/statistics.md): groups by kind, locale or an extra
 * split in canonical order, and each group's delta against its split's
 * reference group per key, with a bootstrap interval and the p-value
 * inverted from it, all deltas of one key forming one Holm–Bonferroni family.
 */
import { holmAdjust } from "../stats/holm.js";
import { bootstrapDelta, type ClusteredValue, type ResampleUnit } from "../stats/bootstrap.js";
import { collect } from "./collect.js";
import type { GroupDelta, TurnReport } from "./types.js";
import { wordDeltaVerdict } from "./verdict.js";

/** Significance level of the adjusted p-values (a delta is significant when its Holm-adjusted p is below it). */
export const FAMILY_ALPHA = 0.05;
/** How deltas are tested, as named in the report. */
export const DELTA_TEST = "stratified percentile bootstrap of the difference; p inverted from the same interval";
/** How p-values are adjusted, as named in the report. */
export const DELTA_CORRECTION = "Holm–Bonferroni within each metric (all its split deltas form one family)";

export interface ExtraSplit {
  /** Key under `Report.splits`, e.g. "part"; not "kind" or "locale". */
  name: string;
  /** Group of a case, e.g. "tune" or "holdout"; undefined leaves the case out of this split. */
  groupOf: (caseId: string) => string | undefined;
  /** Canonical group order (others follow alphabetically). */
  order?: readonly string[];
  /** Group the others are compared with (default: the first group present). */
  reference?: string;
}

/** How the bootstrap resamples: seed, resamples and unit. */
export interface Resample {
  seed: number;
  samples: number;
  unit: ResampleUnit;
}

/** Groups in a canonical order: the known values first (in their order), then others alphabetically. */
export function groupBy(
  turns: readonly TurnReport[],
  field: "kind" | "locale",
  known: readonly string[],
): Map<string, TurnReport[]> {
  const seen = new Map<string, TurnReport[]>();
  for (const t of turns) {
    const g = t[field];
    const arr = seen.get(g);
    if (arr === undefined) seen.set(g, [t]);
    else arr.push(t);
  }
  const order = [...known.filter((g) => seen.has(g)), ...[...seen.keys()].filter((g) => !known.includes(g)).sort()];
  return new Map(order.map((g) => [g, seen.get(g) as TurnReport[]]));
}

/** Groups of an extra split, in its canonical order; turns of cases without a group are left out. */
export function groupByCase(turns: readonly TurnReport[], split: ExtraSplit): Map<string, TurnReport[]> {
  const seen = new Map<string, TurnReport[]>();
  for (const t of turns) {
    const g = split.groupOf(t.caseId);
    if (g === undefined) continue;
    const arr = seen.get(g);
    if (arr === undefined) seen.set(g, [t]);
    else arr.push(t);
  }
  const known = split.order ?? [];
  const order = [...known.filter((g) => seen.has(g)), ...[...seen.keys()].filter((g) => !known.includes(g)).sort()];
  return new Map(order.map((g) => [g, seen.get(g) as TurnReport[]]));
}

/** One split dimension for deltas: its name, its groups (canonical order) and the reference group. */
export interface SplitForDeltas {
  split: string;
  groups: Map<string, TurnReport[]>;
  reference: string | undefined;
}

/**
 * Deltas of every non-reference group against the reference group of each
 * split, for each key; then, per key, the Holm adjustment over all of that
 * key's deltas (every split together).
 */
export function splitDeltas(splits: readonly SplitForDeltas[], keys: readonly string[], opts: Resample): GroupDelta[] {
  const deltas: GroupDelta[] = [];
  for (const key of keys) {
    const family: GroupDelta[] = [];
    for (const { split, groups, reference } of splits) {
      if (groups.size < 2) continue;
      const ref = reference !== undefined && groups.has(reference) ? reference : ([...groups.keys()][0] as string);
      const refValues = collect(groups.get(ref) as TurnReport[], [key]).get(key) as ClusteredValue[];
      if (refValues.length === 0) continue;
      for (const [group, turns] of groups) {
        if (group === ref) continue;
        const values = collect(turns, [key]).get(key) as ClusteredValue[];
        const test = bootstrapDelta(refValues, values, opts);
        if (test === null) continue;
        const d: GroupDelta = {
          key,
          split,
          group,
          reference: ref,
          nGroup: test.nB,
          nReference: test.nA,
          nCasesGroup: test.nCasesB,
          nCasesReference: test.nCasesA,
          meanGroup: test.meanB,
          meanReference: test.meanA,
          diff: test.diff,
          pValue: test.pValue,
        };
        if (test.ci95 !== null) d.ci95 = test.ci95;
        family.push(d);
      }
    }
    const adjusted = holmAdjust(family.map((d) => d.pValue));
    family.forEach((d, i) => {
      d.pAdjusted = adjusted[i] as number;
      d.familySize = family.length;
      d.significant = (adjusted[i] as number) < FAMILY_ALPHA;
      d.verdict = wordDeltaVerdict(d); // worded once, here; every rendering prints it
    });
    deltas.push(...family);
  }
  return deltas;
}
