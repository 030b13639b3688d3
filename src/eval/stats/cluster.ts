/**
 * The cluster-aware bootstraps reports and `retrace compare` use (docs/statistics.md): `clusterMean`, `bootstrapDelta`,
 * `pairedBootstrap` and the batched `ClusterMeanBatch`, each p-value inverted from its own percentile interval.
 * Re-exported by src/eval/stats/bootstrap.ts. Deterministic for a seed; pure, synchronous, no I/O.
 */
import { mulberry32 } from "../../random.js";
import { drawRatioSteps } from "./draws.js";
import { runSteps, type Steps } from "./steps.js";
import type { ClusterOptions, ClusterSums, ClusteredValue, KnownClusters, ResampleUnit } from "./cluster-sums.js";
import {
  DEFAULT_RESAMPLE,
  clusterSums,
  drawRatio,
  percentileInterval,
  percentilePValue,
  sortedReplicates,
} from "./cluster-sums.js";
import { checkOptions, checkValues, mean } from "./resample-core.js";

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
    runSteps(this.runSteps());
  }

  /** `run` in steps (./steps.ts): the same intervals, yielding while the resamples are drawn. */
  *runSteps(): Steps<void> {
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
      const intervals = (yield* drawRatioSteps(distinct, m, this.seed, this.samples)).map((r) =>
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

export function sameArray(a: Float64Array, b: Float64Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}
