/**
 * Small, seeded statistics for eval reports (docs/statistics.md): this
 * module and what it re-exports (./resample-core.ts: defaults and checks;
 * ./cluster-sums.ts and ./cluster.ts: the cluster-aware bootstrap).
 *
 * What reports and `retrace compare` use: the cluster-aware bootstrap
 * (./cluster.ts) — `clusterMean` (interval of a turn-weighted mean),
 * `bootstrapDelta` (two groups) and `pairedBootstrap` (two runs), resampling
 * whole cases by default or single turns, each with the p-value inverted from
 * its own percentile interval (`percentilePValue`), so an interval and its
 * verdict never disagree.
 *
 * Turn-level building blocks kept for the gate's regression notes and the
 * benchmarks: a percentile bootstrap interval of a mean of independent
 * values, a paired sign-flip randomization test and a two-sample permutation
 * test (these treat turns as independent).
 *
 * Everything is deterministic for a given seed: the same input gives the same
 * interval and the same p-value on every machine (no Math.random). Inputs are
 * never mutated. Pure, synchronous, no I/O.
 */
import { mulberry32 } from "../../random.js";
import type { BootstrapOptions } from "./resample-core.js";
import {
  EXACT_SIGN_FLIP_MAX_N,
  TIE_EPSILON,
  checkOptions,
  checkValues,
  mean,
  quantileSorted,
} from "./resample-core.js";
export * from "./resample-core.js";
export * from "./cluster-sums.js";
export * from "./cluster.js";

export { mulberry32 };

export function bootstrapCI(values: readonly number[], opts: BootstrapOptions = {}): [number, number] | null {
  const { seed, samples, alpha } = checkOptions(opts);
  checkValues("bootstrap", values);
  const n = values.length;
  if (n < 2) return null;
  const rand = mulberry32(seed);
  const means = new Float64Array(samples);
  for (let s = 0; s < samples; s++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += values[Math.floor(rand() * n)] as number;
    means[s] = sum / n;
  }
  means.sort();
  const sorted = Array.from(means);
  return [quantileSorted(sorted, alpha / 2), quantileSorted(sorted, 1 - alpha / 2)];
}

export interface PairedComparison {
  /** Number of ids present in both maps. */
  n: number;
  meanA: number;
  meanB: number;
  /** meanB − meanA (e.g. current − baseline): negative means B scores lower. */
  diff: number;
  /** Percentile bootstrap interval of the mean paired difference (null when n < 2). */
  ci95: [number, number] | null;
  /** Two-sided p-value of the paired sign-flip randomization test. */
  pValue: number;
  /** "exact" when all 2^n sign vectors were enumerated, else "sampled". */
  method: "exact" | "sampled";
}

/**
 * Paired comparison of two score maps (id → score) over the ids present in
 * both: mean of each side, the mean difference B − A, its bootstrap interval,
 * and a two-sided paired randomization (sign-flip) test of "no difference".
 *
 * Test: d_i = b_i − a_i; statistic T = |Σ d_i|. Under H0 each d_i is equally
 * likely to have either sign. For n ≤ 12 all 2^n sign vectors are enumerated
 * and p = #{|Σ ±d_i| ≥ T} / 2^n (exact; the observed vector is one of them).
 * Otherwise `samples` random sign vectors are drawn and
 * p = (#{|Σ ±d_i| ≥ T} + 1) / (samples + 1) (the +1 correction counts the
 * observed assignment, so p is never 0). Identical runs give p = 1.
 *
 * Returns `null` when no id is present in both (nothing to compare).
 */
export function pairedComparison(
  a: ReadonlyMap<string, number>,
  b: ReadonlyMap<string, number>,
  opts: BootstrapOptions = {},
): PairedComparison | null {
  const { seed, samples, alpha } = checkOptions(opts);
  const xs: number[] = [];
  const ys: number[] = [];
  // Sorted ids so the result does not depend on map insertion order.
  const ids = [...a.keys()].filter((id) => b.has(id)).sort();
  for (const id of ids) {
    xs.push(a.get(id) as number);
    ys.push(b.get(id) as number);
  }
  checkValues("paired A", xs);
  checkValues("paired B", ys);
  const n = ids.length;
  if (n === 0) return null;
  const d = ys.map((y, i) => y - (xs[i] as number));
  const meanA = mean(xs) as number;
  const meanB = mean(ys) as number;
  const diff = mean(d) as number;
  const observed = Math.abs(d.reduce((s, v) => s + v, 0));
  const threshold = observed - TIE_EPSILON * Math.max(1, observed);

  let pValue: number;
  let method: "exact" | "sampled";
  if (n <= EXACT_SIGN_FLIP_MAX_N) {
    method = "exact";
    const total = 2 ** n;
    let count = 0;
    for (let mask = 0; mask < total; mask++) {
      let s = 0;
      for (let i = 0; i < n; i++) s += mask & (1 << i) ? -(d[i] as number) : (d[i] as number);
      if (Math.abs(s) >= threshold) count++;
    }
    pValue = count / total;
  } else {
    method = "sampled";
    const rand = mulberry32(seed);
    let count = 0;
    for (let r = 0; r < samples; r++) {
      let s = 0;
      for (let i = 0; i < n; i++) s += rand() < 0.5 ? -(d[i] as number) : (d[i] as number);
      if (Math.abs(s) >= threshold) count++;
    }
    pValue = (count + 1) / (samples + 1);
  }
  return { n, meanA, meanB, diff, ci95: bootstrapCI(d, { seed, samples, alpha }), pValue, method };
}

export interface TwoSampleComparison {
  nA: number;
  nB: number;
  meanA: number;
  meanB: number;
  /** meanB − meanA. */
  diff: number;
  /** Percentile bootstrap interval of meanB − meanA, each group resampled on its own (null when a group has < 2 values). */
  ci95: [number, number] | null;
  /** Two-sided p-value of the permutation test, with the +1 correction. */
  pValue: number;
}

/**
 * Two-sample permutation test for unpaired groups (e.g. the es-419 turns vs
 * the en turns): statistic T = |mean(B) − mean(A)|; the pooled values are
 * shuffled `samples` times (seeded Fisher–Yates), the first nA taken as A,
 * and p = (#{T* ≥ T} + 1) / (samples + 1), two-sided. Also a bootstrap
 * interval of the difference, resampling each group independently.
 *
 * Returns `null` when either group is empty.
 */
export function permutationTest(
  a: readonly number[],
  b: readonly number[],
  opts: BootstrapOptions = {},
): TwoSampleComparison | null {
  const { seed, samples, alpha } = checkOptions(opts);
  checkValues("permutation A", a);
  checkValues("permutation B", b);
  const nA = a.length;
  const nB = b.length;
  if (nA === 0 || nB === 0) return null;
  const meanA = mean(a) as number;
  const meanB = mean(b) as number;
  const diff = meanB - meanA;
  const observed = Math.abs(diff);
  const threshold = observed - TIE_EPSILON * Math.max(1, observed);

  const pooled = [...a, ...b];
  const total = pooled.reduce((s, v) => s + v, 0);
  const rand = mulberry32(seed);
  let count = 0;
  for (let r = 0; r < samples; r++) {
    // Partial Fisher–Yates: only the first nA positions need to be drawn.
    let sumA = 0;
    for (let i = 0; i < nA; i++) {
      const j = i + Math.floor(rand() * (pooled.length - i));
      const t = pooled[i] as number;
      pooled[i] = pooled[j] as number;
      pooled[j] = t;
      sumA += pooled[i] as number;
    }
    const stat = Math.abs((total - sumA) / nB - sumA / nA);
    if (stat >= threshold) count++;
  }
  const pValue = (count + 1) / (samples + 1);

  let ci95: [number, number] | null = null;
  if (nA >= 2 && nB >= 2) {
    const boot = mulberry32(seed ^ 0x5bd1e995);
    const diffs = new Float64Array(samples);
    for (let s = 0; s < samples; s++) {
      let sa = 0;
      for (let i = 0; i < nA; i++) sa += a[Math.floor(boot() * nA)] as number;
      let sb = 0;
      for (let i = 0; i < nB; i++) sb += b[Math.floor(boot() * nB)] as number;
      diffs[s] = sb / nB - sa / nA;
    }
    diffs.sort();
    const sorted = Array.from(diffs);
    ci95 = [quantileSorted(sorted, alpha / 2), quantileSorted(sorted, 1 - alpha / 2)];
  }
  return { nA, nB, meanA, meanB, diff, ci95, pValue };
}

/** The per-turn identity used to pair runs: `caseId#turn` (turn is the 0-based index). */
export function turnKey(caseId: string, turn: number): string {
  return `${caseId}#${turn}`;
}

/** One turn's scores as the statistics see them: its case, its 0-based index, its keyed results. */
export interface ScoredTurn {
  readonly caseId: string;
  readonly turn: number;
  readonly results: readonly { readonly key: string; readonly score: number }[];
}

/** Anything that holds per-turn scores: a report's turns, or a baseline's `perTurn` map. */
export type PerTurnSource =
  { readonly turns: readonly ScoredTurn[] } | { perTurn: Readonly<Record<string, Readonly<Record<string, number>>>> };

/** Per-turn scores of one key, `caseId#turn` → score; turns without the key are absent. */
export function perTurnScores(source: PerTurnSource, key: string): Map<string, number> {
  const scores = new Map<string, number>();
  if ("turns" in source) {
    for (const t of source.turns) {
      const r = t.results.find((x) => x.key === key);
      if (r !== undefined) scores.set(turnKey(t.caseId, t.turn), r.score);
    }
  } else {
    for (const [id, byKey] of Object.entries(source.perTurn)) {
      const s = byKey[key];
      if (s !== undefined) scores.set(id, s);
    }
  }
  return scores;
}
