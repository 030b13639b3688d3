/**
 * `retrace-eval/agent`: retrace's own agent, to run or to take apart: the
 * graph factory and its state, the nodes (contextualize, retrieve, generate,
 * the extractive answerer and the answer policy), the trace collector, the
 * configuration and the composition root that opens the store and builds
 * the retriever. See docs/architecture.md.
 */
export { buildGraph, hasRetrieval, type BuildGraphOptions, type RetraceGraph } from "./graph/build.js";
export {
  RetraceState,
  RetrievalAnnotation,
  appendTraces,
  type RetraceStateType,
  type RetraceUpdateType,
  type RetrievalStateType,
  type RetrievalUpdateType,
} from "./graph/state.js";
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
export {
  RETRIEVAL_TRACE_EVENT,
  isRetrievalTraceEvent,
  retrieveNode,
  type RetrievalTraceEvent,
  type RetrieveNodeState,
  type RetrieveNodeUpdate,
} from "./nodes/retrieve.js";
export {
  contextualize,
  contextualizeQuery,
  followUpReason,
  isFollowUp,
  FOLLOW_UP_MARKERS,
} from "./nodes/contextualize.js";
export { generate, parseModelAnswer, REFUSAL_MARKER } from "./nodes/generate.js";
export { answerExtractively, REFUSAL_MESSAGES, type Answer, type RefusalReason } from "./nodes/answerer.js";
export { checkPolicy, POLICY_RULES, type PolicyRule, type PolicyViolation } from "./nodes/policy.js";

// The composition root (docs/decisions/0006-one-composition-root-and-store-vocabulary.md).
export {
  buildRetriever,
  openSystem,
  resolveStoreChoice,
  STORE_CHOICES,
  type BuiltRetriever,
  type EmbedderChoice,
  type OpenedEmbedder,
  type RetraceSystem,
  type RetrieverRecipe,
  type RetrieverSpec,
  type StoreChoice,
  type StoreKind,
  type SystemOptions,
} from "./system.js";
