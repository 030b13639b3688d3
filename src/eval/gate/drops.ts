/**
 * The gate's drop checks against a baseline (./gate.ts;
 * docs/gates-and-exit-codes.md): the default tolerance, which test decides
 * (point means, or the interval-aware repeat bootstrap when the run's
 * repeats differed: docs/statistics.md, "Baseline gates with repeats") and
 * the checks per metric and scope. Pure.
 */
import { storeKindOf, type Baseline } from "./baseline.js";
import { METRICS } from "../measures/metrics.js";
import { DEFAULT_SAMPLES, DEFAULT_SEED, pairedBootstrap, perTurnScores, turnKey } from "../stats/bootstrap.js";
import { repeatDropBound, type PairedRepeats } from "../stats/repeats.js";
import type { GateCheck, GateFailure, GateResult, Report, TurnReport } from "../report/types.js";
import { withoutSynthetic } from "../report/parts.js";
import { check, EPSILON, f3, fmtP, label, notMeasuredReason, scoped } from "./check.js";
import { inScope, localesOf, perTurnMean, scopeMean } from "./scope.js";

/** Tolerated absolute drop of a mean against a baseline made on another KB version or store kind. */
export const DEFAULT_MAX_DROP = 0.02;

/** The thresholds the drop checks read (./gate.ts `GateThresholds`). */
export interface DropThresholds {
  maxDrop?: number;
  seed?: number;
  samples?: number;
}

/**
 * The default tolerance of drop checks: 0 when the baseline measured the same
 * dataset, KB, k, configuration and store kind as the report (the pipeline is
 * deterministic, so any drop is a change), else DEFAULT_MAX_DROP. Call after
 * assertComparable (dataset, k and configuration already equal).
 */
export function defaultMaxDrop(baseline: Baseline, report: Report): { maxDrop: number; source: string } {
  // A graph of your own may call a model or a store that is not deterministic: never the 0 of retrace's pipeline.
  if (report.run.graph !== undefined)
    return {
      maxDrop: DEFAULT_MAX_DROP,
      source: `default ${DEFAULT_MAX_DROP}: a --graph run (your graph may not be deterministic; set --gate max-drop=X to change it)`,
    };
  const why: string[] = [];
  if (baseline.kbHash !== report.run.kbHash) why.push("another KB version");
  const kind = report.run.storeKind ?? storeKindOf(report.run.store);
  // A baseline written before store kinds were recorded is taken as the same kind.
  if (baseline.storeKind !== undefined && baseline.storeKind !== kind)
    why.push(`another store kind (${baseline.storeKind}, now ${kind})`);
  if (why.length === 0)
    return {
      maxDrop: 0,
      source: "default 0: same dataset, KB, k, configuration and store kind (deterministic pipeline)",
    };
  return {
    maxDrop: DEFAULT_MAX_DROP,
    source: `default ${DEFAULT_MAX_DROP}: the baseline was made with ${why.join(" and ")}`,
  };
}

/** Confidence level of the interval-aware drop test: one-sided 95% (docs/statistics.md, "Baseline gates with repeats"). */
export const REPEAT_GATE_LEVEL = 0.95;

interface DropTest {
  record: NonNullable<GateResult["dropTest"]>;
  seed: number;
  samples: number;
}

/**
 * Which test the drop checks use (docs/statistics.md, "Baseline gates with
 * repeats"): the interval-aware one when this run's repeats differed (its
 * turns carry `repeatScores`), else the point comparison of means, as
 * without repeats. The baseline's own repeats, when it recorded them, are
 * resampled too; a baseline without them counts as fixed numbers (said in the
 * description).
 */
function dropTestOf(report: Report, baseline: Baseline, thresholds: DropThresholds): DropTest {
  const seed = thresholds.seed ?? DEFAULT_SEED;
  const samples = thresholds.samples ?? DEFAULT_SAMPLES;
  const r = report.repeats;
  if (r === undefined || r.identical) {
    const why = r === undefined ? "a run without --repeat" : `the ${r.n} repeats were identical`;
    return {
      seed,
      samples,
      record: {
        method: "point",
        description: `point means (${why}): fails when the baseline's mean minus this run's exceeds the tolerance`,
      },
    };
  }
  const pct = Math.round(REPEAT_GATE_LEVEL * 100);
  const base =
    baseline.repeats?.perTurn !== undefined
      ? `the baseline's ${baseline.repeats.n} repeats and this run's ${r.n} resampled within each case, each run on its own`
      : baseline.repeats !== undefined
        ? `this run's ${r.n} repeats resampled within each case; the baseline's ${baseline.repeats.n} repeats were identical, its means fixed`
        : `this run's ${r.n} repeats resampled within each case; the baseline was written without --repeat, so its means count as fixed (its own run-to-run noise is not measured: write it with --repeat for the full test)`;
  return {
    seed,
    samples,
    record: {
      method: "repeat-bootstrap",
      level: REPEAT_GATE_LEVEL,
      description: `one-sided ${pct}% repeat bootstrap of the drop (cases fixed; ${base}; ${samples} resamples, seed ${seed}): fails only when the lower bound of the drop exceeds the tolerance`,
    },
  };
}

/** A drop check by the interval-aware test over the scope's turns scored in both runs; null when none is. */
function repeatDropCheck(
  key: string,
  scope: string,
  turns: readonly TurnReport[],
  baseline: Baseline,
  maxDrop: number,
  test: DropTest,
): Omit<GateCheck, "option"> | null {
  const paired: PairedRepeats[] = [];
  for (const t of turns) {
    const tk = turnKey(t.caseId, t.turn);
    const now = t.results.find((x) => x.key === key)?.score;
    const before = baseline.perTurn[tk]?.[key];
    if (now === undefined || before === undefined) continue;
    paired.push({
      cluster: t.caseId,
      run: t.repeatScores?.[key] ?? [now],
      base: baseline.repeats?.perTurn?.[tk]?.[key] ?? [before],
    });
  }
  const b = repeatDropBound(paired, { seed: test.seed, samples: test.samples, alpha: 1 - REPEAT_GATE_LEVEL });
  if (b === null) return null;
  const passed = b.lower <= maxDrop + EPSILON;
  const pct = Math.round(b.level * 100);
  const head = `${scoped(key, scope)} ${f3(meanOf(paired.map((p) => p.run)))} vs the baseline's ${f3(meanOf(paired.map((p) => p.base)))}: ${b.drop > 0 ? `drop ${f3(b.drop)}` : "no drop"} over ${b.n} shared turns in ${b.nCases} cases (${b.repeats.run} repeats now, ${b.repeats.base} in the baseline); one-sided ${pct}% lower bound of the drop ${f3(b.lower)}`;
  const reason = passed
    ? `${head}, within the tolerance ${f3(maxDrop)}`
    : `${head}, above the tolerance ${f3(maxDrop)}: a regression beyond the graph's run-to-run noise`;
  return {
    kind: "drop",
    key,
    scope,
    threshold: maxDrop,
    observed: b.drop,
    n: b.n,
    baseline: meanOf(paired.map((p) => p.base)),
    bound: b.lower,
    verdict: passed ? "pass" : "fail",
    reason,
  };
}

/** The mean over turns of each turn's mean. */
function meanOf(perTurn: readonly (readonly number[])[]): number {
  let s = 0;
  for (const v of perTurn) s += v.reduce((a, b) => a + b, 0) / v.length;
  return s / perTurn.length;
}

/**
 * The drop checks of `report` (quarantined turns already left out) against
 * `baseline`, appended to `failures` and `checks`; sets
 * `result.tolerance` and, for a run with repeats, `result.dropTest`. `full`
 * is the report with every turn (its locales name the scopes); `quarantined`
 * says whether any turn was left out (then scope all compares both sides
 * over the remaining turns, not the baseline's own mean).
 */
export function dropChecks(
  report: Report,
  full: Report,
  baseline: Baseline,
  thresholds: DropThresholds,
  quarantined: boolean,
  result: GateResult,
  failures: GateFailure[],
  checks: GateCheck[],
): void {
  const tolerance =
    thresholds.maxDrop !== undefined
      ? { maxDrop: thresholds.maxDrop, source: "set with --gate max-drop" }
      : defaultMaxDrop(baseline, report);
  result.tolerance = tolerance;
  const maxDrop = tolerance.maxDrop;
  // The registry's drop checks: `always`, or `if-both` when the baseline and the run both have the key.
  const keys = METRICS.filter(
    (m) =>
      m.drop === "always" ||
      (m.drop === "if-both" && baseline.aggregates[m.key] !== undefined && report.aggregates[m.key] !== undefined),
  ).map((m) => m.key);
  // One locale: its scope is the same turns as `all`, so it is checked once, as `all`.
  const locales = localesOf(full);
  const scopes = ["all", ...(locales.length > 1 ? locales : [])];
  const opt = `--gate max-drop=${f3(maxDrop)}`;
  const test = dropTestOf(report, baseline, thresholds);
  // Recorded for runs with repeats (a run without them compares point means, as it always has).
  if (report.repeats !== undefined) result.dropTest = test.record;
  for (const key of keys) {
    const why = notMeasuredReason(report, key);
    if (why !== null) {
      const reason = `${key} was not measured (${why}); the baseline comparison cannot pass`;
      failures.push({ kind: "not_measured", key, reason });
      checks.push(
        check(
          {
            kind: "drop",
            key,
            scope: "all",
            option: opt,
            threshold: maxDrop,
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
    if (baseline.aggregates[key] === undefined) {
      const reason = `the baseline has no ${key} (${label(key)}) to compare with; re-create it with --update-baseline`;
      failures.push({ kind: "baseline_mismatch", key, reason });
      checks.push(
        check(
          {
            kind: "drop",
            key,
            scope: "all",
            option: opt,
            threshold: maxDrop,
            observed: null,
            n: 0,
            verdict: "fail",
            reason,
          },
          false,
        ),
      );
      continue;
    }
    for (const scope of scopes) {
      const cur = scopeMean(report.turns, key, scope);
      const inThis = (scope === "all" ? withoutSynthetic(report.turns) : report.turns).filter((t) => inScope(t, scope));
      const basePerTurn: Record<string, Record<string, number>> = {};
      for (const t of inThis) {
        const s = baseline.perTurn[turnKey(t.caseId, t.turn)];
        if (s !== undefined) basePerTurn[turnKey(t.caseId, t.turn)] = s;
      }
      // Scope all: the baseline's own mean, unless turns are quarantined (then both sides over the remaining turns).
      const base =
        scope === "all" && !quarantined
          ? { mean: baseline.aggregates[key]?.mean ?? null, n: baseline.aggregates[key]?.n ?? 0 }
          : perTurnMean(basePerTurn, key);
      if (cur.mean === null || base.mean === null) continue; // nothing to compare in this locale (e.g. no gold-bearing turn)
      const drop = base.mean - cur.mean;
      if (test.record.method === "repeat-bootstrap") {
        // The interval-aware test (docs/statistics.md, "Baseline gates with repeats"): both sides over the turns scored in both.
        const c = repeatDropCheck(key, scope, inThis, baseline, maxDrop, test);
        if (c !== null) {
          if (c.verdict === "fail")
            failures.push({ kind: "regression", key, reason: c.reason, ...(scope === "all" ? {} : { scope }) });
          checks.push({ ...c, option: opt });
          continue;
        }
      }
      const passed = drop <= maxDrop + EPSILON;
      let reason: string;
      if (passed) {
        reason = `${scoped(key, scope)} ${f3(cur.mean)} (n=${cur.n}) vs the baseline's ${f3(base.mean)} (n=${base.n}): ${drop > 0 ? `drop ${f3(drop)}` : "no drop"}, within the tolerance ${f3(maxDrop)}`;
      } else {
        // The same case-level paired bootstrap as `retrace compare` (docs/statistics.md): interval and p agree.
        const paired = pairedBootstrap(
          perTurnScores({ perTurn: basePerTurn }, key),
          perTurnScores({ turns: inThis }, key),
          {
            seed: thresholds.seed ?? DEFAULT_SEED,
            samples: thresholds.samples ?? DEFAULT_SAMPLES,
          },
        );
        const test =
          paired === null
            ? "no turn scored in both runs, so no paired test"
            : `paired case-level bootstrap p=${fmtP(paired.pValue)} over ${paired.n} shared turns in ${paired.nCases} cases`;
        reason = `${scoped(key, scope)} ${f3(cur.mean)} (n=${cur.n}) dropped from the baseline's ${f3(base.mean)} (n=${base.n}) by ${f3(drop)}, more than the tolerance ${f3(maxDrop)} (${test})`;
        failures.push({ kind: "regression", key, reason, ...(scope === "all" ? {} : { scope }) });
      }
      checks.push(
        check(
          {
            kind: "drop",
            key,
            scope,
            option: opt,
            threshold: maxDrop,
            observed: drop,
            n: cur.n,
            baseline: base.mean,
            reason,
          },
          passed,
        ),
      );
    }
  }
}
