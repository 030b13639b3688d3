/**
 * The gate check `--gate max-unjudged=X` (docs/gates-and-exit-codes.md,
 * docs/metrics.md "Incomplete judgments in reports"): the mean unjudged@k
 * (trec_eval 10's unj.k) over the gated turns that carry judgments must be at
 * most X. A run where no gated turn carries judgments cannot be checked: exit
 * 2, never a silent pass.
 *
 * Pure: reads turn reports, never mutates them.
 */
import { InvalidArgumentError } from "../../errors.js";
import { UNJUDGED_KEY } from "../measures/metrics.js";
import type { GateCheck, GateFailure, TurnReport } from "../report/types.js";

/** The check and, when it fails, its failure; throws InvalidArgumentError (exit 2) when no turn has an unjudged@k result. */
export function unjudgedGateCheck(
  turns: readonly TurnReport[],
  max: number,
): { check: GateCheck; failure: GateFailure | null } {
  const scores: number[] = [];
  for (const t of turns) {
    const r = t.results.find((x) => x.key === UNJUDGED_KEY);
    if (r !== undefined) scores.push(r.score);
  }
  if (scores.length === 0)
    throw new InvalidArgumentError(
      "--gate max-unjudged",
      "used on cases that carry judgments (`judged` lists or graded `relevant`, e.g. from retrace label): unjudged@k is measured only on those turns, and no gated turn with retrieved cards carries any",
      max,
    );
  const mean = scores.reduce((s, x) => s + x, 0) / scores.length;
  const passed = mean <= max;
  const reason = `mean unjudged@k ${mean.toFixed(3)} over ${scores.length} turn${scores.length === 1 ? "" : "s"} that carry judgments (allowed: ${max}, --gate max-unjudged)`;
  return {
    check: {
      kind: "unjudged",
      key: UNJUDGED_KEY,
      scope: "all",
      option: `--gate max-unjudged=${max}`,
      threshold: max,
      observed: mean,
      n: scores.length,
      verdict: passed ? "pass" : "fail",
      reason,
    },
    failure: passed ? null : { kind: "unjudged", key: UNJUDGED_KEY, reason },
  };
}
