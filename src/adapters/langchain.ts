/**
 * LangChain adapters, so retrace's parts drop into LangChain code
 * (docs/architecture.md, "Package"):
 *   - `RetraceRetriever`: any retrace `Retriever` (e.g. `HybridRetriever`) as
 *     a LangChain `BaseRetriever`. Each returned `Document` is one card of
 *     the final top-k, in rank order; `metadata.parentId` is the card id (so
 *     retrace's own capture and LangChain's ParentDocument-style code both
 *     find it), `metadata.chunkId` the best-ranked chunk of that card whose
 *     text is the `pageContent`, plus `rank`, `score` and `locale`. The
 *     retrieval trace goes out as the `retrieval_trace` custom event, so a
 *     callback handler (LangSmith tracing, retrace's collector) sees the
 *     stage breakdown.
 *   - `RetraceEmbeddings`: any retrace `Embedder` (e.g. the built-in
 *     `HashingEmbedder`) as a LangChain `Embeddings`, for vector stores.
 */
import type { CallbackManagerForRetrieverRun } from "@langchain/core/callbacks/manager";
import { dispatchCustomEvent } from "@langchain/core/callbacks/dispatch";
import { Document } from "@langchain/core/documents";
import { Embeddings, type EmbeddingsParams } from "@langchain/core/embeddings";
import { BaseRetriever, type BaseRetrieverInput } from "@langchain/core/retrievers";
import { cardIdOf } from "../retrieval/parents.js";
import type { Embedder, Ranked, RetrievalTrace, RetrieveOptions, Retriever } from "../retrieval/types.js";

/** The custom event name the retrieve node and `RetraceRetriever` dispatch. */
export const RETRIEVAL_TRACE_EVENT_NAME = "retrieval_trace";

export interface RetraceRetrieverInput extends BaseRetrieverInput {
  /** The retrace retriever to wrap (a `HybridRetriever`, or anything with `retrieve(query, options)`). */
  retriever: Retriever & { textOf?(chunkId: string): string };
  /** Options passed on every call (k, locale, mode, ...); the retriever's own defaults apply otherwise. */
  options?: RetrieveOptions;
}

export class RetraceRetriever extends BaseRetriever {
  static override lc_name(): string {
    return "RetraceRetriever";
  }
  lc_namespace = ["retrace", "retrievers"];
  readonly retriever: RetraceRetrieverInput["retriever"];
  readonly options: RetrieveOptions;
  /** The trace of the latest call (also dispatched as the `retrieval_trace` custom event). */
  lastTrace: RetrievalTrace | undefined;

  constructor(fields: RetraceRetrieverInput) {
    super(fields);
    this.retriever = fields.retriever;
    this.options = { ...(fields.options ?? {}) };
  }

  override async _getRelevantDocuments(
    query: string,
    runManager?: CallbackManagerForRetrieverRun,
  ): Promise<Document[]> {
    const trace = await this.retriever.retrieve(query, this.options);
    this.lastTrace = trace;
    if (runManager !== undefined) {
      await dispatchCustomEvent(
        RETRIEVAL_TRACE_EVENT_NAME,
        { type: RETRIEVAL_TRACE_EVENT_NAME, trace },
        { callbacks: runManager.getChild() },
      );
    }
    return documentsOf(trace, (id) => this.retriever.textOf?.(id) ?? "");
  }
}

/**
 * One Document per card of `trace.retrievedIds`, in rank order; the text is
 * that of the card's best-ranked chunk in the last chunk-level stage
 * (reranked, else fused), or "" when `textOf` does not know it.
 */
export function documentsOf(trace: RetrievalTrace, textOf: (chunkId: string) => string): Document[] {
  const chunkStage: readonly Ranked[] = trace.stages.reranked ?? trace.stages.fused;
  const bestChunk = new Map<string, Ranked>();
  for (const r of chunkStage) {
    const card = cardIdOf(r);
    if (!bestChunk.has(card)) bestChunk.set(card, r);
  }
  const parentById = new Map(trace.stages.parents.map((p) => [p.id, p] as const));
  return trace.retrievedIds.map((cardId, i) => {
    const chunk = bestChunk.get(cardId);
    return new Document({
      id: chunk?.id ?? cardId,
      pageContent: chunk !== undefined ? textOf(chunk.id) : "",
      metadata: {
        parentId: cardId,
        chunkId: chunk?.id ?? cardId,
        rank: i + 1,
        score: parentById.get(cardId)?.score ?? chunk?.score ?? null,
        ...(trace.locale !== undefined ? { locale: trace.locale } : {}),
      },
    });
  });
}

export interface RetraceEmbeddingsInput extends EmbeddingsParams {
  embedder: Embedder;
}

/** A retrace `Embedder` as a LangChain `Embeddings` (same vectors, same dimension). */
export class RetraceEmbeddings extends Embeddings {
  readonly embedder: Embedder;
  constructor(fields: RetraceEmbeddingsInput) {
    super(fields);
    this.embedder = fields.embedder;
  }
  embedDocuments(documents: string[]): Promise<number[][]> {
    return this.embedder.embedDocuments(documents);
  }
  embedQuery(document: string): Promise<number[]> {
    return this.embedder.embedQuery(document);
  }
}
