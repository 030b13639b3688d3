/**
 * Z-score normalised CombSUM (Montague & Aslam, CIKM 2001; ranx's "zmuv"),
 * each list's scores standardised over the candidates that list returned
 * (docs/fusion-and-tuning.md):
 *
 *   μ_l = mean of s_l over the list,  σ_l = √(mean of (s_l − μ_l)²)   (population σ)
 *   z_l(d)   = (s_l(d) − μ_l) / σ_l
 *   score(d) = Σ_{lists l containing d} w_l · z_l(d)
 *
 * An id absent from a list gets 0 from it, i.e. it is treated as that list's
 * average candidate (as ranx does). Edge cases: σ_l = 0 (a single-item list,
 * or all scores tied) gives z = 0 for every candidate of that list, so such a
 * list does not move the fusion. Fused scores can be negative. Ties are broken
 * by id ascending.
 */
import { z } from "zod";
import { accumulate, defineFusion, type FusedRanked, type FusionInput } from "./common.js";

/** (s − μ)/σ per value with the population σ; all 0 when σ = 0 (single value or all tied). Empty → empty. */
export function zScoreNormalize(scores: readonly number[]): number[] {
  const n = scores.length;
  if (n === 0) return [];
  let sum = 0;
  for (const s of scores) sum += s;
  const mu = sum / n;
  let ss = 0;
  for (const s of scores) ss += (s - mu) * (s - mu);
  const sigma = Math.sqrt(ss / n);
  return scores.map((s) => (sigma > 0 ? (s - mu) / sigma : 0));
}

/**
 * Z-score CombSUM. Uses the entries' `score`; an id listed twice in one list
 * counts once, with its best-ranked entry. Throws InvalidArgumentError for a
 * negative or non-finite weight, a non-finite score, or a bad rank.
 */
export function zScoreFusion(lists: readonly FusionInput[]): FusedRanked[] {
  return accumulate(lists, (entries) => zScoreNormalize(entries.map((e) => e.score)), true);
}

/** The registry entry: no parameters. */
export const zScoreMethod = defineFusion({
  name: "zscore",
  summary: "Σ w_l · (s − μ_l)/σ_l",
  params: z.object({}).strict(),
  defaults: {},
  fuse: (lists) => zScoreFusion(lists),
});
