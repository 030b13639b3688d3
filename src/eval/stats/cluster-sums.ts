/**
 * The cluster-aware bootstrap's machinery (docs/statistics.md): what is resampled (cases or turns), the per-cluster
 * sums a replicate is drawn from, and the percentile interval and p-value read from the sorted replicates.
 * Re-exported by src/eval/stats/bootstrap.ts. Pure, synchronous, no I/O.
 */
import { InvalidArgumentError } from "../../errors.js";
import type { BootstrapOptions } from "./resample-core.js";
import { DEFAULT_ALPHA, quantileSorted } from "./resample-core.js";

// ---------------------------------------------------------------- cluster-aware bootstrap (docs/statistics.md)

/** What a bootstrap resamples: whole cases (all turns of a case together) or single turns. */
export type ResampleUnit = "case" | "turn";
export const RESAMPLE_UNITS: readonly ResampleUnit[] = Object.freeze(["case", "turn"]);
/** Cases by default: turns of one conversation are correlated (docs/statistics.md). */
export const DEFAULT_RESAMPLE: ResampleUnit = "case";

/** One scored turn and the case (cluster) it belongs to. */
export interface ClusteredValue {
  cluster: string;
  value: number;
}

export interface ClusterOptions extends BootstrapOptions {
  /** Resampling unit (default "case"). */
  unit?: ResampleUnit;
}

/** Per-cluster sums and counts: the sufficient statistics of a turn-weighted mean. */
export interface ClusterSums {
  sums: Float64Array;
  counts: Float64Array;
  /** Number of distinct cases (whatever the unit). */
  nCases: number;
  nTurns: number;
  total: number;
}

/**
 * Groups values into resampling units. Unit "case": one unit per distinct
 * cluster id, in id order (so the result does not depend on input order);
 * unit "turn": one unit per value, ordered by cluster id then input order.
 */
export function clusterSums(
  values: readonly ClusteredValue[],
  unit: ResampleUnit,
  name: string,
  known?: KnownClusters,
): ClusterSums {
  if (known !== undefined && unit === "case") {
    const same = sumsOverKnown(values, known, name);
    if (same !== null) return same;
  }
  const byCluster = new Map<string, number[]>();
  for (const v of values) {
    checkFinite(v, name);
    const arr = byCluster.get(v.cluster);
    if (arr === undefined) byCluster.set(v.cluster, [v.value]);
    else arr.push(v.value);
  }
  const ids = [...byCluster.keys()].sort();
  const sums: number[] = [];
  const counts: number[] = [];
  let total = 0;
  for (const id of ids) {
    const vs = byCluster.get(id) as number[];
    if (unit === "case") {
      let s = 0;
      for (const x of vs) s += x;
      sums.push(s);
      counts.push(vs.length);
      total += s;
    } else {
      for (const x of vs) {
        sums.push(x);
        counts.push(1);
        total += x;
      }
    }
  }
  if (known !== undefined && unit === "case") {
    known.clear();
    ids.forEach((id, i) => known.set(id, i));
  }
  return {
    sums: Float64Array.from(sums),
    counts: Float64Array.from(counts),
    nCases: ids.length,
    nTurns: values.length,
    total,
  };
}

/**
 * The case ids of the last list a batch grouped, each with its position in
 * id order: the lists of one report mostly hold the same cases, so the next
 * list is summed straight into their slots, with no grouping and no sort.
 */
export type KnownClusters = Map<string, number>;

export function checkFinite(v: ClusteredValue, name: string): void {
  if (typeof v.value !== "number" || !Number.isFinite(v.value))
    throw new InvalidArgumentError(`${name} values`, "finite numbers", v.value);
}

/**
 * `clusterSums` (unit "case") of a list whose cases are exactly `known`'s,
 * or null when they are not (a case missing or another one): each case's
 * values added in input order from 0 and the total in id order, as the
 * general path adds them, so the sums are the same bit for bit.
 */
export function sumsOverKnown(
  values: readonly ClusteredValue[],
  known: KnownClusters,
  name: string,
): ClusterSums | null {
  const m = known.size;
  const sums = new Float64Array(m);
  const counts = new Float64Array(m);
  for (const v of values) {
    checkFinite(v, name);
    const i = known.get(v.cluster);
    if (i === undefined) return null;
    sums[i] = sums[i]! + v.value;
    counts[i] = counts[i]! + 1;
  }
  let total = 0;
  for (let i = 0; i < m; i++) {
    if (counts[i] === 0) return null;
    total += sums[i]!;
  }
  return { sums, counts, nCases: m, nTurns: values.length, total };
}

/** One bootstrap draw of the turn-weighted mean: m units drawn with replacement, Σ sums / Σ counts. */
export function drawRatio(c: ClusterSums, rand: () => number): number {
  const m = c.sums.length;
  let s = 0;
  let n = 0;
  for (let i = 0; i < m; i++) {
    const j = Math.floor(rand() * m);
    s += c.sums[j] as number;
    n += c.counts[j] as number;
  }
  return s / n;
}

/** Sorted copy of bootstrap replicates. */
export function sortedReplicates(xs: Float64Array): number[] {
  const copy = Float64Array.from(xs);
  copy.sort();
  return Array.from(copy);
}

/** Percentile interval [Q(α/2), Q(1 − α/2)] of sorted replicates (type-7 quantiles). */
export function percentileInterval(sorted: readonly number[], alpha: number = DEFAULT_ALPHA): [number, number] {
  return [quantileSorted(sorted, alpha / 2), quantileSorted(sorted, 1 - alpha / 2)];
}

/**
 * Two-sided p-value obtained by inverting the percentile interval
 * (Efron & Tibshirani 1993, ch. 15–16; docs/statistics.md): the smallest α at
 * which the (1 − α) percentile interval of the same sorted replicates
 * excludes 0. With Q the type-7 quantile function (continuous,
 * non-decreasing), a = max{p : Q(p) ≤ 0} and b = min{p : Q(p) ≥ 0},
 * p = min(1, 2·min(a, 1 − b)); a is taken as 0 when every replicate is > 0
 * and 1 − b as 0 when every replicate is < 0. Hence, for every α,
 * `p < α` exactly when `[Q(α/2), Q(1 − α/2)]` excludes 0, so an interval
 * and its verdict can never disagree.
 *
 * The bootstrap cannot resolve a p below 1/B (B = number of replicates), so
 * p is floored at 1/B (e.g. 0.0005 for B = 2,000); the equivalence above
 * holds for every α > 1/B. All replicates equal to 0 give p = 1.
 */
export function percentilePValue(sorted: readonly number[]): number {
  const B = sorted.length;
  if (B === 0) throw new InvalidArgumentError("replicates", "a non-empty list", []);
  const first = sorted[0] as number;
  const last = sorted[B - 1] as number;
  if (B === 1) return 1;
  const scale = B - 1;
  // In index units h = (B − 1)·p, so that integer crossings stay exact.
  // hA: the largest h with Q <= 0.
  let hA: number;
  if (first > 0) hA = 0;
  else if (last <= 0) hA = scale;
  else {
    let i = 0;
    while ((sorted[i + 1] as number) <= 0) i++;
    const xi = sorted[i] as number;
    const xj = sorted[i + 1] as number;
    hA = i + (0 - xi) / (xj - xi);
  }
  // hB: the smallest h with Q >= 0.
  let hB: number;
  if (last < 0) hB = scale;
  else if (first >= 0) hB = 0;
  else {
    let j = B - 1;
    while ((sorted[j - 1] as number) >= 0) j--;
    const xi = sorted[j - 1] as number;
    const xj = sorted[j] as number;
    hB = j - 1 + (0 - xi) / (xj - xi);
  }
  const p = Math.min(1, (2 * Math.min(hA, scale - hB)) / scale);
  return Math.max(p, 1 / B);
}
