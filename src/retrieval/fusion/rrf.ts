/**
 * Weighted reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009),
 * with per-list weights and the constant k (docs/fusion-and-tuning.md):
 *
 *   score(d) = Σ_{lists l containing d} w_l / (k + rank_l(d))
 *
 * Ranks only: the lists' scores are ignored. Uses each entry's `rank` field
 * (1-based), not its array position. An id absent from a list gets nothing
 * from it. Single-item list: its item gets w/(k + its rank). Ties in the fused
 * score (e.g. 1st in one list and 2nd in the other vs. the reverse, equal
 * weights) are broken by id ascending.
 */
import { z } from "zod";
import {
  accumulate,
  assertNonNegativeFinite,
  defineFusion,
  param,
  type FusedRanked,
  type FusionInput,
} from "./common.js";

/** The RRF constant of the original paper (docs/decisions/0004-fusion-keyed-by-id.md). */
export const RRF_K = 60;

export interface RrfOptions {
  /** The RRF constant; default `RRF_K` (60). 0 is allowed. */
  k?: number;
}

/**
 * Fuses ranked lists by weighted reciprocal rank, keyed by chunk id.
 *
 * - An id listed twice in one list counts once for that list, at its best rank.
 * - `parentId` comes from the first list, in input order, holding the id.
 * - Output: every id of every list, score descending, ties by id ascending,
 *   ranks 1..n. Items whose total is 0 (weight 0) are kept, at the end.
 *
 * Throws InvalidArgumentError for a negative or non-finite weight or k, or a
 * rank that is not a positive integer.
 */
export function reciprocalRankFusion(lists: readonly FusionInput[], options?: RrfOptions): FusedRanked[] {
  const k = options?.k ?? RRF_K;
  assertNonNegativeFinite("k", k);
  return accumulate(lists, (entries) => entries.map((e) => 1 / (k + e.rank)), false);
}

/** The registry entry: parameter `k` (the RRF constant, finite ≥ 0; default RRF_K). */
export const rrfMethod = defineFusion({
  name: "rrf",
  summary: "Σ w_l / (k + rank_l(d)); ranks only",
  params: z.object({ k: param.nonNegative() }).strict(),
  defaults: { k: RRF_K },
  fuse: (lists, p) => reciprocalRankFusion(lists, { k: p.k }),
});
