/** Data contracts of the retrieval pipeline (DESIGN.md §3.3, §4). No LangGraph here. */
import type { Locale } from "../kb/types.js";

/** One entry of a ranked list. `rank` is 1-based; `id` is a chunk id, or a card id after parent dedup. */
export interface Ranked {
  id: string;
  parentId: string;
  score: number;
  rank: number;
}

export type RetrievalMode = "hybrid" | "dense" | "bm25";

export interface RetrievalTraceConfig {
  embedder: string;
  denseK: number;
  bm25K: number;
  fusion: "rrf";
  rrfK: number;
  rerank: string | null;
  /** Extension of DESIGN.md §3.3: which branches ran (dense-only and BM25-only are for attribution). */
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
  embedDocuments(texts: string[]): Promise<number[][]>;
  embedQuery(text: string): Promise<number[]>;
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
  /** Turn index written into the trace. */
  turn?: number;
}

/** What the graph's retrieve node depends on (the hybrid retriever implements it; tests may fake it). */
export interface Retriever {
  retrieve(query: string, options?: RetrieveOptions): Promise<RetrievalTrace>;
}
