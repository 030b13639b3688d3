/**
 * The guard rail of tuning on synthetic cases (docs/synthetic-cases.md#guard-rails):
 * `retrace tune` on cases that are all synthetic, and `retrace beir --tune
 * --synthetic`, are refused (InvalidArgumentError, exit 2) unless the user
 * passes `--allow-synthetic`; then the warning goes into the printed output
 * and into the written configuration's provenance (`tuned.warning`).
 */
import { InvalidArgumentError } from "../errors.js";
import { allSynthetic } from "../eval/report/parts.js";

export const SYNTHETIC_TUNING_WARNING =
  "tuned on synthetic known-item queries only: they reward exact term matching and misorder lexical and semantic retrieval (Kendall's τ-b −0.58 against Cranfield's real judgments for the naive generator), so these settings are not evidence for your users' questions (docs/synthetic-cases.md)";

/** Throws unless allowed when the tuning would use synthetic queries only; returns the warning to carry, or null. */
export function refuseSyntheticTuning(allow: boolean, command: string): string {
  if (!allow)
    throw new InvalidArgumentError(
      "--allow-synthetic",
      `real labelled cases to tune on (${command} would tune on synthetic cases only, which misorder lexical and semantic retrieval); pass --allow-synthetic to tune anyway`,
      "synthetic cases only",
    );
  return SYNTHETIC_TUNING_WARNING;
}

/** `refuseSyntheticTuning` when every case is synthetic; null otherwise (real cases present: synthetic ones are only a split). */
export function syntheticTuningGuard(
  cases: ReadonlyArray<{ kind: string }>,
  allow: boolean,
  command: string,
): string | null {
  return allSynthetic(cases as ReadonlyArray<{ kind: "golden" | "adversarial" | "synthetic" }>)
    ? refuseSyntheticTuning(allow, command)
    : null;
}

/** The outcome with the warning in its configuration's provenance. */
export function withSyntheticWarning<T extends { config: { tuned?: Record<string, unknown> }; warning?: string }>(
  t: T,
  warning: string | null,
): T {
  if (warning === null) return t;
  return { ...t, warning, config: { ...t.config, tuned: { ...(t.config.tuned ?? {}), warning } } };
}
