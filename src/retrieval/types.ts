/**
 * Data contracts of the retrieval pipeline (docs/architecture.md §4, §5). No
 * LangGraph here. The trace and ranking types are the shared contract of
 * src/contract/trace.ts, re-exported.
 */
import type { Locale } from "../kb/types.js";

/** The fusion methods (src/retrieval/fusion.ts). */
export type FusionMethodName = "rrf" | "minmax" | "zscore" | "combmnz" | "adaptive" | "signals";

export type {
  Ranked,
  RetrievalMode,
  RetrievalStages,
  RetrievalTrace,
  RetrievalTraceConfig,
  OpaqueSetting,
  JsonValue,
} from "../contract/trace.js";
import type { RetrievalMode, RetrievalTrace } from "../contract/trace.js";

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
