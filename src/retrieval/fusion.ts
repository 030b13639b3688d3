/**
 * The fusion entry point (docs/fusion-and-tuning.md): one method a file under
 * `fusion/`, listed by `fusion/registry.ts` (name, parameter schema,
 * defaults), re-exported here with the shared ordering helpers, plus
 * `fuse()`, which dispatches through the registry.
 *
 * | method    | formula (over the lists l that returned d)                 | uses        |
 * |-----------|------------------------------------------------------------|-------------|
 * | `rrf`     | Σ w_l / (k + rank_l(d))                                    | ranks       |
 * | `minmax`  | Σ w_l · (s − min_l)/(max_l − min_l)                        | scores      |
 * | `zscore`  | Σ w_l · (s − μ_l)/σ_l                                      | scores      |
 * | `combmnz` | |{l : w_l > 0, d ∈ l}| · Σ w_l · (s − min_l)/(max_l − min_l) | scores    |
 * | `adaptive`| Σ w_l·e^{β·c_l} · (s − min_l)/(max_l − min_l), c_l = head confidence | scores |
 * | `signals` | α_q·minmax_dense + (1 − α_q)·minmax_bm25, α_q from confidence and overlap | scores |
 *
 * All are pure: keyed by chunk id, ties broken by id ascending, inputs never
 * mutated, and every fused entry carries each list's contribution.
 */
import type { FusedRanked, FusionInput } from "./fusion/common.js";
import { assertFusionParam, fusionMethod, fusionParams, type FusionMethod } from "./fusion/registry.js";

export {
  assertNonNegativeFinite,
  assertNonNegativeInteger,
  assertPositiveInteger,
  compareByScoreThenId,
  compareIds,
  renumber,
  type Contribution,
  type FusedRanked,
  type FusionInput,
} from "./fusion/common.js";
export {
  ADAPTIVE_BETA,
  ADAPTIVE_TOP,
  adaptiveFusion,
  adaptiveWeights,
  headConfidence,
  type AdaptiveOptions,
} from "./fusion/adaptive.js";
export { combMnzFusion } from "./fusion/combmnz.js";
export { minMaxFusion, minMaxNormalize } from "./fusion/minmax.js";
export { RRF_K, reciprocalRankFusion, type RrfOptions } from "./fusion/rrf.js";
export {
  SIGNALS_BETA,
  SIGNALS_GAMMA,
  SIGNALS_RANGE,
  SIGNALS_SHIFT,
  SIGNALS_TOP,
  signalsFusion,
  signalsWeight,
  type SignalsOptions,
  type SignalsWeight,
} from "./fusion/signals.js";
export { zScoreFusion, zScoreNormalize } from "./fusion/zscore.js";

export {
  FUSION_EXPECTATION,
  FUSION_METHODS,
  FUSION_REGISTRY,
  FusionMethodSchema,
  assertFusionParam,
  fusionMethod,
  fusionParamSchema,
  fusionParams,
  isFusionMethod,
  type FusionMethod,
} from "./fusion/registry.js";
export type { FusionMethodSpec } from "./fusion/common.js";

export interface FuseOptions {
  method: FusionMethod;
  /** The method's parameters (its schema in the registry); unset keys take its defaults. */
  params?: Readonly<Record<string, unknown>>;
  /** The RRF constant: `rrf`'s `k` under the retriever's setting name (used by `rrf` only); default RRF_K. */
  rrfK?: number;
  /** δ of `signals`: its `shift` under the retriever's setting name (used by `signals` only); default SIGNALS_SHIFT. */
  shift?: number;
}

/**
 * Fuses `lists` with the named method (see the table above), dispatched
 * through the registry (fusion/registry.ts): the method's parameters are
 * `params` over its defaults, plus the two settings the retriever names on
 * its own (`rrfK` → rrf's `k`, `shift` → signals' `shift`; `params` wins).
 * Throws InvalidArgumentError for an unknown method (`fusion`) or a bad
 * parameter (named `rrfK`, `shift`, or `<method>.<key>`).
 */
export function fuse(lists: readonly FusionInput[], options: FuseOptions): FusedRanked[] {
  const spec = fusionMethod(options.method);
  return spec.fuse(lists, fuseParams(options));
}

/**
 * The parameters `fuse(lists, options)` runs `options.method` with, as its
 * registry schema outputs them (defaults filled, in the defaults' key order):
 * what a trace records as `config.fusion.params`.
 */
export function fuseParams(options: FuseOptions): Record<string, unknown> {
  const spec = fusionMethod(options.method);
  const aliases: Record<string, unknown> = {};
  if (spec.name === "rrf" && options.rrfK !== undefined) {
    assertFusionParam("rrf", "k", options.rrfK, "rrfK");
    aliases.k = options.rrfK;
  }
  if (spec.name === "signals" && options.shift !== undefined) {
    assertFusionParam("signals", "shift", options.shift, "shift");
    aliases.shift = options.shift;
  }
  return fusionParams(spec, { ...aliases, ...options.params });
}
