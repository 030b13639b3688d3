/**
 * The retrieval trace contract (docs/architecture.md §5): what a retrieval
 * step records about one turn, written by the agent (src/retrieval/,
 * src/nodes/retrieve.ts) and read by the harness (src/eval/). Types only,
 * below both sides: neither imports the other for them.
 */
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

export type RetrievalMode = "hybrid" | "dense" | "bm25";
/** The retrieval modes, in the order `--help` lists them. */
export const RETRIEVAL_MODES: readonly RetrievalMode[] = ["hybrid", "dense", "bm25"];

export interface RetrievalTraceConfig {
  embedder: string;
  denseK: number;
  bm25K: number;
  /**
   * Fusion method of the hybrid mode, by name (docs/fusion-and-tuning.md).
   * Opaque here: the agent's fusion registry names and validates its methods;
   * whoever reads a trace only compares and prints the name.
   */
  fusion: string;
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
