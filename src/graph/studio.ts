/**
 * What langgraph.json points LangGraph's CLI and Studio at
 * (`./src/graph/studio.ts:graph`): an async graph factory, the form
 * LangGraph's server accepts besides a compiled graph. Importing this module
 * has no side effect; the first call loads the knowledge base and attaches
 * a store, and later calls reuse that graph (one store per process).
 *
 * Environment:
 *   - `RETRACE_KB` — knowledge-base folder (default `<cwd>/kb`);
 *   - `RETRACE_STORE` — `chroma` (default when `CHROMA_URL` is set: the KB is
 *     ingested idempotently into that server and served from it), `memory`
 *     (default otherwise: an in-process dense index, nothing to start),
 *     or `none` (the store-less graph, no retrieval node);
 *   - `RETRACE_EMBEDDER` — `auto` (default), `builtin`, or a local
 *     transformers.js model id / folder (see src/retrieval/embedders/resolve.ts);
 *   - `CHROMA_URL` — the Chroma server for `chroma`.
 * The Studio server keeps conversations with its own checkpointer; this
 * factory's graph has none of its own.
 */
import path from "node:path";
import { InvalidArgumentError } from "../errors.js";
import { loadKnowledgeBase } from "../kb/cards.js";
import { chunkKnowledgeBase } from "../kb/chunk.js";
import { kbHash } from "../kb/hash.js";
import { log } from "../log.js";
import { openStore } from "../retrieval/chroma-server.js";
import { requireCurrentCollection } from "../retrieval/chroma-store.js";
import { openExactDense } from "../retrieval/exact-dense.js";
import { fingerprinted } from "../retrieval/fingerprint.js";
import { InMemoryDenseIndex } from "../retrieval/dense.js";
import { resolveEmbedder } from "../retrieval/embedders/resolve.js";
import { HybridRetriever } from "../retrieval/hybrid.js";
import { ingest } from "../retrieval/ingest.js";
import type { DenseIndex } from "../retrieval/dense.js";
import { buildGraph, type RetraceGraph } from "./build.js";

export type StudioStore = "chroma" | "memory" | "none";

export interface StudioGraphHandle {
  graph: RetraceGraph;
  store: StudioStore;
  /** Releases the store (stops a Chroma server this process started; nothing otherwise). */
  close(): Promise<void>;
}

/** Which store the environment asks for. */
export function studioStore(env: NodeJS.ProcessEnv = process.env): StudioStore {
  const raw = env.RETRACE_STORE ?? "";
  if (raw === "") return (env.CHROMA_URL ?? "") !== "" ? "chroma" : "memory";
  if (raw === "chroma" || raw === "memory" || raw === "none") return raw;
  throw new InvalidArgumentError("RETRACE_STORE", "one of chroma, memory, none", raw);
}

/** Builds the Studio graph from the environment (see the module comment). */
export async function createStudioGraph(env: NodeJS.ProcessEnv = process.env): Promise<StudioGraphHandle> {
  const kbDir = path.resolve(env.RETRACE_KB ?? "kb");
  const store = studioStore(env);
  const kb = await loadKnowledgeBase(kbDir);
  if (store === "none") {
    return { graph: buildGraph({ store: null, cards: kb, checkpointer: false }), store, close: async () => {} };
  }
  const chunks = chunkKnowledgeBase(kb);
  const resolved = await resolveEmbedder(env.RETRACE_EMBEDDER ?? "auto");
  const reason = resolved.reason;
  const embedder = await fingerprinted(resolved.embedder); // weights in the collection identity (docs/reliability.md)
  log.info(`studio: embedder ${reason}`);
  let dense: DenseIndex;
  let close = async () => {};
  if (store === "chroma") {
    const handle = await openStore();
    close = () => handle.close();
    try {
      const hash = kbHash(kb);
      await ingest({ client: handle.client, chunks, embedder, kbHash: hash });
      const current = await requireCurrentCollection(handle.client, { kbHash: hash, embedder, fallbackToLatest: false });
      dense = await openExactDense(current); // docs/determinism.md
    } catch (e) {
      await handle.close();
      throw e;
    }
  } else {
    dense = await InMemoryDenseIndex.fromChunks(chunks, embedder);
  }
  const retriever = new HybridRetriever({ chunks, embedder, dense });
  return { graph: buildGraph({ store: retriever, cards: kb, checkpointer: false }), store, close };
}

let pending: Promise<StudioGraphHandle> | undefined;

/** The factory langgraph.json names: the Studio graph, built on first use. */
export async function graph(): Promise<RetraceGraph> {
  pending ??= createStudioGraph().catch((e: unknown) => {
    pending = undefined;
    throw e;
  });
  return (await pending).graph;
}
