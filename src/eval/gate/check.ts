/**
 * What every gate check shares (./gate.ts): the float slack of comparisons,
 * the number formats of the reasons, a key's scoped name, why a key has no
 * usable mean, and a check record with its verdict. Pure.
 */
import { InvalidArgumentError } from "../../errors.js";
import { metricSpec } from "../measures/metrics.js";
import type { GateCheck, Report } from "../report/types.js";

/** Float slack so that a drop of exactly `maxDrop` passes despite rounding (0.9 − 0.88 ≠ 0.02 in binary). */
export const EPSILON = 1e-9;

export function checkUnit(name: string, v: unknown): void {
  if (v === undefined) return;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > 1)
    throw new InvalidArgumentError(name, "a number between 0 and 1", v);
}

export const f3 = (x: number) => x.toFixed(3);
export const fmtP = (p: number) => (p < 0.001 ? "<0.001" : p.toFixed(3));
export const label = (key: string) => metricSpec(key)?.label ?? key;
/** `retrieval_hit_at_k` for scope all, `retrieval_hit_at_k[en]` otherwise. */
export const scoped = (key: string, scope: string) => (scope === "all" ? key : `${key}[${scope}]`);

/** Why `key` has no usable mean in this report, or null when it has one. */
export function notMeasuredReason(report: Report, key: string): string | null {
  if (report.vacuous.includes(key)) return report.vacuousReasons[key] ?? "not measured";
  const agg = report.aggregates[key];
  if (agg === undefined || agg.n === 0) return "n=0";
  return null;
}

export function check(c: Omit<GateCheck, "verdict"> & { verdict?: GateCheck["verdict"] }, passed: boolean): GateCheck {
  return { ...c, verdict: c.verdict ?? (passed ? "pass" : "fail") };
}
