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

/** A JSON value (what an opaque setting's parameters may hold). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * One setting of the agent, opaque to whoever reads a trace (docs/fusion-and-tuning.md,
 * "What a trace records"): a method name and its parameters as the agent's own schema
 * outputs them. The harness records, prints and compares it as data (deep equality,
 * differing parameter paths named); only the agent knows what the names mean.
 */
export interface OpaqueSetting {
  method: string;
  params: { [key: string]: JsonValue };
}

export interface RetrievalTraceConfig {
  embedder: string;
  denseK: number;
  bm25K: number;
  /** Fusion of the hybrid mode: the method's registry name and its parameters (complete, defaults filled). */
  fusion: OpaqueSetting;
  /**
   * The rest of the agent's retrieval identity, opaque: whatever else changes
   * its results (docs/fusion-and-tuning.md lists what retrace's retriever
   * records). Compared and printed as data.
   */
  settings?: { [key: string]: JsonValue };
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
