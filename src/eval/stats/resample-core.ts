/**
 * The seeded resampling's defaults and checks shared by every bootstrap of src/eval/stats/bootstrap.ts
 * (docs/statistics.md): seed, resamples, alpha, the option and value checks, the mean and the sorted quantile.
 * Pure, synchronous, no I/O.
 */
import { InvalidArgumentError } from "../../errors.js";

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
export const TIE_EPSILON = 1e-9;

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

export function checkOptions(opts: BootstrapOptions): { seed: number; samples: number; alpha: number } {
  const seed = opts.seed ?? DEFAULT_SEED;
  const samples = opts.samples ?? DEFAULT_SAMPLES;
  const alpha = opts.alpha ?? DEFAULT_ALPHA;
  if (!Number.isInteger(seed)) throw new InvalidArgumentError("seed", "an integer", seed);
  if (!Number.isInteger(samples) || samples <= 0)
    throw new InvalidArgumentError("samples", "a positive integer", samples);
  if (!(alpha > 0 && alpha < 1)) throw new InvalidArgumentError("alpha", "a number strictly between 0 and 1", alpha);
  return { seed, samples, alpha };
}

export function checkValues(name: string, values: readonly number[]): void {
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
