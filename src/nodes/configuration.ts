/**
 * What the nodes read from `config.configurable` (LangGraph's per-run
 * configuration), with the documented defaults. Dependencies (the retriever,
 * the card lookup, a chat model) come from here, never from module globals:
 * `buildGraph` binds them with `graph.withConfig({ configurable })`, and a
 * caller may override any key per invocation.
 *
 * | key               | type                          | default                     |
 * |-------------------|-------------------------------|-----------------------------|
 * | `k`               | positive integer              | retriever's own (5)         |
 * | `denseK`          | positive integer              | retriever's own (20)        |
 * | `bm25K`           | positive integer              | retriever's own (20)        |
 * | `mode`            | "hybrid" \| "dense" \| "bm25" | retriever's own ("hybrid")  |
 * | `rerank`          | boolean                       | retriever's own (false)     |
 * | `fusion`          | "rrf" \| "minmax" \| "zscore" \| "combmnz" | retriever's own |
 * | `rrfK`            | finite number ≥ 0             | retriever's own (60)        |
 * | `weights`         | { dense?, bm25? } finite ≥ 0  | retriever's own             |
 * | `minEvidence`     | number in [0, 1]              | 0.15                        |
 * | `maxSentences`    | integer 1-10                  | 3                           |
 * | `rewriteWithModel`| boolean                       | true                        |
 * | `retriever`       | Retriever (`retrieve()`)      | none (retrieve node throws) |
 * | `cards`           | CardLookup, KnowledgeBase, Card[] | none (empty lookup)   |
 * | `model`           | chat model (`invoke()`)       | none (extractive answerer)  |
 * | `thread_id`       | string                        | none                        |
 *
 * The retrieval keys are forwarded to `retriever.retrieve()` only when set,
 * so a retriever keeps the defaults it was built with; HybridRetriever's are
 * the ones in parentheses (CONFIG_DEFAULTS mirrors them, for documentation).
 * A value of the wrong type throws InvalidArgumentError naming the key.
 * `undefined` and `null` mean "not set".
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { InvalidArgumentError } from "../errors.js";
import { chunkCard } from "../kb/chunk.js";
import type { Card, Chunk, KnowledgeBase } from "../kb/types.js";
import { FUSION_METHODS, isFusionMethod } from "../retrieval/fusion.js";
import { HYBRID_DEFAULTS, RETRIEVAL_MODES } from "../retrieval/hybrid.js";
import type { FusionMethodName, RetrievalMode, Retriever } from "../retrieval/types.js";

export { RETRIEVAL_MODES };

/**
 * Documented defaults. The retrieval ones (k, denseK, bm25K, mode, rerank)
 * are what HybridRetriever applies when the key is unset; the others are
 * applied here.
 */
export const CONFIG_DEFAULTS = Object.freeze({
  k: HYBRID_DEFAULTS.k,
  denseK: HYBRID_DEFAULTS.denseK,
  bm25K: HYBRID_DEFAULTS.bm25K,
  mode: HYBRID_DEFAULTS.mode,
  rerank: HYBRID_DEFAULTS.rerank,
  /**
   * Minimum IDF-weighted share of the question's content terms that the
   * retrieved cards must contain for the extractive answerer to answer
   * (see src/nodes/answerer.ts). Tuned on kb/eval/cases.jsonl with the
   * built-in embedder: at 0.15, 92% of the golden answerable turns are
   * answered and 6 of the 9 golden no-match turns declined; 0.2 drops the
   * answered share under 90%, 0.1 declines only 3 no-match turns.
   */
  minEvidence: 0.15,
  maxSentences: 3,
  rewriteWithModel: true,
});

/** Retrieval settings forwarded to `retriever.retrieve()`; an unset key leaves the retriever's default. */
export interface RetrievalSettings {
  k?: number;
  denseK?: number;
  bm25K?: number;
  mode?: RetrievalMode;
  rerank?: boolean;
  /** Fusion method, RRF constant and branch weights (docs/fusion-and-tuning.md). */
  fusion?: FusionMethodName;
  rrfK?: number;
  weights?: { dense?: number; bm25?: number };
}

/** Settings of the answer side (applied by the nodes, defaults in CONFIG_DEFAULTS). */
export interface AnswerSettings {
  minEvidence: number;
  maxSentences: number;
  rewriteWithModel: boolean;
}

export type TunableConfig = RetrievalSettings & AnswerSettings;

/** A card and its chunks (section texts), as the answerer and the model prompt read them. */
export interface CardEntry {
  card: Card;
  chunks: readonly Chunk[];
}

/** Card id → card and chunks. */
export type CardLookup = ReadonlyMap<string, CardEntry>;

/** Anything that answers a list of messages with a message: every LangChain chat model, or a runnable around one. */
export interface ChatModelLike {
  invoke(input: BaseMessage[], options?: RunnableConfig): Promise<BaseMessage>;
}

/** The resolved configuration the nodes work with. */
export interface RetraceConfiguration extends TunableConfig {
  retriever: Retriever | null;
  cards: CardLookup;
  model: ChatModelLike | null;
  threadId: string | null;
}

/** What may be passed as `cards`. */
export type CardSource = CardLookup | KnowledgeBase | readonly Card[];

const lookupCache = new WeakMap<object, CardLookup>();
const EMPTY_LOOKUP: CardLookup = new Map();

/** Builds the card lookup (chunking each card the way the retriever's index does). */
export function cardLookup(source: KnowledgeBase | readonly Card[]): CardLookup {
  const cards = Array.isArray(source) ? (source as readonly Card[]) : (source as KnowledgeBase).cards;
  const map = new Map<string, CardEntry>();
  for (const card of cards) map.set(card.id, { card, chunks: chunkCard(card) });
  return map;
}

function isKnowledgeBase(x: unknown): x is KnowledgeBase {
  return typeof x === "object" && x !== null && Array.isArray((x as KnowledgeBase).cards) && (x as KnowledgeBase).byId instanceof Map;
}

/** Normalises any CardSource to a CardLookup (memoised per source object). */
export function toCardLookup(source: unknown, name = "cards"): CardLookup {
  if (source === undefined || source === null) return EMPTY_LOOKUP;
  if (typeof source !== "object") throw new InvalidArgumentError(name, "a card lookup (Map), a KnowledgeBase or an array of cards", source);
  const cached = lookupCache.get(source);
  if (cached !== undefined) return cached;
  let lookup: CardLookup;
  if (source instanceof Map) {
    for (const [id, entry] of source as Map<unknown, unknown>) {
      const e = entry as Partial<CardEntry> | null;
      if (typeof id !== "string" || e === null || typeof e !== "object" || e.card?.id !== id || !Array.isArray(e.chunks)) {
        throw new InvalidArgumentError(`${name}[${JSON.stringify(id)}]`, "a { card, chunks } entry keyed by its card id", id);
      }
    }
    lookup = source as CardLookup;
  } else if (isKnowledgeBase(source) || Array.isArray(source)) {
    lookup = cardLookup(source as KnowledgeBase | Card[]);
  } else {
    throw new InvalidArgumentError(name, "a card lookup (Map), a KnowledgeBase or an array of cards", "object");
  }
  lookupCache.set(source, lookup);
  return lookup;
}

function positiveInteger(name: string, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new InvalidArgumentError(name, "a positive integer", value);
  }
  return value;
}

function nonNegative(name: string, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) throw new InvalidArgumentError(name, "a finite non-negative number", value);
  return value;
}

function weightsOf(value: unknown): { dense?: number; bm25?: number } | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) throw new InvalidArgumentError("weights", "an object { dense?, bm25? }", value);
  const w = value as Record<string, unknown>;
  for (const key of Object.keys(w)) if (key !== "dense" && key !== "bm25") throw new InvalidArgumentError(`weights.${key}`, "dense or bm25", key);
  const dense = nonNegative("weights.dense", w.dense);
  const bm25 = nonNegative("weights.bm25", w.bm25);
  return { ...(dense !== undefined ? { dense } : {}), ...(bm25 !== undefined ? { bm25 } : {}) };
}

function boolean(name: string, value: unknown): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw new InvalidArgumentError(name, "a boolean", value);
  return value;
}

/** Validates the retrieval keys of `raw`; the result has only the keys that are set. */
export function resolveRetrievalSettings(raw: Record<string, unknown>): RetrievalSettings {
  const mode = raw.mode ?? undefined;
  if (mode !== undefined && !(RETRIEVAL_MODES as readonly unknown[]).includes(mode)) {
    throw new InvalidArgumentError("mode", `one of ${RETRIEVAL_MODES.join(", ")}`, mode);
  }
  const fusion = raw.fusion ?? undefined;
  if (fusion !== undefined && !isFusionMethod(fusion)) throw new InvalidArgumentError("fusion", `one of ${FUSION_METHODS.join(", ")}`, fusion);
  return retrievalSettingsOf({
    k: positiveInteger("k", raw.k),
    denseK: positiveInteger("denseK", raw.denseK),
    bm25K: positiveInteger("bm25K", raw.bm25K),
    mode: mode as RetrievalMode | undefined,
    rerank: boolean("rerank", raw.rerank),
    fusion: fusion as FusionMethodName | undefined,
    rrfK: nonNegative("rrfK", raw.rrfK),
    weights: weightsOf(raw.weights),
  });
}

/** The retrieval settings that are set in a resolved configuration (for `retriever.retrieve()`). */
export function retrievalSettingsOf(conf: RetrievalSettings): RetrievalSettings {
  const out: RetrievalSettings = {};
  if (conf.k !== undefined) out.k = conf.k;
  if (conf.denseK !== undefined) out.denseK = conf.denseK;
  if (conf.bm25K !== undefined) out.bm25K = conf.bm25K;
  if (conf.mode !== undefined) out.mode = conf.mode;
  if (conf.rerank !== undefined) out.rerank = conf.rerank;
  if (conf.fusion !== undefined) out.fusion = conf.fusion;
  if (conf.rrfK !== undefined) out.rrfK = conf.rrfK;
  if (conf.weights !== undefined) out.weights = { ...conf.weights };
  return out;
}

/**
 * Validates the tunable keys of `raw`: the retrieval keys that are set, and
 * the answer settings (missing ones take `base`, CONFIG_DEFAULTS by default).
 * Used for `config.configurable` and for `buildGraph({ defaults })`.
 */
export function resolveTunables(raw: Record<string, unknown>, base: AnswerSettings = CONFIG_DEFAULTS): TunableConfig {
  const minEvidence = raw.minEvidence ?? base.minEvidence;
  if (typeof minEvidence !== "number" || !Number.isFinite(minEvidence) || minEvidence < 0 || minEvidence > 1) {
    throw new InvalidArgumentError("minEvidence", "a number in [0, 1]", minEvidence);
  }
  const maxSentences = positiveInteger("maxSentences", raw.maxSentences) ?? base.maxSentences;
  if (maxSentences > 10) throw new InvalidArgumentError("maxSentences", "an integer from 1 to 10", maxSentences);
  return {
    ...resolveRetrievalSettings(raw),
    minEvidence,
    maxSentences,
    rewriteWithModel: boolean("rewriteWithModel", raw.rewriteWithModel) ?? base.rewriteWithModel,
  };
}

/** Validates a retriever-like value. */
export function toRetriever(value: unknown, name = "retriever"): Retriever | null {
  if (value === undefined || value === null) return null;
  if (typeof (value as Retriever).retrieve !== "function") {
    throw new InvalidArgumentError(name, "an object with a retrieve(query, options) method", typeof value);
  }
  return value as Retriever;
}

/** Validates a chat-model-like value. */
export function toChatModel(value: unknown, name = "model"): ChatModelLike | null {
  if (value === undefined || value === null) return null;
  if (typeof (value as ChatModelLike).invoke !== "function") {
    throw new InvalidArgumentError(name, "a chat model (an object with an invoke(messages) method)", typeof value);
  }
  return value as ChatModelLike;
}

/** Reads and validates the configuration the nodes need from a runnable config. */
export function ensureConfiguration(config?: RunnableConfig): RetraceConfiguration {
  const raw = (config?.configurable ?? {}) as Record<string, unknown>;
  const threadId = raw.thread_id;
  if (threadId !== undefined && threadId !== null && typeof threadId !== "string" && typeof threadId !== "number") {
    throw new InvalidArgumentError("thread_id", "a string", threadId);
  }
  return {
    ...resolveTunables(raw),
    retriever: toRetriever(raw.retriever),
    cards: toCardLookup(raw.cards),
    model: toChatModel(raw.model),
    threadId: threadId === undefined || threadId === null ? null : String(threadId),
  };
}
