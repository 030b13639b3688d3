/**
 * The CI gate (docs/gates-and-exit-codes.md): a pure function of a report,
 * thresholds and an optional baseline → `{passed, failures[], checks[]}`.
 * No I/O; the same input gives the same result.
 *
 * - **Floors** on hit@k, recall@k, nDCG@k and MRR@k, each overall (scope
 *   `all`) and/or per scope: `golden`, `adversarial`, `tune`, `holdout`, or
 *   a locale present in the run. The scope mean is the mean of the key over
 *   the turns of the scope that carry it (the report's turn-weighted mean);
 *   a floor passes when mean ≥ floor (1e-9 float slack). Off unless set.
 * - **Drops against a baseline** on each triad key (and MRR when both have
 *   it), overall and per locale: fails when baseline mean − mean > maxDrop.
 *   The baseline's locale means are taken over its per-turn scores of the
 *   same turns (same datasetHash, so the same turns). Default maxDrop: 0 when
 *   the baseline was made on the same dataset, KB, k, configuration and
 *   store kind (the pipeline is deterministic: any drop is a change), else
 *   0.02 (DEFAULT_MAX_DROP), and the result says which; a `--graph` run's
 *   default is always DEFAULT_MAX_DROP (a graph of your own may not be deterministic).
 *   With repeats that differed (`--repeat N`, a graph that is not
 *   deterministic), a drop check is interval-aware: it fails only when the
 *   one-sided 95% lower bound of the drop (REPEAT_GATE_LEVEL; a bootstrap of
 *   the repeats within each case, cases fixed, the baseline's repeats too when
 *   it recorded them: src/eval/stats/repeats.ts `repeatDropBound`) exceeds
 *   maxDrop; `result.dropTest` says which test decided (docs/statistics.md,
 *   "Baseline gates with repeats"). `drops: false` leaves them out (a baseline
 *   given for its flips alone). A dataset of one locale is checked once, as
 *   `all` (its locale scope is the same turns).
 * - **Flips** (`maxFlips`): turns whose hit@k went 1 → 0 against the
 *   baseline, listed with case, turn, locale and where the gold went (the
 *   trace summary's goldPositions); fails when there are more than maxFlips.
 * - **Quarantine** (`quarantine`, `--quarantine FILE`, ./quarantine.ts):
 *   the listed turns stay in the report but every check above reads the
 *   run without them: floor means over the remaining turns of the scope,
 *   drops between both sides' means over the remaining turns, flips among
 *   them. `result.quarantine` lists the turns left out.
 * - A floor or baseline check on a key this run did not measure (vacuous or
 *   n = 0 in the scope) is a "not_measured" failure, never a pass.
 * - A baseline for other cases / k / retrieval config throws
 *   BaselineMismatchError; a baseline lacking a triad key the run measured
 *   is a "baseline_mismatch" failure. Bad thresholds, an unknown scope, a
 *   `tune`/`holdout` floor on a report without part information, or
 *   maxFlips without a baseline throw InvalidArgumentError (exit 2).
 */
import { InvalidArgumentError } from "../../errors.js";
import { assertComparable, type Baseline } from "./baseline.js";
import { quarantinedTurns, type Quarantine } from "./quarantine.js";
import { HIT_KEY, METRICS, type FloorOption } from "../measures/metrics.js";
import { turnKey } from "../stats/bootstrap.js";
import { stageGate, type StageThresholds } from "./stage-gate.js";
import type { GateCheck, GateFailure, GateResult, Report } from "../report/types.js";
import { check, checkUnit, EPSILON, f3, notMeasuredReason, scoped } from "./check.js";
import { dropChecks } from "./drops.js";
import { flipText, hitFlips } from "./flips.js";
import { checkScope, gatedTurns, scopeMean, type ScopedFloors } from "./scope.js";

export { DEFAULT_MAX_DROP, defaultMaxDrop, REPEAT_GATE_LEVEL } from "./drops.js";
export { flipText, hitFlips } from "./flips.js";
export { checkScope, FIXED_SCOPES, gatedTurns, localesOf, type ScopedFloors } from "./scope.js";

/**
 * Floor options and the metric key each gates, in the order checks are made
 * and listed: the registry's metrics that declare a `floor`.
 */
export const FLOOR_OPTIONS: readonly { option: FloorOption; flag: string; key: string; label: string }[] =
  Object.freeze(METRICS.flatMap((m) => (m.floor === undefined ? [] : [{ ...m.floor, key: m.key, label: m.label }])));

export type { FloorOption };
/** A floor per option (`minHit`, ...): a number (scope `all`) or a floor per scope. Unset = off. */
export type FloorThresholds = { [O in FloorOption]?: number | ScopedFloors };

/** Floors (`minHit`, `minRecall`, ...: one per FLOOR_OPTIONS entry), drops and flips. */
export interface GateThresholds extends FloorThresholds {
  /** Tolerated absolute drop of each mean against the baseline, overall and per locale (default: see module doc). */
  maxDrop?: number;
  /** Tolerated number of hit@k 1→0 turns against the baseline (unset = not gated; needs a baseline). */
  maxFlips?: number;
  /**
   * Whether the drops against a given baseline are checked (default true; at
   * `maxDrop`, else the default tolerance). False: a baseline given for its
   * flips (or stage drops) alone — `--gate max-flips` without `--gate max-drop` or
   * `--baseline` on the command line.
   */
  drops?: boolean;
  /** Stage floors and drops (`--gate min-stage`, `--gate max-stage-drop`: ./stage-gate.ts); unset = off. */
  minStage?: StageThresholds;
  maxStageDrop?: StageThresholds;
  /** Seed / resamples of the paired test quoted in regression reasons (defaults 42 / 2,000). */
  seed?: number;
  samples?: number;
  /** Turns the gate leaves out (`--quarantine FILE`); they stay in the report. */
  quarantine?: Quarantine;
}

function normalizeFloors(flag: string, option: string, v: number | ScopedFloors | undefined): [string, number][] {
  if (v === undefined) return [];
  if (typeof v === "number") {
    checkUnit(option, v);
    return [["all", v]];
  }
  return Object.entries(v).map(([scope, x]) => {
    checkUnit(`${flag} ${scope}`, x);
    return [scope, x];
  });
}

export function gate(report: Report, thresholds: GateThresholds = {}, baseline?: Baseline): GateResult {
  checkUnit("maxDrop", thresholds.maxDrop);
  if (thresholds.maxFlips !== undefined && !(Number.isInteger(thresholds.maxFlips) && thresholds.maxFlips >= 0))
    throw new InvalidArgumentError("maxFlips", "a non-negative integer", thresholds.maxFlips);
  if (thresholds.maxFlips !== undefined && baseline === undefined)
    throw new InvalidArgumentError(
      "--gate max-flips",
      "used with a baseline (flips are counted against it)",
      "no baseline",
    );
  const failures: GateFailure[] = [];
  const checks: GateCheck[] = [];
  // Quarantined turns are out of every check (module doc); `full` keeps them for scope names and the list of what was left out.
  const full = report;
  const q = quarantinedTurns(thresholds.quarantine);
  if (q.size > 0) report = { ...report, turns: gatedTurns(report, thresholds.quarantine) };

  for (const { option, flag, key } of FLOOR_OPTIONS) {
    const named = `--gate ${flag.slice(2)}`; // the check's spelling in messages (src/cli/eval-options.ts GATE_CHECKS)
    const floors = normalizeFloors(named, option, thresholds[option]);
    for (const [scope] of floors) checkScope(full, scope, named);
    for (const [scope, floor] of floors) {
      const opt =
        scope === "all" ? `--gate ${flag.slice(2)}=${f3(floor)}` : `--gate ${flag.slice(2)}=${scope}=${f3(floor)}`;
      const why = notMeasuredReason(report, key);
      const { mean, n } = scopeMean(report.turns, key, scope);
      if (why !== null || mean === null) {
        const reason = `${scoped(key, scope)} was not measured (${why ?? `n=0 in scope ${scope}`}); the floor ${f3(floor)} (${scope === "all" ? option : opt}) cannot pass`;
        failures.push({ kind: "not_measured", key, reason, ...(scope === "all" ? {} : { scope }) });
        checks.push(
          check(
            {
              kind: "floor",
              key,
              scope,
              option: opt,
              threshold: floor,
              observed: null,
              n: 0,
              verdict: "not_measured",
              reason,
            },
            false,
          ),
        );
        continue;
      }
      const passed = mean >= floor - EPSILON;
      const reason = passed
        ? `${scoped(key, scope)} ${f3(mean)} (n=${n}) is at or above the floor ${f3(floor)}`
        : `${scoped(key, scope)} ${f3(mean)} (n=${n}) is below the floor ${f3(floor)}`;
      if (!passed) failures.push({ kind: "floor", key, reason, ...(scope === "all" ? {} : { scope }) });
      checks.push(
        check({ kind: "floor", key, scope, option: opt, threshold: floor, observed: mean, n, reason }, passed),
      );
    }
  }

  const result: GateResult = { passed: true, failures, checks };
  if (thresholds.quarantine !== undefined) {
    const left = full.turns.filter((t) => q.has(turnKey(t.caseId, t.turn)));
    result.quarantine = {
      file: thresholds.quarantine.file,
      listed: thresholds.quarantine.entries.length,
      count: left.length,
      turns: left.map((t) => ({
        caseId: t.caseId,
        turn: t.turn,
        locale: t.locale,
        reason: q.get(turnKey(t.caseId, t.turn)) as string,
      })),
    };
  }
  if (baseline !== undefined) {
    assertComparable(baseline, full);
    if (thresholds.drops !== false)
      dropChecks(report, full, baseline, thresholds, q.size > 0, result, failures, checks);

    const flips = hitFlips(report, baseline);
    result.flips = flips;
    if (thresholds.maxFlips !== undefined) {
      const max = thresholds.maxFlips;
      const why = notMeasuredReason(report, HIT_KEY);
      const o = `--gate max-flips=${max}`;
      if (why !== null) {
        const reason = `${HIT_KEY} was not measured (${why}); flips against the baseline cannot be counted`;
        failures.push({ kind: "not_measured", key: HIT_KEY, reason });
        checks.push(
          check(
            {
              kind: "flips",
              key: HIT_KEY,
              scope: "all",
              option: o,
              threshold: max,
              observed: null,
              n: 0,
              verdict: "not_measured",
              reason,
            },
            false,
          ),
        );
      } else {
        const n = report.turns.filter((t) => t.results.some((r) => r.key === HIT_KEY)).length;
        const passed = flips.length <= max;
        const head = `${flips.length} turn${flips.length === 1 ? "" : "s"} went from hit 1 to 0 against the baseline (at most ${max} allowed)`;
        const reason = flips.length === 0 ? head : `${head}: ${flips.map(flipText).join(" | ")}`;
        if (!passed) failures.push({ kind: "flips", key: HIT_KEY, reason });
        checks.push(
          check(
            { kind: "flips", key: HIT_KEY, scope: "all", option: o, threshold: max, observed: flips.length, n, reason },
            passed,
          ),
        );
      }
    }
  }
  if (thresholds.minStage !== undefined || thresholds.maxStageDrop !== undefined) {
    const stages = stageGate(
      report,
      {
        ...(thresholds.minStage !== undefined ? { minStage: thresholds.minStage } : {}),
        ...(thresholds.maxStageDrop !== undefined ? { maxStageDrop: thresholds.maxStageDrop } : {}),
      },
      baseline,
    );
    failures.push(...stages.failures);
    checks.push(...stages.checks);
  }
  result.passed = failures.length === 0;
  return result;
}
