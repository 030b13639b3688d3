/**
 * Query-adaptive min-max CombSUM (docs/fusion-and-tuning.md, "Adaptive
 * weighting"): the lists' weights are moved per query by how confident each
 * list is about its own head, read from its scores alone (no labels):
 *
 *   c_l       = confidence of list l over its top ADAPTIVE_TOP scores (below)
 *   w'_l      = w_l · exp(β · c_l)
 *   score(d)  = Σ_{lists l containing d} w'_l · (s_l(d) − min_l)/(max_l − min_l)
 *
 * With two lists and weights (α, 1 − α) this is min-max CombSUM with
 * logit(α_q) = logit(α) + β · (c_dense − c_bm25): a list whose head stands
 * out gets more say for that query. β = 0 is min-max CombSUM exactly.
 *
 * Confidence, from the list's top n = min(ADAPTIVE_TOP, length) scores
 * s_1 ≥ … ≥ s_n: x_i = s_i − s_n; if Σx = 0 (one entry, or all tied) c = 0;
 * otherwise p_i = x_i / Σx and c = 1 − H(p)/ln(n − 1) over the n − 1
 * non-negative shares of the first n − 1 entries (normalised entropy; 1 when
 * one entry holds all the mass, 0 when the head is flat). It does not depend
 * on the scale or offset of a list's scores, so BM25 and cosine lists compare.
 *
 * Pure, keyed by id, ties by id, inputs never mutated; each contribution's
 * `weight` is the adapted weight w'_l, so contributions still add up to the
 * fused score.
 */
import { z } from "zod";
import {
  assertNonNegativeFinite,
  bestEntries,
  accumulate,
  defineFusion,
  param,
  type FusedRanked,
  type FusionInput,
} from "./common.js";
import { minMaxNormalize } from "./minmax.js";

/** How many of a list's top scores its confidence reads. */
export const ADAPTIVE_TOP = 10;

/**
 * β, the one fitted constant: how far a list's confidence moves its weight
 * (log-odds per unit of confidence difference). Fitted on Cranfield only by
 * 5-fold cross-validation over queries (bench/adaptive-fusion.ts: 0.5 in
 * every fold, from {0, 0.5, 1, 1.5, 2, 3, 4, 6}).
 */
export const ADAPTIVE_BETA = 0.5;

/** 1 − normalised entropy of the top scores' shifted mass (see the module comment); 0 for fewer than 3 entries or a flat head. */
export function headConfidence(scores: readonly number[], top: number = ADAPTIVE_TOP): number {
  const s = [...scores].sort((a, b) => b - a).slice(0, top);
  const n = s.length;
  if (n < 3) return 0;
  const last = s[n - 1] as number;
  let sum = 0;
  for (let i = 0; i < n - 1; i++) sum += (s[i] as number) - last;
  if (!(sum > 0)) return 0;
  let h = 0;
  for (let i = 0; i < n - 1; i++) {
    const p = ((s[i] as number) - last) / sum;
    if (p > 0) h -= p * Math.log(p);
  }
  return Math.min(1, Math.max(0, 1 - h / Math.log(n - 1)));
}

export interface AdaptiveOptions {
  /** β (default ADAPTIVE_BETA); 0 gives min-max CombSUM. */
  beta?: number;
  /** Top scores read per list (default ADAPTIVE_TOP). */
  top?: number;
}

/** The per-query weights w'_l = w_l · exp(β · c_l), in list order. */
export function adaptiveWeights(lists: readonly FusionInput[], options: AdaptiveOptions = {}): number[] {
  const beta = options.beta ?? ADAPTIVE_BETA;
  assertNonNegativeFinite("beta", beta);
  return lists.map((l) => {
    const w = l.weight ?? 1;
    assertNonNegativeFinite(`weight of ${l.name}`, w);
    const c = headConfidence(
      bestEntries(l, true).map((e) => e.score),
      options.top ?? ADAPTIVE_TOP,
    );
    return w * Math.exp(beta * c);
  });
}

/**
 * Query-adaptive min-max CombSUM. Throws InvalidArgumentError for a negative
 * or non-finite weight or β, a non-finite score, or a bad rank.
 */
export function adaptiveFusion(lists: readonly FusionInput[], options: AdaptiveOptions = {}): FusedRanked[] {
  const weights = adaptiveWeights(lists, options);
  return accumulate(
    lists.map((l, i) => ({ ...l, weight: weights[i] as number })),
    (entries) => minMaxNormalize(entries.map((e) => e.score)),
    true,
  );
}

/** The registry entry: parameters `beta` (finite ≥ 0; ADAPTIVE_BETA) and `top` (positive integer; ADAPTIVE_TOP). */
export const adaptiveMethod = defineFusion({
  name: "adaptive",
  summary: "Σ w_l·e^{β·c_l} · minmax_l(d), c_l = head confidence",
  params: z.object({ beta: param.nonNegative(), top: param.positiveInteger() }).strict(),
  defaults: { beta: ADAPTIVE_BETA, top: ADAPTIVE_TOP },
  fuse: (lists, p) => adaptiveFusion(lists, { beta: p.beta, top: p.top }),
});
