/**
 * The LangChain adapters: a retrace HybridRetriever used where LangChain
 * expects a BaseRetriever, and the built-in embedder where it expects
 * Embeddings (here: LangChain's own MemoryVectorStore).
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { MemoryVectorStore } from "@langchain/classic/vectorstores/memory";
import { beforeAll, describe, expect, it } from "vitest";
import { RetraceEmbeddings, RetraceRetriever } from "../../src/adapters/langchain.js";
import { loadKnowledgeBase } from "../../src/kb/cards.js";
import { chunkKnowledgeBase } from "../../src/kb/chunk.js";
import type { Chunk } from "../../src/kb/types.js";
import { InMemoryDenseIndex } from "../../src/retrieval/dense.js";
import { HashingEmbedder } from "../../src/retrieval/embedders/builtin.js";
import { HybridRetriever } from "../../src/retrieval/hybrid.js";
import type { RetrievalTrace } from "../../src/retrieval/types.js";
import { MINI_KB } from "../helpers/fixtures.js";

let chunks: Chunk[];
let hybrid: HybridRetriever;
const embedder = new HashingEmbedder();

beforeAll(async () => {
  chunks = chunkKnowledgeBase(await loadKnowledgeBase(MINI_KB));
  hybrid = new HybridRetriever({ chunks, embedder, dense: await InMemoryDenseIndex.fromChunks(chunks, embedder) });
});

class TraceCatcher extends BaseCallbackHandler {
  name = "trace-catcher";
  events: { name: string; data: { trace: RetrievalTrace } }[] = [];
  override handleCustomEvent(eventName: string, data: unknown): void {
    this.events.push({ name: eventName, data: data as { trace: RetrievalTrace } });
  }
}

describe("RetraceRetriever", () => {
  it("returns one Document per retrieved card, in the trace's order, carrying parentId and the chunk text", async () => {
    const lc = new RetraceRetriever({ retriever: hybrid, options: { k: 3, locale: "en" } });
    const docs = await lc.invoke("how do I freeze my card?");
    const direct = await hybrid.retrieve("how do I freeze my card?", { k: 3, locale: "en" });
    expect(docs.map((d) => d.metadata.parentId)).toEqual(direct.retrievedIds);
    expect(docs[0]!.metadata.parentId).toBe("card-freeze");
    expect(docs.length).toBeGreaterThanOrEqual(2); // the mini KB has 2 English cards
    expect(docs.map((d) => d.metadata.rank)).toEqual(docs.map((_, i) => i + 1));
    for (const d of docs) {
      expect(d.metadata.chunkId.startsWith(`${d.metadata.parentId}#`)).toBe(true);
      expect(d.pageContent).toBe(hybrid.textOf(d.metadata.chunkId));
    }
  });

  it("sends the stage-by-stage trace to callback handlers as the retrieval_trace custom event", async () => {
    const catcher = new TraceCatcher();
    const lc = new RetraceRetriever({ retriever: hybrid, options: { k: 2 } });
    const docs = await lc.invoke("freeze card", { callbacks: [catcher] });
    expect(catcher.events).toHaveLength(1);
    expect(catcher.events[0]!.name).toBe("retrieval_trace");
    const trace = catcher.events[0]!.data.trace;
    expect(trace.retrievedIds).toEqual(docs.map((d) => d.metadata.parentId));
    expect(trace.stages.bm25).toBeDefined();
    expect(trace.stages.dense).toBeDefined();
    expect(lc.lastTrace).toEqual(trace);
  });
});

describe("RetraceEmbeddings", () => {
  it("gives LangChain the embedder's own vectors", async () => {
    const lc = new RetraceEmbeddings({ embedder });
    expect(await lc.embedQuery("freeze my card")).toEqual(await embedder.embedQuery("freeze my card"));
    const docs = await lc.embedDocuments(["a b c", "d e f"]);
    expect(docs).toEqual(await embedder.embedDocuments(["a b c", "d e f"]));
    expect(docs[0]).toHaveLength(embedder.dimension);
  });

  it("works inside LangChain's MemoryVectorStore", async () => {
    const store = await MemoryVectorStore.fromTexts(
      chunks.map((c) => c.text),
      chunks.map((c) => ({ parentId: c.parentId })),
      new RetraceEmbeddings({ embedder }),
    );
    const [best] = await store.similaritySearch("how do I freeze my card?", 1);
    // The same query through retrace's own exact dense index ranks the same chunk first.
    const dense = await InMemoryDenseIndex.fromChunks(chunks, embedder);
    const [top] = await dense.search(await embedder.embedQuery("how do I freeze my card?"), { topN: 1 });
    expect(best!.metadata.parentId).toBe(top!.parentId);
  });
});
