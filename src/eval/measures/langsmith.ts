/**
 * retrace's evaluators in the shape LangSmith's `evaluate()` calls:
 * `(run, example) => { key, score, comment }` (docs/langchain-integration.md).
 * The scores are those of the retrace evaluators (./evaluators.ts), read
 * from the LangSmith run's outputs and the example's reference outputs.
 * No import of the `langsmith` package: the shapes are structural, so this
 * works with whichever langsmith version the user has.
 *
 * Where the artifacts come from:
 * - retrieved ids: `run.outputs.retrievedIds` (string[]), else the last
 *   entry of `run.outputs.retrieval` (the graph state's RetrievalTrace[]),
 *   else `run.outputs.documents` (LangChain Documents: `metadata.parentId`,
 *   else `metadata.id`, else `id`);
 * - gold: `example.outputs.must_cite_one_of` (or `gold`);
 * - expect: `example.outputs.expect` ("answer" by default);
 * - answer, citedIds, refused: `run.outputs.answer`, `.citedIds`, `.refused`.
 */
import { InvalidArgumentError } from "../../errors.js";
import { allEvaluators, type EvaluatorSpec, type Judge } from "./evaluators.js";
import { METRICS } from "./metrics.js";
import type { EvalResult, TurnArtifacts } from "./types.js";

/** The parts of a LangSmith `Run` read here. */
export interface LangSmithRunLike {
  outputs?: Record<string, unknown> | null;
  inputs?: Record<string, unknown> | null;
}

/** The parts of a LangSmith `Example` read here. */
export interface LangSmithExampleLike {
  id?: string;
  inputs?: Record<string, unknown> | null;
  outputs?: Record<string, unknown> | null;
}

/** LangSmith's `EvaluationResults`: several keys from one evaluator; `[]` gives no feedback at all. */
export interface LangSmithResults {
  results: EvalResult[];
}

export type LangSmithEvaluator = (run: LangSmithRunLike, example?: LangSmithExampleLike) => Promise<EvalResult | LangSmithResults>;

function stringArray(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.every((x) => typeof x === "string") ? (v as string[]) : undefined;
}

/** The retrieved card ids of a run (see the module comment), or null when the run carries none. */
export function retrievedIdsOf(outputs: Record<string, unknown>): string[] | null {
  const direct = stringArray(outputs.retrievedIds);
  if (direct !== undefined) return direct;
  if (Array.isArray(outputs.retrieval) && outputs.retrieval.length > 0) {
    const last = outputs.retrieval[outputs.retrieval.length - 1] as { retrievedIds?: unknown };
    const ids = stringArray(last?.retrievedIds);
    if (ids !== undefined) return ids;
  }
  if (Array.isArray(outputs.documents)) {
    return (outputs.documents as { id?: unknown; metadata?: Record<string, unknown> }[]).map((d) => {
      const m = d?.metadata ?? {};
      const id = m.parentId ?? m.id ?? d?.id;
      if (typeof id !== "string") throw new InvalidArgumentError("run.outputs.documents[].metadata.parentId", "a card id string on every document", id);
      return id;
    });
  }
  return null;
}

/** Turn artifacts of one LangSmith (run, example) pair. */
export function artifactsOf(run: LangSmithRunLike, example: LangSmithExampleLike | undefined): TurnArtifacts {
  const out = run.outputs ?? {};
  const ref = example?.outputs ?? {};
  const gold = stringArray(ref.must_cite_one_of) ?? stringArray(ref.gold);
  if (gold === undefined) throw new InvalidArgumentError("example.outputs.must_cite_one_of", "the turn's gold card ids (string[], [] for a no-match turn)", ref.must_cite_one_of ?? ref.gold);
  const expect = ref.expect === "refuse" ? "refuse" : "answer";
  const inputs = example?.inputs ?? {};
  return {
    caseId: typeof inputs.caseId === "string" ? inputs.caseId : (example?.id ?? "example"),
    turn: typeof inputs.turn === "number" ? inputs.turn : 0,
    locale: typeof inputs.locale === "string" ? inputs.locale : "",
    kind: inputs.kind === "adversarial" ? "adversarial" : "golden",
    gold,
    expect,
    retrievedIds: retrievedIdsOf(out),
    citedIds: stringArray(out.citedIds) ?? [],
    answer: typeof out.answer === "string" ? out.answer : "",
    refused: out.refused === true,
  };
}

/** One LangSmith evaluator per retrace evaluator: each returns `{ results }` with that evaluator's keys (none for an empty-gold turn). */
export function toLangSmith(spec: EvaluatorSpec): LangSmithEvaluator {
  const fn: LangSmithEvaluator = async (run, example) => ({ results: await spec.evaluate(artifactsOf(run, example)) });
  Object.defineProperty(fn, "name", { value: spec.name });
  return fn;
}

/**
 * A single-key evaluator: `(run, example) => { key, score, comment }`, e.g.
 * `langsmithMetric("retrieval_hit_at_k", { k: 5 })`. A turn the key does not
 * apply to (empty gold, no retrieval in the run) gives `{ results: [] }`: no
 * feedback, never a vacuous 1.
 */
export function langsmithMetric(key: string, opts: { k: number; judge?: Judge }): LangSmithEvaluator {
  const spec = allEvaluators(opts).find((s) => s.keys.includes(key));
  if (spec === undefined) throw new InvalidArgumentError("key", `one of ${allEvaluators(opts).flatMap((s) => s.keys).join(", ")}`, key);
  const fn: LangSmithEvaluator = async (run, example) => {
    const r = (await spec.evaluate(artifactsOf(run, example))).find((x) => x.key === key);
    return r ?? { results: [] };
  };
  Object.defineProperty(fn, "name", { value: key });
  return fn;
}

/** The retrieval keys (hit, recall, nDCG, MRR, P at k), one single-key evaluator each. */
export function langsmithRetrievalEvaluators(opts: { k: number }): LangSmithEvaluator[] {
  return METRICS.map((m) => langsmithMetric(m.key, opts));
}

/** Every retrace evaluator (retrieval, citations, refusal; groundedness when a judge is given) for LangSmith. */
export function langsmithEvaluators(opts: { k: number; judge?: Judge }): LangSmithEvaluator[] {
  return allEvaluators(opts)
    .filter((s) => opts.judge !== undefined || s.name !== "groundedness")
    .map(toLangSmith);
}
