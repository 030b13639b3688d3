/**
 * Where each missed gold card of a turn was lost (the turn's `goldLostAt`,
 * docs/html-report.md "Turn view"): computed once, where the turn's report
 * entry is made (src/eval/sweep/score-turn.ts, for retrace's graph, `--graph`
 * and `--traces` alike), and filled in when a report written before the field
 * existed is read (./derived-on-read.ts). Every rendering (the HTML turn view,
 * `retrace trace`'s captured-turn text, ./captured-turn.ts) reads the field;
 * none applies the rule itself (issue 55, item 2). The rule is ./attribution.ts
 * `lostAt`. Pure.
 */
import { capturedChains, lostAt, lostAtText, NOT_RETRIEVED, pipelineChain, type CapturedList } from "./attribution.js";
import { NO_RETRIEVAL } from "./graph-report.js";
import { capturedLists } from "./gold-ranks.js";
import type { TurnReport } from "./types.js";

/** A missed gold card's cut stage and its "lost at" words (one entry of a turn's `goldLostAt`). */
export interface LostAt {
  /** The stage that lost it: `final` (cut at k), `retrieval` (no list held it), or the stage (or captured call) that dropped it. */
  at: string;
  /** The words every rendering prints: "cut at k", "not retrieved (…)", "no retrieval" for a turn that made no retriever run. */
  text: string;
}

/**
 * The stage that lost `gold` on turn `t`, by the one rule (`lostAt`,
 * ./attribution.ts): null when it reached the top-k (or the turn has no
 * trace); `"retrieval"` when no list held it (and for a gold-bearing turn
 * with no retrieval); `"final"` when a scored list held it below k (cut at
 * k); otherwise the stage that dropped it (`"fused"` when fusion lost a
 * branch's card; a captured call's key when only its child runs listed it).
 */
export function cutStage(t: TurnReport, gold: string): string | null {
  if (t.noRetrieval === true) return NOT_RETRIEVED;
  const tr = t.trace;
  if (tr === undefined) return null;
  if (tr.retrievedIds.includes(gold)) return null; // in the top-k: the rule's first case, without building the chains
  const lists = capturedLists(t);
  return lists === null
    ? lostAt([pipelineChain(tr.goldPositions[gold] ?? {})], false)
    : capturedCut(lists, gold, false);
}

/** The rule on a captured turn's scored lists (`captured.stages`): null when `inTopK`, else the stage that lost `gold`. */
export function capturedCut(stages: readonly CapturedList[], gold: string, inTopK: boolean): string | null {
  return lostAt(capturedChains(stages, gold), inTopK);
}

/** cutStage with its words: "cut at k", "not retrieved (…)", "no retrieval" for a turn that made no retriever run. */
export function lostAtOf(t: TurnReport, gold: string): LostAt | null {
  const at = cutStage(t, gold);
  if (at === null) return null;
  return { at, text: t.noRetrieval === true ? NO_RETRIEVAL : lostAtText(at, capturedLists(t) !== null) };
}

/**
 * A turn's `goldLostAt`: each gold card that missed the top-k on a turn with
 * a trace (or on a gold-bearing turn that made no retriever run), in the
 * turn's gold order, with where it was lost. Undefined when no card missed
 * (a hit on every card, no gold, or no trace: a turn that threw or measured
 * no retrieval), so such turns carry no field.
 */
export function goldLostAtOf(t: TurnReport): Record<string, LostAt> | undefined {
  if (t.trace === undefined && t.noRetrieval !== true) return undefined;
  let out: Record<string, LostAt> | undefined;
  for (const g of t.gold) {
    const lost = lostAtOf(t, g);
    if (lost !== null) (out ??= {})[g] = lost;
  }
  return out;
}
