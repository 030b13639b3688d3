/**
 * The tune/holdout parts of a report (docs/holdout.md).
 *
 * The committed split (`<kb>/eval/split.json`, src/kb/split.ts) puts every
 * case in `tune` (what the answerer's rules and thresholds may be fitted on)
 * or `holdout` (never used for fitting). Each reported turn carries its part.
 *
 * Keys are of two sides:
 *   - retrieval keys: the metric registry's (`retrieval_hit_at_k`, ...) and judged@k.
 *     Nothing answer-side is fitted to them; they are reported on every
 *     turn (overall, per kind, per locale) and per part;
 *   - answer-side keys: every other key (citation coverage and correctness,
 *     refusal correctness, groundedness, any user evaluator's). When the run
 *     has a split, the headline figures of these keys (overall, per kind,
 *     per locale) are computed on the `holdout` turns only; the per-part
 *     split still shows the `tune` figures, labelled as the fitted part.
 * Without a split every key is reported on every turn, as before, and the
 * report says that no held-out part exists.
 *
 * Pure functions; inputs are never mutated.
 */
import type { SplitPart } from "../../kb/split.js";
import { INCOMPLETE_JUDGMENT_MEASURES, JUDGED, METRICS } from "../measures/metrics.js";
import type { AnswerSide, TurnReport } from "./types.js";

/** How the report names the default answerer (src/nodes/answerer.ts) when no chat model is configured. */
export const RULE_BASED_ANSWERER = "rule-based, offline";

/** Vacuous reason of an answer-side key when the run held no held-out turn scoring it. */
export const NO_HOLDOUT_TURN = "no held-out turn in this run; the tune part's figure is in the part split";

/** The registry's retrieval metrics, judged@k and the measures for incomplete judgments (what was retrieved against what was judged: nothing answer-side is fitted to it). */
const RETRIEVAL_KEYS: ReadonlySet<string> = new Set([
  ...METRICS.map((m) => m.key),
  JUDGED.key,
  ...INCOMPLETE_JUDGMENT_MEASURES.map((m) => m.key),
]);

/** True for every key that is not a retrieval metric of the registry (nor judged@k). */
export function isAnswerSideKey(key: string): boolean {
  return !RETRIEVAL_KEYS.has(key);
}

/** True when at least one turn carries a part (the run had a split). */
export function hasParts(turns: readonly TurnReport[]): boolean {
  return turns.some((t) => t.part !== undefined);
}

/** The turns of one part, in input order. */
export function turnsOfPart(turns: readonly TurnReport[], part: SplitPart): TurnReport[] {
  return turns.filter((t) => t.part === part);
}

/**
 * The view the headline aggregates are computed on: without parts, the turns
 * themselves; with parts, every turn, but a turn outside `holdout` keeps only
 * its retrieval results (its answer-side results are left to the part split).
 */
export function headlineTurns(turns: readonly TurnReport[]): readonly TurnReport[] {
  if (!hasParts(turns)) return turns;
  return turns.map((t) =>
    t.part === "holdout" ? t : { ...t, results: t.results.filter((r) => !isAnswerSideKey(r.key)) },
  );
}

/** The answer-side description of a run whose keys are `keyOrder`. */
export function answerSideOf(turns: readonly TurnReport[], keyOrder: readonly string[]): AnswerSide {
  const parted = hasParts(turns);
  return {
    scope: parted ? "holdout" : "all",
    keys: keyOrder.filter(isAnswerSideKey),
    turns: {
      tune: parted ? turnsOfPart(turns, "tune").length : 0,
      holdout: parted ? turnsOfPart(turns, "holdout").length : 0,
    },
  };
}

/**
 * The turns the headline figures are computed from, as far as case kinds go:
 * synthetic turns (`retrace cases synth`) are a split of their own and stay
 * out of the headline whenever a real (golden or adversarial) turn is present;
 * a run of synthetic cases only has them as its headline (docs/synthetic-cases.md).
 */
export function withoutSynthetic<T extends Pick<TurnReport, "kind">>(turns: readonly T[]): readonly T[] {
  return turns.some((t) => t.kind !== "synthetic") ? turns.filter((t) => t.kind !== "synthetic") : turns;
}

/** True when every turn is synthetic (and there is at least one). */
export function allSynthetic(turns: readonly Pick<TurnReport, "kind">[]): boolean {
  return turns.length > 0 && turns.every((t) => t.kind === "synthetic");
}
