/**
 * Example (a): a LangGraph agent over LangChain's Chroma vector store
 * (`@langchain/community/vectorstores/chroma`) against a running Chroma
 * server, evaluated with
 *
 *     CHROMA_URL=http://127.0.0.1:8000 retrace eval --graph examples/chroma.ts --kb kb
 *
 * (start a local server with `node node_modules/chromadb/dist/cli.mjs run --path .chroma --port 8000`).
 * The factory upserts the card sections (ids `<card>#<n>`, so re-running is
 * idempotent) into the collection RETRACE_EXAMPLE_COLLECTION (default
 * `retrace-example`) with offline embeddings, then builds the agent over
 * `store.asRetriever({ k: 10 })`. Chunks carry `metadata.parentId`.
 */
import { Chroma } from "@langchain/community/vectorstores/chroma";
import { agentOver } from "./lib/agent.js";
import { loadCardDocuments } from "./lib/cards.js";
import { TrigramHashEmbeddings } from "./lib/embeddings.js";

export async function buildStore(
  url: string,
  kbDir = process.env.RETRACE_EXAMPLE_KB ?? "kb",
  collectionName = process.env.RETRACE_EXAMPLE_COLLECTION ?? "retrace-example",
) {
  const docs = loadCardDocuments(kbDir);
  const store = new Chroma(new TrigramHashEmbeddings(), {
    url,
    collectionName,
    collectionMetadata: { "hnsw:space": "cosine" },
  });
  await store.addDocuments(docs, { ids: docs.map((d) => d.id!) });
  return store;
}

export async function graph() {
  const url = process.env.CHROMA_URL;
  if (url === undefined || url === "")
    throw new Error("set CHROMA_URL to a running Chroma server (see the comment at the top of examples/chroma.ts)");
  return agentOver((await buildStore(url)).asRetriever({ k: 10 }));
}
