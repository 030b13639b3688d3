/**
 * What an eval run measures against: the KB and cases (validated: the
 * dataset-integrity check is always on), and — store-backed — a Chroma store
 * with the KB ingested (idempotently) behind a HybridRetriever; store-less,
 * no retriever at all (DESIGN.md §1.5).
 */
import { loadKnowledgeBase } from "../kb/cards.js";
import { loadCases } from "../kb/cases.js";
import { chunkKnowledgeBase } from "../kb/chunk.js";
import { datasetHash, kbHash } from "../kb/hash.js";
import type { Chunk, EvalCase, KnowledgeBase } from "../kb/types.js";
import { log } from "../log.js";
import { openStore, type ChromaStoreHandle } from "../retrieval/chroma-server.js";
import { requireCurrentCollection } from "../retrieval/chroma-store.js";
import { resolveEmbedder, resolveReranker } from "../retrieval/embedders/resolve.js";
import { openExactDense } from "../retrieval/exact-dense.js";
import { fingerprinted } from "../retrieval/fingerprint.js";
import { HybridRetriever } from "../retrieval/hybrid.js";
import { describeIngest, ingest, type IngestResult } from "../retrieval/ingest.js";
import type { Embedder } from "../retrieval/types.js";

export interface SessionOptions {
  kbDir: string;
  casesFile: string;
  /** "auto" (CHROMA_URL, else a self-started local Chroma), an http(s) URL, or "none" (store-less). */
  store: string;
  /** Embedder spec: "auto" (default), "builtin", or a transformers.js model id / folder. */
  embedder?: string;
  /** Cross-encoder spec, or null for no reranking (the default). */
  reranker?: string | null;
  /** Local Chroma data folder (default `.retrace/chroma`). */
  dataDir?: string;
  onIngestProgress?: (done: number, total: number) => void;
  /** Deadline of every Chroma request, ms (docs/reliability.md). */
  requestTimeoutMs?: number;
}

export interface Session {
  kb: KnowledgeBase;
  cases: EvalCase[];
  chunks: Chunk[];
  hashes: { kb: string; dataset: string };
  /** null when store-less. */
  retriever: HybridRetriever | null;
  embedder: { id: string; description: string; reason: string } | null;
  reranker: { id: string; reason: string } | null;
  /** "local" (self-started), the server URL, or "none". */
  store: string;
  collection: string | null;
  ingest: IngestResult | null;
  close(): Promise<void>;
}

export async function loadData(kbDir: string, casesFile: string): Promise<{ kb: KnowledgeBase; cases: EvalCase[]; chunks: Chunk[]; hashes: { kb: string; dataset: string } }> {
  const kb = await loadKnowledgeBase(kbDir);
  const cases = await loadCases(casesFile, kb);
  return { kb, cases, chunks: chunkKnowledgeBase(kb), hashes: { kb: kbHash(kb), dataset: datasetHash(cases) } };
}

export async function openSession(opts: SessionOptions): Promise<Session> {
  const data = await loadData(opts.kbDir, opts.casesFile);
  if (opts.store === "none") {
    log.info("Store-less run: the graph has no retrieval node; retrieval metrics will be reported as not measured");
    return { ...data, retriever: null, embedder: null, reranker: null, store: "none", collection: null, ingest: null, close: async () => {} };
  }
  const resolved = await resolveEmbedder(opts.embedder ?? "auto");
  log.info(`embedder: ${resolved.reason}`);
  const rerank = await resolveReranker(opts.reranker ?? null);
  if (rerank.reranker !== null) log.info(`reranker: ${rerank.reason}`);
  else if (opts.reranker !== undefined && opts.reranker !== null) log.warn(`reranker: ${rerank.reason}`);

  const url = opts.store === "auto" ? undefined : opts.store;
  let handle: ChromaStoreHandle | undefined;
  try {
    handle = await openStore({
      ...(url !== undefined ? { url } : {}),
      ...(opts.dataDir !== undefined ? { dataDir: opts.dataDir } : {}),
      ...(opts.requestTimeoutMs !== undefined ? { requestTimeoutMs: opts.requestTimeoutMs } : {}),
    });
    log.info(`Chroma ${handle.kind === "local" ? "local server" : "server"} ready at ${handle.url}`);
    // The weights' fingerprint is part of the collection identity (docs/reliability.md).
    const embedder: Embedder = await fingerprinted(resolved.embedder);
    const ingested = await ingest({
      client: handle.client,
      chunks: data.chunks,
      embedder,
      kbHash: data.hashes.kb,
      ...(opts.onIngestProgress !== undefined ? { onProgress: opts.onIngestProgress } : {}),
    });
    log.info(describeIngest(ingested));
    const current = await requireCurrentCollection(handle.client, { kbHash: data.hashes.kb, embedder, fallbackToLatest: false });
    const dense = await openExactDense(current);
    // The vectors are in memory now: a local server (and its data-dir lock) is not needed for the sweep (docs/reliability.md).
    if (handle.kind === "local") await handle.close();
    const retriever = new HybridRetriever({
      chunks: data.chunks,
      embedder,
      // Exact search over the stored vectors: the same ranking on every run (docs/determinism.md).
      dense,
      ...(rerank.reranker !== null ? { reranker: rerank.reranker } : {}),
    });
    const h = handle;
    return {
      ...data,
      retriever,
      embedder: { id: embedder.id, description: embedder.description, reason: resolved.reason },
      reranker: rerank.reranker === null ? null : { id: rerank.reranker.id, reason: rerank.reason },
      store: h.kind === "local" ? "local" : h.url,
      collection: current.name,
      ingest: ingested,
      close: () => h.close(),
    };
  } catch (e) {
    await handle?.close();
    throw e;
  }
}
