/**
 * `retrace-eval/langchain`: retrace's parts as LangChain components (src/adapters/langchain.ts), and its
 * evaluators in the `(run, example) => {key, score, comment}` shape of LangSmith's `evaluate()`
 * (src/eval/measures/langsmith.ts; docs/langchain-integration.md).
 */
export {
  RetraceEmbeddings,
  RetraceRetriever,
  documentsOf,
  type RetraceEmbeddingsInput,
  type RetraceRetrieverInput,
} from "./adapters/langchain.js";
export {
  artifactsOf,
  langsmithEvaluators,
  langsmithMetric,
  langsmithRetrievalEvaluators,
  retrievedIdsOf,
  toLangSmith,
  type LangSmithEvaluator,
  type LangSmithExampleLike,
  type LangSmithOptions,
  type LangSmithResults,
  type LangSmithRunLike,
} from "./eval/measures/langsmith.js";
// The one document-id rule the evaluators apply to `run.outputs.documents` (src/eval/measures/doc-id.ts; docs/evaluate-your-graph.md).
export {
  DEFAULT_ID_KEYS,
  cardIdsOf,
  describeIdKeys,
  documentId,
  type DocumentIdOptions,
  type DocumentLike,
} from "./eval/measures/doc-id.js";
