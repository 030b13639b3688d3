/**
 * The CI gate (DESIGN.md §1.4–§1.6; CONVENTIONS.md 11): a pure function of a
 * report, thresholds and an optional baseline → `{passed, failures[]}`.
 *
 * - Floors (`minRecall` on `retrieval_recall_at_k`, `minHit` on
 *   `retrieval_hit_at_k`) are off unless set.
 * - With a baseline, each triad key fails when the current mean is below the
 *   baseline mean minus `maxDrop` (absolute, default 0.02); the reason names
 *   both values, their n and the paired p-value over the shared turns.
 * - A floor or baseline comparison on a key this run did not measure (n = 0,
 *   or listed as vacuous) is a failure of kind "not_measured", never a pass.
 * - A baseline for other cases / k / retrieval config throws
 *   BaselineMismatchError (comparing would be meaningless); a baseline that
 *   lacks a triad key the run measured is a "baseline_mismatch" failure.
 */
import { InvalidArgumentError } from "../errors.js";
import { assertComparable, type Baseline } from "./baseline.js";
import { METRICS, TRIAD_KEYS } from "./metrics.js";
import { compareReports, DEFAULT_SAMPLES, DEFAULT_SEED } from "./stats.js";
import type { GateFailure, GateResult, Report } from "./types.js";

/** Default tolerated absolute drop of a triad mean against the baseline. */
export const DEFAULT_MAX_DROP = 0.02;

/** Float slack so that a drop of exactly `maxDrop` passes despite rounding (0.9 − 0.88 ≠ 0.02 in binary). */
const EPSILON = 1e-9;

export interface GateThresholds {
  /** Floor on mean recall@k (unset = off). */
  minRecall?: number;
  /** Floor on mean hit@k (unset = off). */
  minHit?: number;
  /** Tolerated absolute drop of each triad mean against the baseline (default 0.02). */
  maxDrop?: number;
  /** Seed / resamples of the paired test quoted in regression reasons (defaults 42 / 2,000). */
  seed?: number;
  samples?: number;
}

const RECALL_KEY = "retrieval_recall_at_k";
const HIT_KEY = "retrieval_hit_at_k";

function checkUnit(name: string, v: number | undefined): void {
  if (v === undefined) return;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > 1) {
    throw new InvalidArgumentError(name, "a number between 0 and 1", v);
  }
}

function f3(x: number): string {
  return x.toFixed(3);
}

function fmtP(p: number): string {
  return p < 0.001 ? "<0.001" : p.toFixed(3);
}

/** Why `key` has no usable mean in this report, or null when it has one. */
function notMeasuredReason(report: Report, key: string): string | null {
  if (report.vacuous.includes(key)) return report.vacuousReasons[key] ?? "not measured";
  const agg = report.aggregates[key];
  if (agg === undefined || agg.n === 0) return "n=0";
  return null;
}

function label(key: string): string {
  return METRICS.find((m) => m.key === key)?.label ?? key;
}

export function gate(report: Report, thresholds: GateThresholds = {}, baseline?: Baseline): GateResult {
  checkUnit("minRecall", thresholds.minRecall);
  checkUnit("minHit", thresholds.minHit);
  checkUnit("maxDrop", thresholds.maxDrop);
  const maxDrop = thresholds.maxDrop ?? DEFAULT_MAX_DROP;
  const failures: GateFailure[] = [];

  const floors: [string, string, number | undefined][] = [
    ["minHit", HIT_KEY, thresholds.minHit],
    ["minRecall", RECALL_KEY, thresholds.minRecall],
  ];
  for (const [option, key, floor] of floors) {
    if (floor === undefined) continue;
    const why = notMeasuredReason(report, key);
    if (why !== null) {
      failures.push({
        kind: "not_measured",
        key,
        reason: `${key} was not measured (${why}); the floor ${f3(floor)} (${option}) cannot pass`,
      });
      continue;
    }
    const agg = report.aggregates[key] as { mean: number; n: number };
    if (agg.mean < floor - EPSILON) {
      failures.push({ kind: "floor", key, reason: `${key} ${f3(agg.mean)} (n=${agg.n}) is below the floor ${f3(floor)}` });
    }
  }

  if (baseline !== undefined) {
    assertComparable(baseline, report);
    for (const key of TRIAD_KEYS) {
      const why = notMeasuredReason(report, key);
      if (why !== null) {
        failures.push({
          kind: "not_measured",
          key,
          reason: `${key} was not measured (${why}); the baseline comparison cannot pass`,
        });
        continue;
      }
      const cur = report.aggregates[key] as { mean: number; n: number };
      const base = baseline.aggregates[key];
      if (base === undefined) {
        failures.push({
          kind: "baseline_mismatch",
          key,
          reason: `the baseline has no ${key} (${label(key)}) to compare with; re-create it with --update-baseline`,
        });
        continue;
      }
      if (cur.mean < base.mean - maxDrop - EPSILON) {
        const paired = compareReports(baseline, report, key, {
          seed: thresholds.seed ?? DEFAULT_SEED,
          samples: thresholds.samples ?? DEFAULT_SAMPLES,
        });
        const test =
          paired === null
            ? "no turn scored in both runs, so no paired test"
            : `paired sign-flip p=${fmtP(paired.pValue)} over ${paired.n} shared turns`;
        failures.push({
          kind: "regression",
          key,
          reason: `${key} ${f3(cur.mean)} (n=${cur.n}) dropped from the baseline's ${f3(base.mean)} (n=${base.n}) by ${f3(base.mean - cur.mean)}, more than the tolerance ${f3(maxDrop)} (${test})`,
        });
      }
    }
  }
  return { passed: failures.length === 0, failures };
}
