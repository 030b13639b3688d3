/**
 * Statistics of repeated runs (`retrace eval --graph --repeat N`;
 * docs/ci.md, "Repeats and flaky turns"). A graph that is not deterministic
 * (an LLM condenses the question, picks a tool) scores a turn differently
 * from one run to the next: each turn has N values, one per repeat, and a
 * mean's uncertainty has two sources — which cases were drawn (between) and
 * which of the graph's random choices happened (within, the repeats).
 *
 * - `twoStageMean`: the mean over turns of each turn's mean over repeats, with
 *   a seeded two-stage percentile bootstrap (Davison & Hinkley 1997, §3.8):
 *   draw cases with replacement, then, within each drawn case, N repeat
 *   indices with replacement (one draw for all turns of the case: a repeat is
 *   one conversation on one thread, so its turns go together).
 * - `varianceShares`: the law of total variance over the turn × repeat
 *   values: within = the mean over turns of the (population) variance across
 *   repeats, between = the (population) variance of the turns' repeat means;
 *   within + between = the total variance of all values.
 *
 * - `repeatDropBound`: the one-sided lower bound of a drop (baseline mean −
 *   run mean) over the same turns, from a bootstrap of the repeats within
 *   each case with the cases held fixed (the baseline gate's interval-aware
 *   test; docs/statistics.md, "Baseline gates with repeats").
 *
 * Pure and deterministic: the same values and seed give the same interval.
 */
import { InvalidArgumentError } from "../../errors.js";
import { mulberry32 } from "../../random.js";
import { DEFAULT_ALPHA, DEFAULT_SAMPLES, DEFAULT_SEED, percentileInterval, quantileSorted } from "./bootstrap.js";

/** One turn's values over the repeats (index r = repeat r + 1; every turn of a run has the same number of repeats). */
export interface RepeatedValue {
  /** The case the turn belongs to (the first-stage resampling unit). */
  cluster: string;
  values: readonly number[];
}

export interface TwoStageMean {
  /** Mean over turns of each turn's mean over repeats. */
  mean: number;
  /** Turns. */
  n: number;
  nCases: number;
  /** Repeats per turn. */
  repeats: number;
  /** 95% two-stage percentile-bootstrap interval; null with fewer than 2 cases. */
  ci95: [number, number] | null;
}

function checkValues(values: readonly RepeatedValue[]): number {
  const r = values[0]?.values.length ?? 0;
  for (const v of values) {
    if (v.values.length !== r || r === 0)
      throw new InvalidArgumentError(
        "repeated values",
        `the same positive number of repeats for every turn (${r})`,
        v.values.length,
      );
    for (const x of v.values)
      if (typeof x !== "number" || !Number.isFinite(x))
        throw new InvalidArgumentError("repeated values", "finite numbers", x);
  }
  return r;
}

/**
 * The two-stage bootstrap of the turn-weighted mean of repeat means (see the
 * module comment). Cases are taken in id order, turns in input order, so the
 * result does not depend on the order of cases in the input. Returns null for
 * no turns. With every turn's repeats identical, the second stage changes
 * nothing and the interval is the one-stage case bootstrap's width.
 */
export function twoStageMean(
  values: readonly RepeatedValue[],
  opts: { seed?: number; samples?: number; alpha?: number } = {},
): TwoStageMean | null {
  if (values.length === 0) return null;
  const R = checkValues(values);
  const seed = opts.seed ?? DEFAULT_SEED;
  const samples = opts.samples ?? DEFAULT_SAMPLES;
  const alpha = opts.alpha ?? DEFAULT_ALPHA;
  if (!Number.isInteger(samples) || samples < 1)
    throw new InvalidArgumentError("samples", "a positive integer", samples);
  const byCase = new Map<string, (readonly number[])[]>();
  for (const v of values) {
    const arr = byCase.get(v.cluster);
    if (arr === undefined) byCase.set(v.cluster, [v.values]);
    else arr.push(v.values);
  }
  const cases = [...byCase.keys()].sort().map((id) => byCase.get(id) as (readonly number[])[]);
  let total = 0;
  for (const v of values) for (const x of v.values) total += x;
  const mean = total / (values.length * R);
  let ci95: [number, number] | null = null;
  if (cases.length >= 2) {
    const rand = mulberry32(seed);
    const reps = new Float64Array(samples);
    const picks = new Int32Array(R);
    for (let s = 0; s < samples; s++) {
      let sum = 0;
      let turns = 0;
      for (let c = 0; c < cases.length; c++) {
        const turnsOfCase = cases[Math.floor(rand() * cases.length)] as (readonly number[])[];
        for (let r = 0; r < R; r++) picks[r] = Math.floor(rand() * R);
        for (const tv of turnsOfCase) {
          let m = 0;
          for (let r = 0; r < R; r++) m += tv[picks[r] as number] as number;
          sum += m / R;
          turns++;
        }
      }
      reps[s] = sum / turns;
    }
    reps.sort();
    ci95 = percentileInterval(Array.from(reps), alpha);
  }
  return { mean, n: values.length, nCases: cases.length, repeats: R, ci95 };
}

export interface VarianceShares {
  /** Population variance of all turn × repeat values. */
  total: number;
  /** Mean over turns of the variance across repeats (the graph's own randomness). */
  within: number;
  /** Variance of the turns' repeat means (the cases and their turns). */
  between: number;
  /** within / total (0 when total is 0). */
  withinShare: number;
  /** between / total (0 when total is 0). */
  betweenShare: number;
}

/** The within/between decomposition of the values' variance (law of total variance, every turn weighted equally). Null for no turns. */
export function varianceShares(values: readonly RepeatedValue[]): VarianceShares | null {
  if (values.length === 0) return null;
  const R = checkValues(values);
  let grand = 0;
  const means = values.map((v) => {
    let s = 0;
    for (const x of v.values) s += x;
    grand += s;
    return s / R;
  });
  grand /= values.length * R;
  let within = 0;
  let between = 0;
  values.forEach((v, i) => {
    const m = means[i] as number;
    for (const x of v.values) within += (x - m) ** 2;
    between += (m - grand) ** 2;
  });
  within /= values.length * R;
  between /= values.length;
  const total = within + between;
  return {
    total,
    within,
    between,
    withinShare: total > 0 ? within / total : 0,
    betweenShare: total > 0 ? between / total : 0,
  };
}

/** One turn scored by both runs of a baseline comparison: its case, and each run's scores over its repeats (one value: a run without repeats). */
export interface PairedRepeats {
  cluster: string;
  /** The baseline's scores of the turn, one per repeat. */
  base: readonly number[];
  /** This run's scores of the turn, one per repeat. */
  run: readonly number[];
}

export interface RepeatDropBound {
  /** Baseline mean − run mean over the turns (each turn's mean over its repeats). */
  drop: number;
  /** The one-sided (1 − alpha) lower bound of the drop: the alpha quantile of the resampled drops. */
  lower: number;
  /** The confidence level, 1 − alpha. */
  level: number;
  n: number;
  nCases: number;
  /** Repeats per turn on each side (the largest, when turns differ). */
  repeats: { base: number; run: number };
}

/**
 * The interval-aware baseline test (docs/statistics.md, "Baseline gates with
 * repeats"): a percentile bootstrap of the drop `mean(base) − mean(run)`,
 * each mean the turn-weighted mean of the turns' repeat means, where one
 * resample keeps every case (both runs scored the same cases: which cases
 * were drawn is no difference between them) and draws, within each case and
 * for each run on its own, as many repeat indices with replacement as that
 * run has repeats (one draw for all turns of the case: a repeat is one
 * conversation). A run with one value per turn (no repeats, or identical
 * repeats) contributes its mean as a fixed number; with no variation on
 * either side every resampled drop is the observed one and `lower === drop`
 * (the point comparison). `lower` is the `alpha` quantile (type 7) of the
 * sorted resampled drops: the drop exceeds `lower` with confidence 1 − alpha.
 * Cases are taken in id order, so the input order does not matter. Null for
 * no turns.
 */
export function repeatDropBound(
  turns: readonly PairedRepeats[],
  opts: { seed?: number; samples?: number; alpha?: number } = {},
): RepeatDropBound | null {
  if (turns.length === 0) return null;
  const seed = opts.seed ?? DEFAULT_SEED;
  const samples = opts.samples ?? DEFAULT_SAMPLES;
  const alpha = opts.alpha ?? DEFAULT_ALPHA;
  if (!Number.isInteger(samples) || samples < 1)
    throw new InvalidArgumentError("samples", "a positive integer", samples);
  if (!(alpha > 0 && alpha < 1)) throw new InvalidArgumentError("alpha", "a number between 0 and 1, exclusive", alpha);
  const byCase = new Map<string, PairedRepeats[]>();
  for (const t of turns) {
    for (const side of [t.base, t.run]) {
      if (side.length === 0)
        throw new InvalidArgumentError("paired repeats", "at least one score per turn on each side", side.length);
      for (const x of side)
        if (typeof x !== "number" || !Number.isFinite(x))
          throw new InvalidArgumentError("paired repeats", "finite numbers", x);
    }
    const arr = byCase.get(t.cluster);
    if (arr === undefined) byCase.set(t.cluster, [t]);
    else arr.push(t);
  }
  const cases = [...byCase.keys()].sort().map((id) => byCase.get(id) as PairedRepeats[]);
  const mean = (v: readonly number[]) => v.reduce((a, b) => a + b, 0) / v.length;
  let drop = 0;
  for (const t of turns) drop += mean(t.base) - mean(t.run);
  drop /= turns.length;
  const rBase = Math.max(...turns.map((t) => t.base.length));
  const rRun = Math.max(...turns.map((t) => t.run.length));
  for (const t of turns)
    if ((t.base.length !== 1 && t.base.length !== rBase) || (t.run.length !== 1 && t.run.length !== rRun))
      throw new InvalidArgumentError(
        "paired repeats",
        `one score or every repeat's per turn (${rBase} baseline, ${rRun} run)`,
        `${t.base.length} and ${t.run.length}`,
      );
  const varies = turns.some((t) => t.base.some((x) => x !== t.base[0]) || t.run.some((x) => x !== t.run[0]));
  let lower = drop;
  if (varies) {
    const rand = mulberry32(seed);
    const reps = new Float64Array(samples);
    const picksBase = new Int32Array(rBase);
    const picksRun = new Int32Array(rRun);
    for (let s = 0; s < samples; s++) {
      let sum = 0;
      for (const turnsOfCase of cases) {
        // Each case's turns share their repeat draws (a repeat is one conversation).
        for (let r = 0; r < rBase; r++) picksBase[r] = Math.floor(rand() * rBase);
        for (let r = 0; r < rRun; r++) picksRun[r] = Math.floor(rand() * rRun);
        for (const t of turnsOfCase) sum += resampledMean(t.base, picksBase) - resampledMean(t.run, picksRun);
      }
      reps[s] = sum / turns.length;
    }
    reps.sort();
    lower = quantileSorted(Array.from(reps), alpha);
  }
  return { drop, lower, level: 1 - alpha, n: turns.length, nCases: cases.length, repeats: { base: rBase, run: rRun } };
}

/** The mean of `values` at the drawn indices; a one-value side is fixed. */
function resampledMean(values: readonly number[], picks: Int32Array): number {
  const r = values.length;
  if (r === 1) return values[0] as number;
  let m = 0;
  for (let i = 0; i < r; i++) m += values[picks[i] as number] as number;
  return m / r;
}
