/**
 * Shared setup of the graph and node tests: a real HybridRetriever
 * (in-memory dense index + built-in hashing embedder + BM25) over a fixture
 * KB, a clearly named test-double retriever, and a helper that runs one turn
 * through a graph while capturing the custom stream.
 */
import { HumanMessage } from "@langchain/core/messages";
import { loadKnowledgeBase } from "../../src/kb/cards.js";
import { chunkKnowledgeBase } from "../../src/kb/chunk.js";
import type { Chunk, KnowledgeBase, Locale } from "../../src/kb/types.js";
import { InMemoryDenseIndex } from "../../src/retrieval/dense.js";
import { HashingEmbedder } from "../../src/retrieval/embedders/builtin.js";
import { HybridRetriever } from "../../src/retrieval/hybrid.js";
import type { RetrievalTrace, RetrieveOptions, Retriever } from "../../src/retrieval/types.js";
import { traceEventOfChunk, type RetrievalTraceCollector } from "../../src/graph/collector.js";
import type { RetrievalTraceEvent } from "../../src/nodes/retrieve.js";

export interface Fixture {
  kb: KnowledgeBase;
  chunks: Chunk[];
  retriever: HybridRetriever;
}

const fixtures = new Map<string, Promise<Fixture>>();

/** KB + real hybrid retriever (in-memory dense, built-in embedder), built once per KB dir and test file. */
export function hybridFixture(kbDir: string): Promise<Fixture> {
  let f = fixtures.get(kbDir);
  if (f === undefined) {
    f = (async () => {
      const kb = await loadKnowledgeBase(kbDir);
      const chunks = chunkKnowledgeBase(kb);
      const embedder = new HashingEmbedder();
      const dense = await InMemoryDenseIndex.fromChunks(chunks, embedder);
      return { kb, chunks, retriever: new HybridRetriever({ chunks, embedder, dense }) };
    })();
    fixtures.set(kbDir, f);
  }
  return f;
}

/**
 * TEST DOUBLE retriever: returns a fixed ranking of card ids for every query
 * and records each call (query and options), so a test can assert what the
 * retrieve node asked for.
 */
export class RecordingRetrieverDouble implements Retriever {
  readonly calls: { query: string; options: RetrieveOptions | undefined }[] = [];
  constructor(private readonly ids: string[]) {}
  async retrieve(query: string, options?: RetrieveOptions): Promise<RetrievalTrace> {
    this.calls.push({ query, options });
    const k = options?.k ?? this.ids.length;
    const ranked = this.ids.map((id, i) => ({ id: `${id}#1`, parentId: id, score: 1 / (i + 1), rank: i + 1 }));
    const parents = this.ids.map((id, i) => ({ id, parentId: id, score: 1 / (i + 1), rank: i + 1 }));
    return {
      turn: options?.turn ?? 0,
      query,
      k,
      ...(options?.locale !== undefined ? { locale: options.locale } : {}),
      config: {
        embedder: "test-double",
        denseK: options?.denseK ?? 20,
        bm25K: options?.bm25K ?? 20,
        fusion: { method: "rrf", params: { k: 60 } },
        rerank: null,
        mode: options?.mode ?? "hybrid",
      },
      stages: { fused: ranked, parents },
      retrievedIds: this.ids.slice(0, k),
      timingsMs: { total: 0 },
    };
  }
}

export interface TurnResult {
  state: Record<string, unknown> & {
    retrieval: RetrievalTrace[];
    query: string;
    answer: string;
    citedIds: string[];
    refused: boolean;
    turn: number;
  };
  custom: RetrievalTraceEvent[];
}

interface StreamingGraph {
  stream(input: Record<string, unknown>, options: Record<string, unknown>): Promise<AsyncIterable<unknown>>;
  getState(config: Record<string, unknown>): Promise<{ values: unknown }>;
}

/**
 * Sends one user turn (`{ messages: [HumanMessage], locale }`) on `threadId`
 * with `streamMode: ["updates", "custom"]` and the collector as a callback;
 * returns the thread's state after the turn and the trace events seen on the
 * custom stream.
 */
export async function runTurn(
  graph: StreamingGraph,
  threadId: string,
  text: string,
  options: { locale?: Locale; collector?: RetrievalTraceCollector; configurable?: Record<string, unknown> } = {},
): Promise<TurnResult> {
  const input = {
    messages: [new HumanMessage(text)],
    ...(options.locale !== undefined ? { locale: options.locale } : {}),
  };
  const stream = await graph.stream(input, {
    configurable: { thread_id: threadId, ...options.configurable },
    streamMode: ["updates", "custom"],
    ...(options.collector !== undefined ? { callbacks: [options.collector] } : {}),
  });
  const custom: RetrievalTraceEvent[] = [];
  for await (const chunk of stream) {
    const e = traceEventOfChunk(chunk);
    if (e !== undefined) custom.push(e);
  }
  const snapshot = await graph.getState({ configurable: { thread_id: threadId } });
  return { state: snapshot.values as TurnResult["state"], custom };
}
