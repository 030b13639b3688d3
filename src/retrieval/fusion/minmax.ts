/**
 * Min-max normalised CombSUM (Fox & Shaw, TREC-2 1994; Lee, SIGIR 1997), a
 * weighted sum of each list's scores rescaled to [0, 1] over the candidates
 * that list returned (docs/fusion-and-tuning.md):
 *
 *   norm_l(d)  = (s_l(d) − min_l) / (max_l − min_l)
 *   score(d)   = Σ_{lists l containing d} w_l · norm_l(d)
 *
 * With two lists and weights (α, 1 − α) this is the convex combination
 * α·norm_dense + (1 − α)·norm_bm25; scaling every weight by the same factor
 * scales the scores and leaves the ranking unchanged.
 *
 * Edge cases: a list whose candidates all have the same score (a single-item
 * list included) has max = min; each of its candidates then normalises to 1
 * (it is the list's best). The list's own minimum normalises to 0 and so adds
 * nothing, exactly like an id the list did not return. Ties in the fused score
 * are broken by id ascending.
 */
import { z } from "zod";
import { accumulate, defineFusion, type FusedRanked, type FusionInput } from "./common.js";

/** (s − min)/(max − min) per value; all 1 when max = min (single value or all tied). Empty → empty. */
export function minMaxNormalize(scores: readonly number[]): number[] {
  if (scores.length === 0) return [];
  let min = Infinity;
  let max = -Infinity;
  for (const s of scores) {
    if (s < min) min = s;
    if (s > max) max = s;
  }
  const range = max - min;
  return scores.map((s) => (range > 0 ? (s - min) / range : 1));
}

/**
 * Min-max CombSUM. Uses the entries' `score`; an id listed twice in one list
 * counts once, with its best-ranked entry. Throws InvalidArgumentError for a
 * negative or non-finite weight, a non-finite score, or a bad rank.
 */
export function minMaxFusion(lists: readonly FusionInput[]): FusedRanked[] {
  return accumulate(lists, (entries) => minMaxNormalize(entries.map((e) => e.score)), true);
}

/** The registry entry: no parameters. */
export const minMaxMethod = defineFusion({
  name: "minmax",
  summary: "Σ w_l · (s − min_l)/(max_l − min_l)",
  params: z.object({}).strict(),
  defaults: {},
  fuse: (lists) => minMaxFusion(lists),
});
