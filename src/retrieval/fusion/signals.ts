/**
 * Signal-weighted min-max CombSUM (docs/fusion-and-tuning.md, "Label-free
 * per-query weighting"): the dense weight of a two-list (dense + BM25) fusion
 * is set per query from signals read at query time, no judgments:
 *
 *   α        = w_dense / (w_dense + w_bm25)           (the collection-level weight: for LSA, λ·κ)
 *   α_c      = clamp(α + δ, 0.1, 0.9)                  (δ: the `shift` option; default SIGNALS_SHIFT)
 *   logit α_q = logit α_c + β · (c_dense − c_bm25) + γ · (overlap − 0.5)
 *   score(d) = α_q · minmax_dense(d) + (1 − α_q) · minmax_bm25(d)
 *
 * c_l is each list's head confidence (`headConfidence`: 1 − normalised
 * entropy of its top SIGNALS_TOP scores shifted by the last of them), and
 * overlap = |top-n(dense) ∩ top-n(bm25)| / n with n = SIGNALS_TOP. With
 * γ < 0 a query whose two lists disagree leans towards dense, one whose lists
 * agree towards BM25. α of exactly 0 or 1 (a branch switched off) is kept as
 * it is. Over the LSA embedder the retriever's α is already λ·κ, κ its
 * chance-corrected latent share (`lsaStructureWeight` in ../hybrid.ts), and it
 * passes δ = 0; over other embedders δ = SIGNALS_SHIFT. The constants (λ
 * there, δ, β, γ here) were fitted on Cranfield only, by 5-fold
 * cross-validation over queries (bench/query-weighting.bench.ts).
 *
 * Lists that are not exactly one `dense` and one `bm25` list (a single
 * branch, three lists, other names) carry no pair to weigh: `signalsFusion`
 * is then min-max CombSUM with the given weights (`signalsWeight` refuses them).
 *
 * Pure, keyed by id, ties by id, inputs never mutated; each contribution's
 * `weight` is the per-query weight, so contributions add up to the fused score.
 */
import { InvalidArgumentError } from "../../errors.js";
import { headConfidence } from "./adaptive.js";
import { z } from "zod";
import {
  accumulate,
  assertNonNegativeFinite,
  bestEntries,
  defineFusion,
  param,
  type FusedRanked,
  type FusionInput,
} from "./common.js";
import { minMaxFusion, minMaxNormalize } from "./minmax.js";

/** δ: added to the collection-level dense weight before the per-query terms when nothing sets it (over a non-LSA embedder; fitted on Cranfield with the latent-share weight). */
export const SIGNALS_SHIFT = 0.4;
/** β: log-odds per unit of head-confidence difference, dense − BM25 (fitted on Cranfield). */
export const SIGNALS_BETA = 2;
/** γ: log-odds per unit of top-n overlap above one half (fitted on Cranfield). */
export const SIGNALS_GAMMA = -2;
/** n: the head read for confidence and overlap. */
export const SIGNALS_TOP = 10;
/** Bounds of α_c. */
export const SIGNALS_RANGE: Readonly<{ min: number; max: number }> = Object.freeze({ min: 0.1, max: 0.9 });

export interface SignalsOptions {
  shift?: number;
  beta?: number;
  gamma?: number;
  top?: number;
}

/** What the weight of one query was made from (for traces and the bench). */
export interface SignalsWeight {
  /** The collection-level α from the list weights. */
  base: number;
  confidenceDense: number;
  confidenceBm25: number;
  overlap: number;
  /** The per-query dense weight α_q (BM25: 1 − α_q). */
  dense: number;
}

/** True when `lists` are exactly one list named `dense` and one named `bm25`. */
export function isDenseBm25Pair(lists: readonly FusionInput[]): boolean {
  return lists.length === 2 && lists.some((l) => l.name === "dense") && lists.some((l) => l.name === "bm25");
}

function listNamed(lists: readonly FusionInput[], name: string): FusionInput {
  const l = lists.filter((x) => x.name === name);
  if (!isDenseBm25Pair(lists) || l.length !== 1) {
    throw new InvalidArgumentError(
      "lists",
      "exactly two lists named dense and bm25 (signals fusion)",
      lists.map((x) => x.name).join(","),
    );
  }
  return l[0] as FusionInput;
}

/** The per-query dense weight α_q and the signals behind it (see the module comment). */
export function signalsWeight(lists: readonly FusionInput[], options: SignalsOptions = {}): SignalsWeight {
  const shift = options.shift ?? SIGNALS_SHIFT;
  const beta = options.beta ?? SIGNALS_BETA;
  const gamma = options.gamma ?? SIGNALS_GAMMA;
  const top = options.top ?? SIGNALS_TOP;
  for (const [k, v] of [
    ["shift", shift],
    ["beta", Math.abs(beta)],
    ["gamma", Math.abs(gamma)],
    ["top", top],
  ] as const) {
    if (typeof v !== "number" || !Number.isFinite(v)) throw new InvalidArgumentError(k, "a finite number", v);
  }
  const dense = listNamed(lists, "dense");
  const bm25 = listNamed(lists, "bm25");
  const wd = dense.weight ?? 1;
  const wb = bm25.weight ?? 1;
  assertNonNegativeFinite("weight of dense", wd);
  assertNonNegativeFinite("weight of bm25", wb);
  const d = bestEntries(dense, true);
  const b = bestEntries(bm25, true);
  const cd = headConfidence(
    d.map((e) => e.score),
    top,
  );
  const cb = headConfidence(
    b.map((e) => e.score),
    top,
  );
  const headD = new Set(d.slice(0, top).map((e) => e.id));
  const overlap = b.slice(0, top).filter((e) => headD.has(e.id)).length / top;
  const base = wd + wb > 0 ? wd / (wd + wb) : 0.5;
  if (base === 0 || base === 1) return { base, confidenceDense: cd, confidenceBm25: cb, overlap, dense: base };
  const ac = Math.min(SIGNALS_RANGE.max, Math.max(SIGNALS_RANGE.min, base + shift));
  const z = Math.log(ac / (1 - ac)) + beta * (cd - cb) + gamma * (overlap - 0.5);
  return { base, confidenceDense: cd, confidenceBm25: cb, overlap, dense: 1 / (1 + Math.exp(-z)) };
}

/**
 * Signal-weighted min-max CombSUM over a dense and a BM25 list (any other
 * lists: min-max CombSUM, see the module comment). Throws
 * InvalidArgumentError for a negative or non-finite weight, a non-finite
 * score or a bad rank.
 */
export function signalsFusion(lists: readonly FusionInput[], options: SignalsOptions = {}): FusedRanked[] {
  if (!isDenseBm25Pair(lists)) return minMaxFusion(lists);
  const w = signalsWeight(lists, options);
  return accumulate(
    lists.map((l) => ({ ...l, weight: l.name === "dense" ? w.dense : 1 - w.dense })),
    (entries) => minMaxNormalize(entries.map((e) => e.score)),
    true,
  );
}

/** The registry entry: parameters `shift` δ, `beta` β, `gamma` γ (finite numbers) and `top` n (positive integer); defaults the SIGNALS_* constants. */
export const signalsMethod = defineFusion({
  name: "signals",
  summary: "α_q·minmax_dense(d) + (1 − α_q)·minmax_bm25(d), α_q per query from head confidence and overlap",
  params: z
    .object({ shift: param.finite(), beta: param.finite(), gamma: param.finite(), top: param.positiveInteger() })
    .strict(),
  defaults: { shift: SIGNALS_SHIFT, beta: SIGNALS_BETA, gamma: SIGNALS_GAMMA, top: SIGNALS_TOP },
  fuse: (lists, p) => signalsFusion(lists, { shift: p.shift, beta: p.beta, gamma: p.gamma, top: p.top }),
});
