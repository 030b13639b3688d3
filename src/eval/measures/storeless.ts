/**
 * The store-less path made honest (docs/gates-and-exit-codes.md): without a
 * store the graph has no retrieval node, so every key whose value depends on
 * retrieval is "not measured (no store)" — never a number. That is every
 * retrieval metric, and every answer-side key of the default evaluators:
 * citation coverage and correctness (nothing could be cited from retrieved
 * cards), refusal correctness (the answerer refuses because nothing was
 * retrieved, so a refusal is a side effect, not a decision) and groundedness
 * (an answer produced without context has nothing to be grounded in).
 *
 * Only keys of evaluators that declare none of these keys (a user's own
 * evaluator, e.g. on latency or answer format) are still scored.
 */
import { allEvaluators, CANONICAL_KEYS, NO_STORE, type EvaluatorSpec, type Judge } from "./evaluators.js";
import { INCOMPLETE_JUDGMENT_MEASURES, JUDGED, METRICS } from "./metrics.js";

/** Keys of the default evaluators whose value depends on retrieval: all of them (see above). */
export const RETRIEVAL_DEPENDENT_KEYS: readonly string[] = CANONICAL_KEYS;

/** Reason of the answer-side keys of a store-less run (rendered "not measured (no store: ...)"). */
export const NO_STORE_ANSWER = `${NO_STORE}: answered without retrieved context`;

/**
 * The evaluators of a store-less run: each evaluator that emits any
 * retrieval-dependent key scores nothing and reports why ("no store" for the
 * retrieval metrics, NO_STORE_ANSWER for answer-side keys); the others are
 * returned unchanged. Inputs are not mutated.
 */
export function storelessEvaluators(specs: readonly EvaluatorSpec[]): EvaluatorSpec[] {
  const retrievalKeys = new Set([
    ...METRICS.map((m) => m.key),
    JUDGED.key,
    ...INCOMPLETE_JUDGMENT_MEASURES.map((m) => m.key),
  ]);
  return specs.map((spec) => {
    if (!spec.keys.some((k) => RETRIEVAL_DEPENDENT_KEYS.includes(k))) return spec;
    const reason = spec.keys.every((k) => retrievalKeys.has(k)) ? NO_STORE : NO_STORE_ANSWER;
    return { ...spec, evaluate: () => [], notMeasured: () => reason, whenEmpty: reason };
  });
}

/**
 * The evaluators of a run of retrace's own graph at cutoff `k`: every key
 * of `allEvaluators`, all retrieval-dependent ones "not measured (no store)"
 * when the run was store-less. `judge` is the groundedness judge when one
 * was configured (a merge passes a stand-in: it only reads the specs' keys
 * and reasons, never evaluates).
 */
export function evaluatorsFor(o: { k: number; storeBacked: boolean; judge?: Judge }): EvaluatorSpec[] {
  const all = allEvaluators({ k: o.k, ...(o.judge !== undefined ? { judge: o.judge } : {}) });
  // Store-less: every retrieval-dependent key is "not measured (no store)", never a number (storelessEvaluators above).
  return o.storeBacked ? all : storelessEvaluators(all);
}
