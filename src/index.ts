/**
 * retrace's public API: the graph factory, the instrumented retrieve node
 * (to embed in your own graphs), the trace collector, and the types.
 */
export { buildGraph, hasRetrieval, type BuildGraphOptions, type RetraceGraph } from "./graph/build.js";
export { RetraceState, RetrievalAnnotation, appendTraces, type RetraceStateType, type RetraceUpdateType, type RetrievalStateType, type RetrievalUpdateType } from "./graph/state.js";
export {
  CONFIG_DEFAULTS,
  cardLookup,
  configurableFor,
  ensureConfiguration,
  type AnswerSettings,
  type CardEntry,
  type CardLookup,
  type CardSource,
  type ChatModelLike,
  type RetraceConfigurable,
  type RetraceConfiguration,
  type RetrievalSettings,
  type TunableConfig,
} from "./graph/configuration.js";
export { RetrievalTraceCollector, collectTraces, traceEventOfChunk, type CollectedTrace } from "./graph/collector.js";
export { RETRIEVAL_TRACE_EVENT, isRetrievalTraceEvent, retrieveNode, type RetrievalTraceEvent, type RetrieveNodeState, type RetrieveNodeUpdate } from "./nodes/retrieve.js";
export { contextualize, contextualizeQuery, followUpReason, isFollowUp, FOLLOW_UP_MARKERS } from "./nodes/contextualize.js";
export { generate, parseModelAnswer, REFUSAL_MARKER } from "./nodes/generate.js";
export { answerExtractively, REFUSAL_MESSAGES, type Answer, type RefusalReason } from "./nodes/answerer.js";
export { checkPolicy, POLICY_RULES, type PolicyRule, type PolicyViolation } from "./nodes/policy.js";
export type { Card, Chunk, EvalCase, KnowledgeBase, Locale } from "./kb/types.js";
export type { Ranked, RetrievalMode, RetrievalTrace, RetrieveOptions, Retriever } from "./retrieval/types.js";

// ---------------------------------------------------------------------------
// Evaluate your own graph (docs/evaluate-your-graph.md): the retriever-run
// capture handler and the graph sweep runner, usable from a test file
// without the CLI.
// ---------------------------------------------------------------------------
export {
  DEFAULT_ID_KEYS,
  RETRIEVAL_CALLS,
  RetrieverCapture,
  capturedGoldPositions,
  cardIdsOf,
  describeIdKeys,
  documentId,
  selectRetrieval,
  type CapturedRetrieval,
  type CapturedRetrieverRun,
  type CapturedStage,
  type IdOptions,
  type RetrievalCall,
} from "./eval/capture.js";
export {
  DEFAULT_GRAPH_EXPORT,
  capturedRetrievers,
  defaultInput,
  graphGateFailures,
  isCompiledGraph,
  loadGraph,
  runGraphSweep,
  type EvaluableGraph,
  type GraphSweepOptions,
  type GraphTurn,
  type InputMapper,
  type InputTurn,
  type LoadedGraph,
} from "./eval/external-graph.js";
export { retrievalEvaluator } from "./eval/evaluators.js";
export { loadCatalog, parseCatalog } from "./kb/catalog.js";
export { GraphInputError } from "./errors.js";

// Locales are BCP-47 strings (docs/languages.md): the validating constructor and helpers, and the analyzer choice per language.
export { BUILTIN_LOCALES, canonicalLocale, isLocale, languageOf, tableLocaleFor, toLocale, type BuiltinLocale } from "./kb/types.js";
export { analyzerProfile, applyAnalyzerConfigFile, configureAnalyzers, validateAnalyzerConfig, type AnalyzerOverride, type AnalyzerProfile } from "./retrieval/analyzer.js";
