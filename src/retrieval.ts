/**
 * `retrace-eval/retrieval`: the hybrid retriever and each of its stages, the
 * knowledge-base loaders and the Chroma store — no LangChain or LangGraph
 * import (docs/architecture.md, "Retrieval").
 */
export {
  HybridRetriever,
  HYBRID_DEFAULTS,
  LSA_HYBRID_BM25,
  LSA_HYBRID_DEFAULTS,
  MODEL_HYBRID_BM25,
  MODEL_HYBRID_DEFAULTS,
  isModelEmbedderId,
  hybridDefaultsFor,
  LSA_DENSE_WEIGHT_RANGE,
  lsaDenseWeight,
  lsaStructureWeight,
  LSA_STRUCTURE_LAMBDA,
  RETRIEVAL_MODES,
  type HybridDefaults,
  type HybridRetrieverOptions,
} from "./retrieval/hybrid.js";
export {
  BM25Index,
  BM25_B,
  BM25_K1,
  type BM25Document,
  type BM25Params,
  type BM25SearchOptions,
  type BM25Stats,
} from "./retrieval/bm25.js";
export {
  analyze,
  analyzerFor,
  createAnalyzers,
  foldAccents,
  loadKbAnalyzers,
  readAnalyzerConfigFile,
  tokenize,
  ANALYZER_CONFIG_FILE,
  DEFAULT_ANALYZERS,
  type Analyzer,
  type AnalyzerConfig,
  type Analyzers,
} from "./retrieval/analyzer.js";
export { HashingEmbedder, BUILTIN_DIMENSION, type HashingEmbedderOptions } from "./retrieval/embedders/builtin.js";
export {
  LsaEmbedder,
  LSA_DEFAULTS,
  fitLsa,
  loadOrFitLsa,
  type LsaChunk,
  type LsaLoadResult,
  type LsaParams,
  type LsaState,
} from "./retrieval/embedders/lsa.js";
export {
  TransformersEmbedder,
  DEFAULT_EMBEDDING_MODEL,
  DEFAULT_RERANK_MODEL,
  locateModel,
  type TransformersEmbedderOptions,
} from "./retrieval/embedders/transformers.js";
export {
  resolveEmbedder,
  resolveReranker,
  type ResolvedEmbedder,
  type ResolvedReranker,
} from "./retrieval/embedders/resolve.js";
export { CrossEncoderReranker, type CrossEncoderRerankerOptions } from "./retrieval/rerank-model.js";
export {
  cosineSimilarity,
  InMemoryDenseIndex,
  type DenseEntry,
  type DenseIndex,
  type DenseSearchOptions,
  type EmbeddableChunk,
} from "./retrieval/dense.js";
export { ChromaDenseIndex, collectionName, requireCurrentCollection } from "./retrieval/chroma-store.js";
export {
  openStore,
  connectChroma,
  defaultDataDir,
  type ChromaStoreHandle,
  type OpenStoreOptions,
} from "./retrieval/chroma-client.js";
export type { SweepResult } from "./retrieval/chroma-segments.js";
export { startLocalChroma, type LocalChroma } from "./retrieval/chroma-process.js";
export type {
  ChromaClientLike,
  ChromaCollection,
  ChromaGetResult,
  ChromaInclude,
  ChromaMetadataInput,
  ChromaMetadataValue,
  ChromaQueryResult,
  ChromaWhere,
} from "./retrieval/chroma-types.js";
export { ingest, describeIngest, type IngestOptions, type IngestResult } from "./retrieval/ingest.js";
export {
  combMnzFusion,
  fuse,
  isFusionMethod,
  minMaxFusion,
  minMaxNormalize,
  reciprocalRankFusion,
  zScoreFusion,
  zScoreNormalize,
  FUSION_METHODS,
  RRF_K,
  type FuseOptions,
  type FusionInput,
  type FusionMethod,
  type RrfOptions,
} from "./retrieval/fusion.js";
export { applyRerank, rerankHead } from "./retrieval/rerank.js";
export { cardIdOf, dedupeParents, topK } from "./retrieval/parents.js";
export type {
  Embedder,
  Ranked,
  RetrievalMode,
  RetrievalStages,
  RetrievalTrace,
  RetrievalTraceConfig,
  OpaqueSetting,
  JsonValue,
  Reranker,
  RetrieveOptions,
  Retriever,
} from "./retrieval/types.js";
export { loadKnowledgeBase, parseCard } from "./kb/cards.js";
export { loadCases, parseCaseLine, validateCases } from "./kb/cases.js";
export { chunkCard, chunkKnowledgeBase } from "./kb/chunk.js";
export { datasetHash, kbHash } from "./kb/hash.js";
export { loadData, type LoadedData } from "./kb/load.js";
export { loadSplit, defaultSplitFile, type CaseSplit, type SplitPart } from "./kb/split.js";
export type { Card, Chunk, EvalCase, EvalTurn, KnowledgeBase, Locale } from "./kb/types.js";
