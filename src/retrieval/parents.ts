/**
 * Parent dedup: from a ranked list of chunks to a ranked list of cards.
 * Card identity is the parent id (docs/decisions/0001-metric-contract.md); the first occurrence of a
 * card keeps its position, later chunks of the same card are dropped.
 */
import { assertNonNegativeInteger } from "./fusion.js";
import type { Ranked } from "./types.js";
import { cardIdOf } from "../contract/card-id.js";

// The card-id rule is the shared contract of src/contract/card-id.ts.
export { cardIdOf };

/**
 * One entry per card, in order of first occurrence: `id` and `parentId` are the
 * card id (the entry's `parentId`, or its `id` when `parentId` is empty), the
 * score is that of the first occurrence, ranks are renumbered 1..n.
 * The input is not mutated.
 */
export function dedupeParents(ranked: readonly Ranked[]): Ranked[] {
  const seen = new Set<string>();
  const out: Ranked[] = [];
  for (const r of ranked) {
    const card = cardIdOf(r);
    if (seen.has(card)) continue;
    seen.add(card);
    out.push({ id: card, parentId: card, score: r.score, rank: out.length + 1 });
  }
  return out;
}

/** The first `k` entries (fresh copies), or all of them when there are fewer. `k` = 0 gives []. */
export function topK(ranked: readonly Ranked[], k: number): Ranked[] {
  assertNonNegativeInteger("k", k);
  return ranked.slice(0, k).map((r) => ({ ...r }));
}
