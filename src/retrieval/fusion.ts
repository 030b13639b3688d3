/**
 * The fusion entry point (docs/fusion-and-tuning.md): one method a file under
 * `fusion/`, re-exported here with the shared ordering helpers, plus `fuse()`,
 * which dispatches on the method name.
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
import { InvalidArgumentError } from "../errors.js";
import type { FusedRanked, FusionInput } from "./fusion/common.js";
import { adaptiveFusion } from "./fusion/adaptive.js";
import { combMnzFusion } from "./fusion/combmnz.js";
import { minMaxFusion } from "./fusion/minmax.js";
import { RRF_K, reciprocalRankFusion } from "./fusion/rrf.js";
import { signalsFusion } from "./fusion/signals.js";
import { zScoreFusion } from "./fusion/zscore.js";

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
export { ADAPTIVE_BETA, ADAPTIVE_TOP, adaptiveFusion, adaptiveWeights, headConfidence, type AdaptiveOptions } from "./fusion/adaptive.js";
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

export const FUSION_METHODS = ["rrf", "minmax", "zscore", "combmnz", "adaptive", "signals"] as const;
export type FusionMethod = (typeof FUSION_METHODS)[number];

export function isFusionMethod(x: unknown): x is FusionMethod {
  return (FUSION_METHODS as readonly unknown[]).includes(x);
}

export interface FuseOptions {
  method: FusionMethod;
  /** The RRF constant (used by `rrf` only); default RRF_K. */
  rrfK?: number;
  /** δ of `signals` (used by `signals` only); default SIGNALS_SHIFT. */
  shift?: number;
}

/** Fuses `lists` with the named method (see the table above). Throws InvalidArgumentError for an unknown method. */
export function fuse(lists: readonly FusionInput[], options: FuseOptions): FusedRanked[] {
  switch (options.method) {
    case "rrf":
      return reciprocalRankFusion(lists, { k: options.rrfK ?? RRF_K });
    case "minmax":
      return minMaxFusion(lists);
    case "zscore":
      return zScoreFusion(lists);
    case "combmnz":
      return combMnzFusion(lists);
    case "adaptive":
      return adaptiveFusion(lists);
    case "signals":
      return signalsFusion(lists, options.shift === undefined ? {} : { shift: options.shift });
    default:
      throw new InvalidArgumentError("fusion", `one of ${FUSION_METHODS.join(", ")}`, options.method);
  }
}
