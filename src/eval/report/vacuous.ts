/**
 * The keys a report has no figure for (n = 0) and why (`vacuous`,
 * `vacuousReasons`), with the artifacts an evaluator saw for a reported
 * turn, which the reasons are read from (./aggregate.ts).
 */
import type { EvaluatorSpec } from "../measures/evaluators.js";
import type { TurnArtifacts } from "../measures/types.js";
import type { Aggregate, TurnReport } from "./types.js";

/** The artifacts an evaluator saw for a reported turn (knownIds are not kept in reports). */
export function artifactsOf(t: TurnReport, knownIds?: ReadonlySet<string>): TurnArtifacts {
  const a: TurnArtifacts = {
    caseId: t.caseId,
    turn: t.turn,
    locale: t.locale,
    kind: t.kind,
    gold: t.gold,
    expect: t.expect,
    retrievedIds: t.retrievedIds,
    citedIds: t.citedIds,
    answer: t.answer,
    refused: t.refused,
  };
  if (t.relevant !== undefined) a.relevant = t.relevant;
  if (t.judged !== undefined) a.judged = t.judged;
  if (t.relevanceOnly === true) a.relevanceOnly = true;
  if (knownIds !== undefined) a.knownIds = knownIds;
  return a;
}

/** Why `spec`'s keys were not measured: the most frequent "not measured" reason among the turns (ties: first seen), else its `whenEmpty`. */
export function vacuousReason(spec: EvaluatorSpec, turns: readonly TurnReport[]): string {
  let reason = spec.whenEmpty;
  if (spec.notMeasured === undefined) return reason;
  const counts = new Map<string, number>();
  for (const t of turns) {
    const r = spec.notMeasured(artifactsOf(t));
    if (r !== null) counts.set(r, (counts.get(r) ?? 0) + 1);
  }
  let best = 0;
  for (const [r, c] of counts) {
    if (c > best) {
      best = c;
      reason = r;
    }
  }
  return reason;
}

/**
 * Why each declared key had n = 0: the most frequent "not measured" reason
 * among the turns (ties: first seen), else the evaluator's `whenEmpty`.
 */
export function vacuousKeys(
  turns: readonly TurnReport[],
  evaluators: readonly EvaluatorSpec[],
  aggregates: Record<string, Aggregate>,
): { vacuous: string[]; vacuousReasons: Record<string, string> } {
  const vacuous: string[] = [];
  const vacuousReasons: Record<string, string> = {};
  for (const spec of evaluators) {
    const missing = spec.keys.filter((k) => aggregates[k] === undefined && !vacuous.includes(k));
    if (missing.length === 0) continue;
    // An evaluator that concerns some turns only (judged@k: turns with judgments) is absent, not vacuous, when the run has none.
    const applies = spec.appliesTo;
    if (applies !== undefined && !turns.some((t) => applies(artifactsOf(t)))) continue;
    const reason = vacuousReason(spec, turns);
    for (const k of missing) {
      vacuous.push(k);
      vacuousReasons[k] = reason;
    }
  }
  return { vacuous, vacuousReasons };
}
