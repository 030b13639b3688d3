/**
 * CombMNZ (Fox & Shaw, TREC-2 1994) over min-max normalised scores
 * (docs/fusion-and-tuning.md):
 *
 *   norm_l(d) = (s_l(d) − min_l) / (max_l − min_l)      (1 when max_l = min_l)
 *   score(d)  = |{l : w_l > 0, d ∈ l}| · Σ_{lists l containing d} w_l · norm_l(d)
 *
 * The multiplier counts the lists with a positive weight that returned d (its
 * list's minimum included, even though that one normalises to 0), so an id
 * found by both branches is doubled. Normalisation is over the candidates each
 * list returned; single-item and all-tied lists normalise to 1 as in
 * min-max CombSUM. Each contribution is reported already multiplied, so an
 * id's contributions add up to its fused score. Ties are broken by id.
 */
import { z } from "zod";
import { accumulate, defineFusion, type FusedRanked, type FusionInput } from "./common.js";
import { minMaxNormalize } from "./minmax.js";

/**
 * CombMNZ. Uses the entries' `score`; an id listed twice in one list counts
 * once, with its best-ranked entry. Throws InvalidArgumentError for a
 * negative or non-finite weight, a non-finite score, or a bad rank.
 */
export function combMnzFusion(lists: readonly FusionInput[]): FusedRanked[] {
  return accumulate(
    lists,
    (entries) => minMaxNormalize(entries.map((e) => e.score)),
    true,
    (count) => count,
  );
}

/** The registry entry: no parameters. */
export const combMnzMethod = defineFusion({
  name: "combmnz",
  summary: "|{l : w_l > 0, d ∈ l}| · Σ w_l · minmax_l(d)",
  params: z.object({}).strict(),
  defaults: {},
  fuse: (lists) => combMnzFusion(lists),
});
