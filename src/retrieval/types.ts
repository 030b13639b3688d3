/** Data contracts of the retrieval pipeline (docs/architecture.md §4, §5). No LangGraph here. */
import type { Locale } from "../kb/types.js";

/** One entry of a ranked list. `rank` is 1-based; `id` is a chunk id, or a card id after parent dedup. */
export interface Ranked {
  id: string;
  parentId: string;
  score: number;
  rank: number;
  /**
   * Fused entries only: what each list gave this id (its rank and score there,
   * the normalised value, the weight, and the share of the fused score). See
   * docs/fusion-and-tuning.md.
   */
  contributions?: { list: string; rank: number; score: number; normalized: number; weight: number; value: number }[];
}

/** The fusion methods (src/retrieval/fusion.ts). */
export type FusionMethodName = "rrf" | "minmax" | "zscore" | "combmnz" | "adaptive" | "signals";

export type RetrievalMode = "hybrid" | "dense" | "bm25";

export interface RetrievalTraceConfig {
  embedder: string;
  denseK: number;
  bm25K: number;
  /** Fusion method of the hybrid mode (docs/fusion-and-tuning.md). */
  fusion: FusionMethodName;
  /** The RRF constant (used by `rrf` only, recorded always). */
  rrfK: number;
  /** Per-list fusion weights; absent in traces written before fusion methods existed. */
  weights?: { dense: number; bm25: number };
  /** δ of the `signals` fusion (docs/fusion-and-tuning.md); present when `fusion` is "signals" (absent in traces written before it was recorded). */
  signalsShift?: number;
  /** BM25 parameters of the index; absent in old traces. */
  bm25Params?: { k1: number; b: number };
  rerank: string | null;
  /** Extension of the trace contract (docs/architecture.md §5): which branches ran (dense-only and BM25-only are for attribution). */
  mode: RetrievalMode;
}

export interface RetrievalStages {
  dense?: Ranked[];
  bm25?: Ranked[];
  fused: Ranked[];
  reranked?: Ranked[];
  parents: Ranked[];
}

export interface RetrievalTrace {
  /** 0-based turn index within the conversation. */
  turn: number;
  query: string;
  k: number;
  /** Locale filter applied, if any. */
  locale?: Locale;
  config: RetrievalTraceConfig;
  stages: RetrievalStages;
  /** Final top-k card ids in rank order: what the evaluator scores. */
  retrievedIds: string[];
  timingsMs: Record<string, number>;
}

export interface Embedder {
  /** Stable identifier, used in collection names and reports, e.g. `builtin-hash-ngram-384` or `Xenova/bge-small-en-v1.5`. */
  readonly id: string;
  readonly dimension: number;
  /** Human description for reports (the built-in one says it is lexical-fuzzy, not semantic). */
  readonly description: string;
  /**
   * Corpus-fit embedders only (the LSA embedder): the share of the corpus
   * matrix's energy, ‖A_k‖²_F / ‖A‖²_F in [0, 1], that the latent space keeps.
   * The hybrid retriever's default dense weight follows it (docs/fusion-and-tuning.md).
   */
  readonly latentShare?: number;
  /**
   * Corpus-fit embedders only: the latent share corrected for chance, κ =
   * (share − chance)/(1 − chance), chance = the share of the same fit on the
   * corpus's words dealt at random. The `signals` fusion's shift follows it.
   */
  readonly structure?: number;
  /** Corpus-fit embedders only: the `chance` of `structure`. */
  readonly chanceShare?: number;
  /**
   * One vector per text. `locales` (one per text), when given, is each text's
   * locale; embedders that analyse text per locale (the LSA embedder) use it,
   * others ignore it.
   */
  embedDocuments(texts: string[], options?: { locales?: readonly Locale[] }): Promise<number[][]>;
  /** The query's vector; `locale`, when given, is the query's locale (used as in embedDocuments). */
  embedQuery(text: string, options?: { locale?: Locale }): Promise<number[]>;
}

export interface Reranker {
  readonly id: string;
  /** One relevance score per text, higher is more relevant. */
  score(query: string, texts: string[]): Promise<number[]>;
}

export interface RetrieveOptions {
  locale?: Locale;
  /** Overrides of the retriever's defaults for this call. */
  k?: number;
  denseK?: number;
  bm25K?: number;
  mode?: RetrievalMode;
  rerank?: boolean;
  /** Fusion method, RRF constant and per-list weights for this call (hybrid mode). */
  fusion?: FusionMethodName;
  rrfK?: number;
  weights?: { dense?: number; bm25?: number };
  /** Turn index written into the trace. */
  turn?: number;
}

/** What the graph's retrieve node depends on (the hybrid retriever implements it; tests may fake it). */
export interface Retriever {
  retrieve(query: string, options?: RetrieveOptions): Promise<RetrievalTrace>;
}
