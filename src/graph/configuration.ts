/**
 * The graph's configuration: what `config.configurable` may carry, with its
 * documented defaults (retrieval: k=5, denseK=20, bm25K=20, mode="hybrid",
 * rerank=false, applied by the retriever when unset; answer: minEvidence=0.15,
 * maxSentences=3, rewriteWithModel=true) and the dependencies (`retriever`,
 * `cards`, `model`, `analyzers`, `thread_id`).
 *
 * The nodes read it themselves (src/nodes/configuration.ts, one layer below,
 * so the exported retrieve node works in any graph); this module re-exports
 * that contract and adds what the graph factory needs: validating the
 * factory's options and turning them into the `configurable` it binds with
 * `graph.withConfig({ configurable })`. Per-invocation `configurable` keys
 * override the bound ones (LangGraph merges them).
 */
import { InvalidArgumentError } from "../errors.js";
import {
  CONFIG_DEFAULTS,
  RETRIEVAL_MODES,
  cardLookup,
  ensureConfiguration,
  resolveRetrievalSettings,
  resolveTunables,
  toAnalyzers,
  toCardLookup,
  toChatModel,
  toRetriever,
  type AnswerSettings,
  type CardEntry,
  type CardLookup,
  type CardSource,
  type ChatModelLike,
  type RetraceConfiguration,
  type RetrievalSettings,
  type TunableConfig,
} from "../nodes/configuration.js";
import type { Analyzers } from "../retrieval/analyzer.js";
import type { Retriever } from "../retrieval/types.js";

export {
  CONFIG_DEFAULTS,
  RETRIEVAL_MODES,
  cardLookup,
  ensureConfiguration,
  resolveRetrievalSettings,
  resolveTunables,
  toCardLookup,
};
export type {
  AnswerSettings,
  CardEntry,
  CardLookup,
  CardSource,
  ChatModelLike,
  RetraceConfiguration,
  RetrievalSettings,
  TunableConfig,
};

/** The `configurable` object a built graph is bound with. */
export interface RetraceConfigurable extends RetrievalSettings, Partial<AnswerSettings> {
  retriever?: Retriever;
  cards: CardLookup;
  model?: ChatModelLike;
  analyzers?: Analyzers;
}

/**
 * Validates the dependencies and defaults given to the graph factory and
 * returns the `configurable` to bind. Throws InvalidArgumentError on a bad
 * value (at build time, not at the first turn).
 */
export function configurableFor(options: {
  store: unknown;
  cards: unknown;
  model?: unknown;
  analyzers?: unknown;
  defaults?: Partial<TunableConfig>;
}): RetraceConfigurable {
  if (options.store === undefined) {
    throw new InvalidArgumentError("store", "a Retriever, or null for the store-less graph", undefined);
  }
  const retriever = toRetriever(options.store, "store");
  if (options.cards === undefined || options.cards === null) {
    throw new InvalidArgumentError("cards", "a card lookup (Map), a KnowledgeBase or an array of cards", options.cards);
  }
  const cards = toCardLookup(options.cards);
  const model = toChatModel(options.model);
  const analyzers = toAnalyzers(options.analyzers);
  const defaults = options.defaults ?? {};
  if (typeof defaults !== "object" || defaults === null)
    throw new InvalidArgumentError("defaults", "an object", defaults);
  const tunables = resolveTunables(defaults as Record<string, unknown>);
  return {
    ...tunables,
    cards,
    ...(retriever !== null ? { retriever } : {}),
    ...(model !== null ? { model } : {}),
    ...(analyzers !== null ? { analyzers } : {}),
  };
}
