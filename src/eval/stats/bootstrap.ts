/**
 * Small, seeded statistics for eval reports (docs/statistics.md). Over 400
 * lines because the turn-level and the cluster-aware bootstraps share the
 * seeded resampling and percentile helpers below; each function is short.
 *
 * What reports and `retrace compare` use: the cluster-aware bootstrap at the
 * end of this file — `clusterMean` (interval of a turn-weighted mean),
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
import { InvalidArgumentError } from "../../errors.js";
import { mulberry32 } from "../../random.js";
import { drawRatios } from "./draws.js";

export { mulberry32 };

/** Default seed of every resampling procedure in retrace. */
export const DEFAULT_SEED = 42;
/** Default number of bootstrap / randomization resamples. */
export const DEFAULT_SAMPLES = 2000;
/** Default alpha: a 95% interval. */
export const DEFAULT_ALPHA = 0.05;
/** A comparison or delta is "significant" when its (adjusted) p is below this, exactly when its 95% interval excludes 0 (docs/statistics.md). */
export const SIGNIFICANCE_LEVEL = 0.05;
/**
 * Up to this many pairs the sign-flip test enumerates all 2^n sign vectors
 * and gives the exact p-value; above it, it samples `samples` random ones.
 */
export const EXACT_SIGN_FLIP_MAX_N = 12;

/** Relative tolerance when comparing a resampled statistic with the observed one (float noise). */
const TIE_EPSILON = 1e-9;

export interface ResampleOptions {
  /** PRNG seed (default 42). */
  seed?: number;
  /** Number of resamples (default 2,000). */
  samples?: number;
}

export interface BootstrapOptions extends ResampleOptions {
  /** 1 − confidence level (default 0.05 → a 95% interval). */
  alpha?: number;
}

function checkOptions(opts: BootstrapOptions): { seed: number; samples: number; alpha: number } {
  const seed = opts.seed ?? DEFAULT_SEED;
  const samples = opts.samples ?? DEFAULT_SAMPLES;
  const alpha = opts.alpha ?? DEFAULT_ALPHA;
  if (!Number.isInteger(seed)) throw new InvalidArgumentError("seed", "an integer", seed);
  if (!Number.isInteger(samples) || samples <= 0)
    throw new InvalidArgumentError("samples", "a positive integer", samples);
  if (!(alpha > 0 && alpha < 1)) throw new InvalidArgumentError("alpha", "a number strictly between 0 and 1", alpha);
  return { seed, samples, alpha };
}

function checkValues(name: string, values: readonly number[]): void {
  for (const v of values) {
    if (typeof v !== "number" || !Number.isFinite(v))
      throw new InvalidArgumentError(`${name} values`, "finite numbers", v);
  }
}

/** Arithmetic mean; `null` for an empty list (nothing measured is not 0). */
export function mean(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  let s = 0;
  for (const v of values) s += v;
  return s / values.length;
}

/**
 * Quantile of an ascending-sorted list with linear interpolation between
 * order statistics (Hyndman & Fan type 7, R's and NumPy's default):
 * h = (n − 1)·p, q = x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]).
 */
export function quantileSorted(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new InvalidArgumentError("values", "a non-empty list", []);
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  const xl = sorted[lo] as number;
  const xh = sorted[hi] as number;
  return xl + (h - lo) * (xh - xl);
}

/**
 * Percentile bootstrap interval of the mean: draw `samples` resamples of the
 * values with replacement (seeded), take each resample's mean, and return the
 * alpha/2 and 1 − alpha/2 quantiles (type 7) of those means.
 *
 * Returns `null` when there are fewer than 2 values (one value has no
 * spread to resample). Constant values give a zero-width interval [v, v].
 */
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
interface ClusterSums {
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
function clusterSums(
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
type KnownClusters = Map<string, number>;

function checkFinite(v: ClusteredValue, name: string): void {
  if (typeof v.value !== "number" || !Number.isFinite(v.value))
    throw new InvalidArgumentError(`${name} values`, "finite numbers", v.value);
}

/**
 * `clusterSums` (unit "case") of a list whose cases are exactly `known`'s,
 * or null when they are not (a case missing or another one): each case's
 * values added in input order from 0 and the total in id order, as the
 * general path adds them, so the sums are the same bit for bit.
 */
function sumsOverKnown(values: readonly ClusteredValue[], known: KnownClusters, name: string): ClusterSums | null {
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
function drawRatio(c: ClusterSums, rand: () => number): number {
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
function sortedReplicates(xs: Float64Array): number[] {
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

export interface ClusterMean {
  /** Turn-weighted mean: Σ values / number of values. */
  mean: number;
  /** Number of values (turns). */
  n: number;
  /** Number of distinct clusters (cases). */
  nCases: number;
  /** Percentile bootstrap interval of the mean with the chosen unit; null when fewer than 2 units. */
  ci95: [number, number] | null;
  unit: ResampleUnit;
}

/**
 * Turn-weighted mean with a seeded percentile-bootstrap interval that
 * resamples whole cases (unit "case", the cluster bootstrap of Field & Welsh
 * 2007: draw as many cases as there are, with replacement, and take the
 * ratio Σ turn scores / Σ turns of the drawn cases) or single turns (unit
 * "turn", the i.i.d. bootstrap of Efron & Tibshirani 1993, which is too
 * narrow when turns of a case are correlated). The estimate itself is the
 * same for both units: the plain mean over turns.
 *
 * Returns `null` for an empty list; `ci95` is null when there are fewer than
 * 2 resampling units. Constant values give [v, v].
 */
export function clusterMean(values: readonly ClusteredValue[], opts: ClusterOptions = {}): ClusterMean | null {
  const { seed, samples, alpha } = checkOptions(opts);
  const unit = opts.unit ?? DEFAULT_RESAMPLE;
  const c = clusterSums(values, unit, "bootstrap");
  if (c.nTurns === 0) return null;
  const mean = c.total / c.nTurns;
  let ci95: [number, number] | null = null;
  if (c.sums.length >= 2) {
    const rand = mulberry32(seed);
    const reps = new Float64Array(samples);
    for (let s = 0; s < samples; s++) reps[s] = drawRatio(c, rand);
    ci95 = percentileInterval(sortedReplicates(reps), alpha);
  }
  return { mean, n: c.nTurns, nCases: c.nCases, ci95, unit };
}

export interface BootstrapDelta {
  nA: number;
  nB: number;
  nCasesA: number;
  nCasesB: number;
  meanA: number;
  meanB: number;
  /** meanB − meanA. */
  diff: number;
  /** Percentile bootstrap interval of `diff` (null when a side has fewer than 2 units). */
  ci95: [number, number] | null;
  /** Two-sided p-value from inverting the same percentile interval (see percentilePValue); 1 when ci95 is null. */
  pValue: number;
  unit: ResampleUnit;
}

/**
 * Difference of two independent groups' turn-weighted means (e.g. es-419
 * turns minus en turns), with a stratified bootstrap: each group's units
 * (cases, or turns) are resampled separately, `samples` times, and the
 * percentile interval of meanB* − meanA* is returned together with the
 * p-value obtained by inverting it (percentilePValue), so the interval
 * excludes 0 exactly when p < 0.05. Assumes no case has turns in both groups
 * (true of locale and kind splits: a case has one locale and one kind).
 *
 * Returns `null` when either group is empty.
 */
export function bootstrapDelta(
  a: readonly ClusteredValue[],
  b: readonly ClusteredValue[],
  opts: ClusterOptions = {},
): BootstrapDelta | null {
  const { seed, samples, alpha } = checkOptions(opts);
  const unit = opts.unit ?? DEFAULT_RESAMPLE;
  const ca = clusterSums(a, unit, "group A");
  const cb = clusterSums(b, unit, "group B");
  if (ca.nTurns === 0 || cb.nTurns === 0) return null;
  const meanA = ca.total / ca.nTurns;
  const meanB = cb.total / cb.nTurns;
  let ci95: [number, number] | null = null;
  let pValue = 1;
  if (ca.sums.length >= 2 && cb.sums.length >= 2) {
    const rand = mulberry32(seed);
    const reps = new Float64Array(samples);
    for (let s = 0; s < samples; s++) {
      const ra = drawRatio(ca, rand);
      reps[s] = drawRatio(cb, rand) - ra;
    }
    const sorted = sortedReplicates(reps);
    ci95 = percentileInterval(sorted, alpha);
    pValue = percentilePValue(sorted);
  }
  return {
    nA: ca.nTurns,
    nB: cb.nTurns,
    nCasesA: ca.nCases,
    nCasesB: cb.nCases,
    meanA,
    meanB,
    diff: meanB - meanA,
    ci95,
    pValue,
    unit,
  };
}

export interface PairedBootstrap {
  /** Number of turns scored in both runs. */
  n: number;
  /** Number of distinct cases among them. */
  nCases: number;
  meanA: number;
  meanB: number;
  /** meanB − meanA over the shared turns. */
  diff: number;
  /** Percentile bootstrap interval of the mean paired difference (null when fewer than 2 units). */
  ci95: [number, number] | null;
  /** Two-sided p-value from inverting the same interval (percentilePValue); 1 when ci95 is null. */
  pValue: number;
  unit: ResampleUnit;
}

/** `caseId#turn` → caseId (the text before the last `#`). */
export function caseOfTurnKey(id: string): string {
  const i = id.lastIndexOf("#");
  return i < 0 ? id : id.slice(0, i);
}

/**
 * Paired comparison of two runs over the turns both scored (maps keyed
 * `caseId#turn`): d = b − a per turn; the estimate is the mean of d over
 * turns; the bootstrap resamples whole cases (their d's together) or single
 * turns, and the p-value inverts the same percentile interval, so an
 * interval excluding 0 always comes with p < 0.05. Identical runs give
 * [0, 0] and p = 1. `null` when no turn is shared.
 */
export function pairedBootstrap(
  a: ReadonlyMap<string, number>,
  b: ReadonlyMap<string, number>,
  opts: ClusterOptions = {},
): PairedBootstrap | null {
  const { seed, samples, alpha } = checkOptions(opts);
  const unit = opts.unit ?? DEFAULT_RESAMPLE;
  const ids = [...a.keys()].filter((id) => b.has(id)).sort();
  if (ids.length === 0) return null;
  const xs = ids.map((id) => a.get(id) as number);
  const ys = ids.map((id) => b.get(id) as number);
  checkValues("paired A", xs);
  checkValues("paired B", ys);
  const d = clusterSums(
    ids.map((id, i) => ({ cluster: caseOfTurnKey(id), value: (ys[i] as number) - (xs[i] as number) })),
    unit,
    "paired",
  );
  let ci95: [number, number] | null = null;
  let pValue = 1;
  if (d.sums.length >= 2) {
    const rand = mulberry32(seed);
    const reps = new Float64Array(samples);
    for (let s = 0; s < samples; s++) reps[s] = drawRatio(d, rand);
    const sorted = sortedReplicates(reps);
    ci95 = percentileInterval(sorted, alpha);
    pValue = percentilePValue(sorted);
  }
  return {
    n: ids.length,
    nCases: d.nCases,
    meanA: mean(xs) as number,
    meanB: mean(ys) as number,
    diff: d.total / d.nTurns,
    ci95,
    pValue,
    unit,
  };
}

/** A `clusterMean` whose interval a `ClusterMeanBatch` fills in when it runs. */
export interface PendingClusterMean {
  mean: number;
  n: number;
  nCases: number;
  unit: ResampleUnit;
}

/**
 * Many `clusterMean`s with one seed, sample count, alpha and unit, computed
 * together (a report's aggregates and funnel rows; docs/statistics.md): the
 * results are exactly those of calling `clusterMean` on each list, bit for
 * bit. `add` gives the mean, n and number of cases at once; `run` computes
 * every interval and hands each to its callback.
 *
 * Why it is faster: a resample's unit draws j = ⌊rand()·m⌋ depend only on
 * the seed and the number of units m, never on the values, so every list
 * with the same m shares one stream of draws. `run` draws it once per m and
 * adds each list's sums and counts in draw order (the same additions, in the
 * same order, as `drawRatio`), instead of once per list; lists whose sums
 * and counts are equal (a split group holding every turn, a funnel stage
 * equal to a metric) are computed once.
 */
export class ClusterMeanBatch {
  private readonly seed: number;
  private readonly samples: number;
  private readonly alpha: number;
  private readonly unit: ResampleUnit;
  private readonly pending: { c: ClusterSums; done: (ci95: [number, number] | null) => void }[] = [];
  private readonly known: KnownClusters = new Map();
  /** The sums of each list added, by the list itself: a list added again (a split group holding every turn) is not summed again. */
  private readonly summed = new WeakMap<readonly ClusteredValue[], ClusterSums>();

  constructor(opts: ClusterOptions = {}) {
    const { seed, samples, alpha } = checkOptions(opts);
    this.seed = seed;
    this.samples = samples;
    this.alpha = alpha;
    this.unit = opts.unit ?? DEFAULT_RESAMPLE;
  }

  /**
   * The mean of `values` now (null for an empty list), its interval (null
   * with fewer than 2 units) to `done` when `run` is called. `values` is not
   * to be changed afterwards: the same list added again reuses its sums.
   */
  add(values: readonly ClusteredValue[], done: (ci95: [number, number] | null) => void): PendingClusterMean | null {
    let c = this.summed.get(values);
    if (c === undefined) {
      c = clusterSums(values, this.unit, "bootstrap", this.known);
      this.summed.set(values, c);
    }
    if (c.nTurns === 0) return null;
    this.pending.push({ c, done });
    return { mean: c.total / c.nTurns, n: c.nTurns, nCases: c.nCases, unit: this.unit };
  }

  /** Computes every pending interval (then the batch is empty again) and calls the callbacks in the order the lists were added. */
  run(): void {
    const pending = this.pending.splice(0);
    const results: ([number, number] | null)[] = pending.map(() => null);
    const byUnits = new Map<number, number[]>();
    pending.forEach((p, i) => {
      const m = p.c.sums.length;
      if (m < 2) return; // one unit has no spread to resample
      const list = byUnits.get(m);
      if (list === undefined) byUnits.set(m, [i]);
      else list.push(i);
    });
    for (const [m, list] of byUnits) {
      // Distinct (sums, counts) pairs; duplicates share the result.
      const distinct: ClusterSums[] = [];
      const slot: number[] = [];
      for (const i of list) {
        const c = pending[i]!.c;
        let at = distinct.findIndex((d) => d === c || (sameArray(d.sums, c.sums) && sameArray(d.counts, c.counts)));
        if (at < 0) {
          at = distinct.length;
          distinct.push(c);
        }
        slot.push(at);
      }
      const intervals = drawRatios(distinct, m, this.seed, this.samples).map((r) =>
        percentileInterval(sortedReplicates(r), this.alpha),
      );
      list.forEach((i, x) => {
        const ci = intervals[slot[x]!]!;
        results[i] = [ci[0], ci[1]];
      });
    }
    pending.forEach((p, i) => p.done(results[i]!));
  }
}

function sameArray(a: Float64Array, b: Float64Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}
