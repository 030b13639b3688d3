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
 * | `fusion`          | "rrf" \| "minmax" \| "zscore" \| "combmnz" \| "adaptive" \| "signals" | retriever's own |
 * | `rrfK`            | finite number ≥ 0             | retriever's own (60)        |
 * | `weights`         | { dense?, bm25? } finite ≥ 0  | retriever's own             |
 * | `minEvidence`     | number in [0, 1]              | 0.15                        |
 * | `maxSentences`    | integer 1-10                  | 3                           |
 * | `rewriteWithModel`| boolean                       | true                        |
 * | `retriever`       | Retriever (`retrieve()`)      | none (retrieve node throws) |
 * | `cards`           | CardLookup, KnowledgeBase, Card[] | none (empty lookup)   |
 * | `model`           | chat model (`invoke()`)       | none (extractive answerer)  |
 * | `analyzers`       | Analyzers (`createAnalyzers`) | the retriever's, else default profile |
 * | `thread_id`       | string                        | none                        |
 *
 * `analyzers` are what the answerer's term statistics and follow-up
 * detection analyse text with; unset, those of the retriever when it has
 * them (a HybridRetriever's: its BM25 index's), so the answer side matches
 * the BM25 branch.
 *
 * The retrieval keys are forwarded to `retriever.retrieve()` only when set,
 * so a retriever keeps the defaults it was built with; HybridRetriever's are
 * the ones in parentheses (CONFIG_DEFAULTS mirrors them, for documentation).
 * A value of the wrong type throws InvalidArgumentError naming the key.
 * `undefined` and `null` mean "not set".
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { z } from "zod";
import { InvalidArgumentError } from "../errors.js";
import { chunkCard } from "../kb/chunk.js";
import type { Card, Chunk, KnowledgeBase } from "../kb/types.js";
import { HYBRID_DEFAULTS, RETRIEVAL_MODES } from "../retrieval/hybrid.js";
import { DEFAULT_ANALYZERS, type Analyzers } from "../retrieval/analyzer.js";
import type { Retriever } from "../retrieval/types.js";
import {
  AnalyzersSchema,
  AnswerSettingsSchema,
  ContextSettingsSchema,
  ChatModelSchema,
  ConfigurableSchema,
  RetrievalSettingsSchema,
  RetrieverSchema,
  TunablesSchema,
  parseConfig,
  type ChatModelLike,
} from "./configuration-schema.js";

export { RETRIEVAL_MODES };
export type { ChatModelLike };

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

/** Retrieval settings forwarded to `retriever.retrieve()`; an unset key leaves the retriever's default. Inferred from RetrievalSettingsSchema. */
export type RetrievalSettings = z.output<typeof RetrievalSettingsSchema>;

/** Settings of the answer side (applied by the nodes, defaults in CONFIG_DEFAULTS), inferred from AnswerSettingsSchema with every key resolved. */
export type AnswerSettings = {
  [K in keyof z.output<typeof AnswerSettingsSchema>]-?: NonNullable<z.output<typeof AnswerSettingsSchema>[K]>;
};

/** The contextualizer's settings (unset: every earlier turn). */
export type ContextSettings = z.output<typeof ContextSettingsSchema>;

export type TunableConfig = RetrievalSettings & AnswerSettings & ContextSettings;

/** A card and its chunks (section texts), as the answerer and the model prompt read them. */
export interface CardEntry {
  card: Card;
  chunks: readonly Chunk[];
}

/** Card id → card and chunks. */
export type CardLookup = ReadonlyMap<string, CardEntry>;

/** The resolved configuration the nodes work with. */
export interface RetraceConfiguration extends TunableConfig {
  retriever: Retriever | null;
  cards: CardLookup;
  model: ChatModelLike | null;
  analyzers: Analyzers;
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
  return (
    typeof x === "object" &&
    x !== null &&
    Array.isArray((x as KnowledgeBase).cards) &&
    (x as KnowledgeBase).byId instanceof Map
  );
}

/** Normalises any CardSource to a CardLookup (memoised per source object). */
export function toCardLookup(source: unknown, name = "cards"): CardLookup {
  if (source === undefined || source === null) return EMPTY_LOOKUP;
  if (typeof source !== "object")
    throw new InvalidArgumentError(name, "a card lookup (Map), a KnowledgeBase or an array of cards", source);
  const cached = lookupCache.get(source);
  if (cached !== undefined) return cached;
  let lookup: CardLookup;
  if (source instanceof Map) {
    for (const [id, entry] of source as Map<unknown, unknown>) {
      const e = entry as Partial<CardEntry> | null;
      if (
        typeof id !== "string" ||
        e === null ||
        typeof e !== "object" ||
        e.card?.id !== id ||
        !Array.isArray(e.chunks)
      ) {
        throw new InvalidArgumentError(
          `${name}[${JSON.stringify(id)}]`,
          "a { card, chunks } entry keyed by its card id",
          id,
        );
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

/** Validates the retrieval keys of `raw` (RetrievalSettingsSchema); the result has only the keys that are set. */
export function resolveRetrievalSettings(raw: Record<string, unknown>): RetrievalSettings {
  return retrievalSettingsOf(parseConfig(RetrievalSettingsSchema, raw));
}

/** The retrieval settings that are set in a resolved configuration (per-locale overrides included, unresolved). */
export function retrievalSettingsOf(conf: RetrievalSettings): RetrievalSettings {
  const out: RetrievalSettings = {};
  if (conf.locales !== undefined)
    out.locales = Object.fromEntries(
      Object.entries(conf.locales).map(([tag, o]) => [
        tag,
        retrievalSettingsOf(o) as Omit<RetrievalSettings, "locales">,
      ]),
    );
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
 * The settings for one turn's `retriever.retrieve()`: the set keys, with the
 * overrides of `locales[locale]` (else of its language subtag, `es` for
 * `es-MX`) applied key by key (`weights` merged branch by branch). The
 * result never carries `locales`. Without a locale, the base keys.
 */
export function retrievalSettingsFor(conf: RetrievalSettings, locale?: string): Omit<RetrievalSettings, "locales"> {
  const { locales, ...base } = retrievalSettingsOf(conf);
  const language = locale?.split("-")[0];
  const over =
    locale === undefined
      ? undefined
      : (locales?.[locale] ?? (language !== undefined ? locales?.[language] : undefined));
  if (over === undefined) return base;
  const merged: Omit<RetrievalSettings, "locales"> = { ...base, ...over };
  if (base.weights !== undefined && over.weights !== undefined) merged.weights = { ...base.weights, ...over.weights };
  return merged;
}

/**
 * Validates the tunable keys of `raw`: the retrieval keys that are set, and
 * the answer settings (missing ones take `base`, CONFIG_DEFAULTS by default).
 * Used for `config.configurable` and for `buildGraph({ defaults })`.
 */
export function resolveTunables(raw: Record<string, unknown>, base: AnswerSettings = CONFIG_DEFAULTS): TunableConfig {
  return tunablesOf(parseConfig(TunablesSchema, raw), base);
}

function tunablesOf(parsed: z.output<typeof TunablesSchema>, base: AnswerSettings): TunableConfig {
  return {
    ...retrievalSettingsOf(parsed),
    minEvidence: parsed.minEvidence ?? base.minEvidence,
    maxSentences: parsed.maxSentences ?? base.maxSentences,
    rewriteWithModel: parsed.rewriteWithModel ?? base.rewriteWithModel,
    ...(parsed.historyTurns !== undefined ? { historyTurns: parsed.historyTurns } : {}),
  };
}

/** Validates a retriever-like value (RetrieverSchema). */
export function toRetriever(value: unknown, name = "retriever"): Retriever | null {
  return parseConfig(RetrieverSchema, value, name) ?? null;
}

/** Validates an analyzer set (AnalyzersSchema); null when unset. */
export function toAnalyzers(value: unknown, name = "analyzers"): Analyzers | null {
  return parseConfig(AnalyzersSchema, value, name) ?? null;
}

/** Validates a chat-model-like value (ChatModelSchema). */
export function toChatModel(value: unknown, name = "model"): ChatModelLike | null {
  return parseConfig(ChatModelSchema, value, name) ?? null;
}

/** The analyzers a retriever carries (a HybridRetriever's `analyzers`), or undefined. */
function analyzersOf(retriever: Retriever | undefined): Analyzers | undefined {
  const a = (retriever as { analyzers?: unknown } | undefined)?.analyzers;
  return AnalyzersSchema.safeParse(a).success ? (a as Analyzers | undefined) : undefined;
}

/** Reads and validates the configuration the nodes need from a runnable config (ConfigurableSchema). */
export function ensureConfiguration(config?: RunnableConfig): RetraceConfiguration {
  const raw = (config?.configurable ?? {}) as Record<string, unknown>;
  const parsed = parseConfig(ConfigurableSchema, raw);
  return {
    ...tunablesOf(parsed, CONFIG_DEFAULTS),
    retriever: parsed.retriever ?? null,
    cards: toCardLookup(parsed.cards),
    model: parsed.model ?? null,
    analyzers: parsed.analyzers ?? analyzersOf(parsed.retriever) ?? DEFAULT_ANALYZERS,
    threadId: parsed.thread_id === undefined ? null : String(parsed.thread_id),
  };
}
