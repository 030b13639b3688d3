/**
 * The head of each stage's ranked list, kept in the report's per-turn trace
 * summary so the HTML report can show what each stage ranked (see
 * docs/html-report.md). Pure.
 */
import type { Ranked, RetrievalTrace } from "../retrieval/types.js";

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
export function stageHeads(trace: RetrievalTrace, limit: number = STAGE_HEAD_LIMIT): { stages: Record<string, [string, number][]>; stageSizes: Record<string, number> } {
  const stages: Record<string, [string, number][]> = {};
  const stageSizes: Record<string, number> = {};
  for (const [stage, ranked] of Object.entries(trace.stages) as [string, Ranked[] | undefined][]) {
    if (ranked === undefined) continue;
    stages[stage] = ranked.slice(0, limit).map((r) => [r.id, roundScore(r.score)]);
    stageSizes[stage] = ranked.length;
  }
  return { stages, stageSizes };
}
