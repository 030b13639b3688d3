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
 *   else `run.outputs.documents` (LangChain Documents), each mapped to its
 *   card id by the one document-id rule of `retrace eval --graph`
 *   (./doc-id.ts: `idMap`, else `idKey`, else `metadata.parentId`,
 *   `metadata.doc_id`, `metadata.id`, `metadata.source`, `Document.id`);
 * - gold: `example.outputs.must_cite_one_of` (or `gold`);
 * - expect: `example.outputs.expect` ("answer" by default);
 * - answer, citedIds, refused: `run.outputs.answer`, `.citedIds`, `.refused`.
 */
import { InvalidArgumentError } from "../../errors.js";
import { cardIdsOf, type DocumentLike, type DocumentIdOptions } from "./doc-id.js";
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

export type LangSmithEvaluator = (
  run: LangSmithRunLike,
  example?: LangSmithExampleLike,
) => Promise<EvalResult | LangSmithResults>;

function stringArray(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.every((x) => typeof x === "string") ? (v as string[]) : undefined;
}

/**
 * The retrieved card ids of a run (see the module comment), or null when the
 * run carries none. Documents go through the document-id rule (`ids`: the
 * same `idKey` / `idMap` as `--id-key` / `--id-map`); a document with no id
 * throws its message (exit 2).
 */
export function retrievedIdsOf(outputs: Record<string, unknown>, ids: DocumentIdOptions = {}): string[] | null {
  const direct = stringArray(outputs.retrievedIds);
  if (direct !== undefined) return direct;
  if (Array.isArray(outputs.retrieval) && outputs.retrieval.length > 0) {
    const last = outputs.retrieval[outputs.retrieval.length - 1] as { retrievedIds?: unknown };
    const traced = stringArray(last?.retrievedIds);
    if (traced !== undefined) return traced;
  }
  if (Array.isArray(outputs.documents))
    return cardIdsOf(outputs.documents as DocumentLike[], ids, "run.outputs.documents");
  return null;
}

/** Turn artifacts of one LangSmith (run, example) pair. */
export function artifactsOf(
  run: LangSmithRunLike,
  example: LangSmithExampleLike | undefined,
  ids: DocumentIdOptions = {},
): TurnArtifacts {
  const out = run.outputs ?? {};
  const ref = example?.outputs ?? {};
  const gold = stringArray(ref.must_cite_one_of) ?? stringArray(ref.gold);
  if (gold === undefined)
    throw new InvalidArgumentError(
      "example.outputs.must_cite_one_of",
      "the turn's gold card ids (string[], [] for a no-match turn)",
      ref.must_cite_one_of ?? ref.gold,
    );
  const expect = ref.expect === "refuse" ? "refuse" : "answer";
  const inputs = example?.inputs ?? {};
  return {
    caseId: typeof inputs.caseId === "string" ? inputs.caseId : (example?.id ?? "example"),
    turn: typeof inputs.turn === "number" ? inputs.turn : 0,
    locale: typeof inputs.locale === "string" ? inputs.locale : "",
    kind: inputs.kind === "adversarial" ? "adversarial" : "golden",
    gold,
    expect,
    retrievedIds: retrievedIdsOf(out, ids),
    citedIds: stringArray(out.citedIds) ?? [],
    answer: typeof out.answer === "string" ? out.answer : "",
    refused: out.refused === true,
  };
}

/** The evaluators' options: k, the judge, and how documents map to card ids (`idKey` / `idMap`, ./doc-id.ts). */
export interface LangSmithOptions extends DocumentIdOptions {
  k: number;
  judge?: Judge;
}

function idsOf(opts: DocumentIdOptions): DocumentIdOptions {
  return {
    ...(opts.idKey !== undefined ? { idKey: opts.idKey } : {}),
    ...(opts.idMap !== undefined ? { idMap: opts.idMap } : {}),
  };
}

/** One LangSmith evaluator per retrace evaluator: each returns `{ results }` with that evaluator's keys (none for an empty-gold turn). */
export function toLangSmith(spec: EvaluatorSpec, ids: DocumentIdOptions = {}): LangSmithEvaluator {
  const fn: LangSmithEvaluator = async (run, example) => ({
    results: await spec.evaluate(artifactsOf(run, example, ids)),
  });
  Object.defineProperty(fn, "name", { value: spec.name });
  return fn;
}

/**
 * A single-key evaluator: `(run, example) => { key, score, comment }`, e.g.
 * `langsmithMetric("retrieval_hit_at_k", { k: 5 })`. A turn the key does not
 * apply to (empty gold, no retrieval in the run) gives `{ results: [] }`: no
 * feedback, never a vacuous 1.
 */
export function langsmithMetric(key: string, opts: LangSmithOptions): LangSmithEvaluator {
  const spec = allEvaluators(opts).find((s) => s.keys.includes(key));
  if (spec === undefined)
    throw new InvalidArgumentError(
      "key",
      `one of ${allEvaluators(opts)
        .flatMap((s) => s.keys)
        .join(", ")}`,
      key,
    );
  const fn: LangSmithEvaluator = async (run, example) => {
    const r = (await spec.evaluate(artifactsOf(run, example, idsOf(opts)))).find((x) => x.key === key);
    return r ?? { results: [] };
  };
  Object.defineProperty(fn, "name", { value: key });
  return fn;
}

/** The retrieval keys (hit, recall, nDCG, MRR, P at k), one single-key evaluator each. */
export function langsmithRetrievalEvaluators(opts: Omit<LangSmithOptions, "judge">): LangSmithEvaluator[] {
  return METRICS.map((m) => langsmithMetric(m.key, opts));
}

/** Every retrace evaluator (retrieval, citations, refusal; groundedness when a judge is given) for LangSmith. */
export function langsmithEvaluators(opts: LangSmithOptions): LangSmithEvaluator[] {
  return allEvaluators(opts)
    .filter((s) => opts.judge !== undefined || s.name !== "groundedness")
    .map((s) => toLangSmith(s, idsOf(opts)));
}
