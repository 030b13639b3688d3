/**
 * A trace as the report keeps it, per turn: where each gold card stood at
 * every stage, and the head of each stage's ranked list (so the HTML report
 * can show what each stage ranked; docs/html-report.md). Pure.
 */
import { cardIdOf } from "../../contract/card-id.js";
import type { Ranked, RetrievalTrace } from "../../contract/trace.js";
import type { GoldPositions, TraceSummary } from "./types.js";

/**
 * Entries kept per stage. Gold cards ranked below the head still have their
 * exact rank in `goldPositions`; the head is what a reader looks at. 10 keeps
 * the report of the shipped set (230 turns) well under 2 MB.
 */
export const STAGE_HEAD_LIMIT = 10;

/** Significant digits kept of each score (RRF scores are ~1e-2, so 4 keeps their order readable). */
export const SCORE_DIGITS = 4;

/** `x` rounded to SCORE_DIGITS significant digits; 0 and non-finite values stay as they are. */
export function roundScore(x: number): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  return Number(x.toPrecision(SCORE_DIGITS));
}

/**
 * `{ stages: { stage: [[id, score], ...] }, stageSizes: { stage: n } }` for
 * every stage the trace holds, in the trace's stage order. Edge cases: a
 * stage that did not run is absent; an empty stage gives `[]` and size 0.
 */
export function stageHeads(
  trace: RetrievalTrace,
  limit: number = STAGE_HEAD_LIMIT,
): { stages: Record<string, [string, number][]>; stageSizes: Record<string, number> } {
  const stages: Record<string, [string, number][]> = {};
  const stageSizes: Record<string, number> = {};
  for (const [stage, ranked] of Object.entries(trace.stages) as [string, Ranked[] | undefined][]) {
    if (ranked === undefined) continue;
    stages[stage] = ranked.slice(0, limit).map((r) => [r.id, roundScore(r.score)]);
    stageSizes[stage] = ranked.length;
  }
  return { stages, stageSizes };
}

/**
 * Where each gold card stood at each stage of a trace: `{ goldId: { stage: rank } }`,
 * rank 1-based (for chunk-level stages, the rank of the card's best chunk),
 * null when the card is absent from that stage's list.
 */
export function goldPositions(trace: RetrievalTrace, gold: readonly string[]): GoldPositions {
  const firstRank: [string, Map<string, number>][] = [];
  for (const [stage, ranked] of Object.entries(trace.stages)) {
    if (ranked === undefined) continue;
    const first = new Map<string, number>();
    for (const r of ranked) {
      const card = cardIdOf(r);
      if (!first.has(card)) first.set(card, r.rank);
    }
    firstRank.push([stage, first]);
  }
  return Object.fromEntries(
    gold.map((g) => [g, Object.fromEntries(firstRank.map(([stage, first]) => [stage, first.get(g) ?? null]))]),
  );
}

export function summarizeTrace(trace: RetrievalTrace, gold: readonly string[]): TraceSummary {
  // Wall-clock timings stay out of the per-turn summary: they go to the report's `timings` section (docs/determinism.md).
  return {
    query: trace.query,
    k: trace.k,
    retrievedIds: trace.retrievedIds,
    goldPositions: goldPositions(trace, gold),
    ...stageHeads(trace),
  };
}
