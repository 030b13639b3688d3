/**
 * Miss attribution: where a gold card stood at each stage of a retrieval
 * trace, in words — "3rd in dense, 40th in BM25, 7th after fusion, 4th card
 * after parent dedup: in the top-5" or "... cut at k=5". Pure.
 */
import type { RetrievalTrace } from "../../retrieval/types.js";
import { stageSpec } from "./stages.js";
import { goldPositions } from "./trace-summary.js";

/** "in dense", "after fusion" (the stage registry's `position`), or the stage's own name. */
const position = (stage: string) => stageSpec(stage)?.position ?? stage;

/** 1 → "1st", 2 → "2nd", 11 → "11th", 23 → "23rd". */
export function ordinal(n: number): string {
  const mod100 = n % 100;
  if (mod100 >= 11 && mod100 <= 13) return `${n}th`;
  const suffix = { 1: "st", 2: "nd", 3: "rd" }[n % 10] ?? "th";
  return `${n}${suffix}`;
}

export type Verdict = "retrieved" | "cut_at_k" | "not_retrieved";

export interface GoldExplanation {
  gold: string;
  /** stage → 1-based rank (card's best chunk for chunk stages), null when absent. */
  positions: Record<string, number | null>;
  verdict: Verdict;
  text: string;
}

/** Explains where one gold card went through the pipeline of `trace`. */
export function explainGold(trace: RetrievalTrace, gold: string): GoldExplanation {
  const positions = goldPositions(trace, [gold])[gold] ?? {};
  const stageLen = (stage: string) => (trace.stages as unknown as Record<string, unknown[] | undefined>)[stage]?.length ?? 0;
  const parts = Object.entries(positions).map(([stage, rank]) =>
    rank === null ? `absent ${position(stage)} (${stageLen(stage)} listed)` : `${ordinal(rank)} ${position(stage)}`,
  );
  const finalRank = trace.retrievedIds.indexOf(gold);
  const parentRank = positions.parents ?? null;
  let verdict: Verdict;
  let tail: string;
  if (finalRank >= 0) {
    verdict = "retrieved";
    tail = `retrieved at rank ${finalRank + 1} of the top-${trace.k}`;
  } else if (parentRank !== null) {
    verdict = "cut_at_k";
    tail = `cut at k=${trace.k}`;
  } else {
    verdict = "not_retrieved";
    const branches = [
      trace.stages.dense !== undefined ? `dense top-${trace.config.denseK}` : null,
      trace.stages.bm25 !== undefined ? `BM25 top-${trace.config.bm25K}` : null,
    ].filter((x) => x !== null);
    tail = `not retrieved by any branch (${branches.join(", ")})`;
  }
  return { gold, positions, verdict, text: `${gold}: ${[...parts, tail].join(", ")}` };
}
