/**
 * Example (b): LangChain's `EnsembleRetriever` over a BM25 retriever
 * (`@langchain/community`) and a vector-store retriever (an in-memory vector
 * store with offline embeddings), evaluated with
 *
 *     retrace eval --graph examples/ensemble.ts --kb kb
 *     retrace trace --graph examples/ensemble.ts en-freeze-001 --kb kb
 *
 * The ensemble's two children emit their own retriever runs, so the trace
 * shows where each gold card stood in the BM25 child, in the vector child
 * and after the ensemble. The export is an async factory.
 */
import { EnsembleRetriever } from "@langchain/classic/retrievers/ensemble";
import { MemoryVectorStore } from "@langchain/classic/vectorstores/memory";
import { BM25Retriever } from "@langchain/community/retrievers/bm25";
import { agentOver } from "./lib/agent.js";
import { loadCardDocuments } from "./lib/cards.js";
import { TrigramHashEmbeddings } from "./lib/embeddings.js";

export async function buildRetriever(kbDir = process.env.RETRACE_EXAMPLE_KB ?? "kb") {
  const docs = loadCardDocuments(kbDir);
  const bm25 = BM25Retriever.fromDocuments(docs, { k: 10 });
  const store = await MemoryVectorStore.fromDocuments(docs, new TrigramHashEmbeddings());
  return new EnsembleRetriever({ retrievers: [bm25, store.asRetriever({ k: 10 })], weights: [0.5, 0.5] });
}

export async function graph() {
  return agentOver(await buildRetriever());
}
