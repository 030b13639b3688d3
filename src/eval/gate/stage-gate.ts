/**
 * Gates on the stage funnel (docs/gates-and-exit-codes.md), off by default
 * like every floor: `--gate min-stage=STAGE=VALUE` (the share of gold-bearing
 * turns whose gold is still present at STAGE must be at least VALUE) and
 * `--gate max-stage-drop=STAGE=VALUE` (the baseline's share minus this run's at
 * STAGE must be at most VALUE). A stage this run did not measure is a usage
 * error (exit 2) listing the stages it has; a baseline without the stage is a
 * `baseline_mismatch` failure. Pure.
 */
import { InvalidArgumentError } from "../../errors.js";
import type { Baseline } from "./baseline.js";
import type { GateCheck, GateFailure, Report } from "../report/types.js";

/** STAGE → threshold, as parsed from `STAGE=VALUE` options. */
export type StageThresholds = Readonly<Record<string, number>>;

const EPSILON = 1e-9;
const f3 = (x: number) => x.toFixed(3);

/** The stage ids this run measured (its funnel), in pipeline order. */
export function runStages(report: Report): string[] {
  return (report.funnel?.stages ?? []).map((s) => s.stage);
}

/** Throws InvalidArgumentError (exit 2) naming the option, the unknown stage and the stages this run has. */
export function checkStageNames(report: Report, flag: string, thresholds: StageThresholds | undefined): void {
  if (thresholds === undefined) return;
  const known = runStages(report);
  for (const [stage, v] of Object.entries(thresholds)) {
    if (!known.includes(stage))
      throw new InvalidArgumentError(
        flag,
        `one of the stages this run has (${known.length > 0 ? known.join(", ") : "none: no turn was traced"})`,
        stage,
      );
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > 1)
      throw new InvalidArgumentError(`${flag} ${stage}`, "a number between 0 and 1", v);
  }
}

/** The stage checks and their failures. `maxStageDrop` needs a baseline (InvalidArgumentError otherwise). */
export function stageGate(
  report: Report,
  t: { minStage?: StageThresholds; maxStageDrop?: StageThresholds },
  baseline?: Baseline,
): { failures: GateFailure[]; checks: GateCheck[] } {
  checkStageNames(report, "--gate min-stage", t.minStage);
  checkStageNames(report, "--gate max-stage-drop", t.maxStageDrop);
  if (t.maxStageDrop !== undefined && Object.keys(t.maxStageDrop).length > 0 && baseline === undefined)
    throw new InvalidArgumentError(
      "--gate max-stage-drop",
      "used with a baseline (drops are measured against it)",
      "no baseline",
    );
  const failures: GateFailure[] = [];
  const checks: GateCheck[] = [];
  const row = (stage: string) => report.funnel?.stages.find((s) => s.stage === stage);
  for (const [stage, floor] of Object.entries(t.minStage ?? {})) {
    const r = row(stage)!;
    const key = `stage_${stage}`;
    const option = `--gate min-stage=${stage}=${f3(floor)}`;
    const passed = r.share >= floor - EPSILON;
    const reason = `gold still present at ${r.label}: ${f3(r.share)} (${r.present} of ${r.n} gold-bearing turns) is ${passed ? "at or above" : "below"} the floor ${f3(floor)}`;
    if (!passed) failures.push({ kind: "floor", key, reason });
    checks.push({
      kind: "floor",
      key,
      scope: "all",
      option,
      threshold: floor,
      observed: r.share,
      n: r.n,
      verdict: passed ? "pass" : "fail",
      reason,
    });
  }
  for (const [stage, maxDrop] of Object.entries(t.maxStageDrop ?? {})) {
    const r = row(stage)!;
    const key = `stage_${stage}`;
    const option = `--gate max-stage-drop=${stage}=${f3(maxDrop)}`;
    const base = baseline?.funnel?.find((s) => s.stage === stage);
    if (base === undefined) {
      const reason = `the baseline has no share for stage ${stage}; re-create it with --update-baseline`;
      failures.push({ kind: "baseline_mismatch", key, reason });
      checks.push({
        kind: "drop",
        key,
        scope: "all",
        option,
        threshold: maxDrop,
        observed: null,
        n: r.n,
        verdict: "fail",
        reason,
      });
      continue;
    }
    const drop = base.share - r.share;
    const passed = drop <= maxDrop + EPSILON;
    const reason = `gold still present at ${r.label}: ${f3(r.share)} (n=${r.n}) vs the baseline's ${f3(base.share)} (n=${base.n}): ${drop > 0 ? `drop ${f3(drop)}` : "no drop"}, ${passed ? "within" : "more than"} the tolerance ${f3(maxDrop)}`;
    if (!passed) failures.push({ kind: "regression", key, reason });
    checks.push({
      kind: "drop",
      key,
      scope: "all",
      option,
      threshold: maxDrop,
      observed: drop,
      n: r.n,
      baseline: base.share,
      verdict: passed ? "pass" : "fail",
      reason,
    });
  }
  return { failures, checks };
}
