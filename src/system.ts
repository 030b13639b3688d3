/**
 * The composition root (docs/decisions/0006-one-composition-root-and-store-vocabulary.md):
 * the one module that turns options into a running system — KB and cases
 * (validated: the dataset-integrity check is always on), chunks, embedder,
 * reranker, the KB's analyzers (`<kb>/analyzers.json`, held by the system, its
 * retriever and embedder: never process-global), a dense index (a Chroma
 * store with the KB ingested idempotently, or the exact in-process index),
 * and the HybridRetriever over them. The CLI,
 * the Studio entry (`src/studio.ts`) and library users all get their system
 * here; `graph/`, `nodes/` and `eval/` receive what they need and never start
 * processes.
 *
 * Store vocabulary (flags, `RETRACE_STORE`, docs, reports):
 *   - `auto` (default): the `CHROMA_URL` server when set, else `local`;
 *   - `local`: a Chroma server started by this process from node_modules,
 *     stopped by `close()`;
 *   - an `http(s)://` URL: that Chroma server;
 *   - `memory`: the exact in-process dense index, nothing to start;
 *   - `none`: store-less, no retriever (retrieval is "not measured").
 */
import path from "node:path";
import { InvalidArgumentError } from "./errors.js";
import { loadData, type LoadedData } from "./kb/load.js";
import type { Chunk } from "./kb/types.js";
import { log } from "./log.js";
import { createAnalyzers, loadKbAnalyzers, type AnalyzerConfig, type Analyzers } from "./retrieval/analyzer.js";
import { defaultDataDir, openStore, type ChromaStoreHandle } from "./retrieval/chroma-client.js";
import { requireCurrentCollection } from "./retrieval/chroma-store.js";
import { ExactDenseIndex, openExactDense, type SharedExactDense } from "./retrieval/exact-dense.js";
import { fingerprinted } from "./retrieval/fingerprint.js";
import { InMemoryDenseIndex, type DenseIndex } from "./retrieval/dense.js";
import { logChoice, resolveEmbedder, resolveReranker } from "./retrieval/embedders/resolve.js";
import { HybridRetriever } from "./retrieval/hybrid.js";
import { describeIngest, ingest, type IngestResult } from "./retrieval/ingest.js";

export { loadData, splitFileFor, type LoadedData } from "./kb/load.js";

/** `auto`, `local`, `memory`, `none`, or an http(s) URL of a Chroma server. */
export type StoreChoice = "auto" | "local" | "memory" | "none" | (string & {});
/** What a store choice resolved to; recorded in reports and baselines. */
export type StoreKind = "local" | "remote" | "memory" | "none";

export const STORE_CHOICES = ["auto", "local", "memory", "none"] as const;

/**
 * Checks a store choice and resolves `auto` against the environment.
 * @throws InvalidArgumentError (exit 2) for anything but the vocabulary above.
 */
export function resolveStoreChoice(choice: string, env: Record<string, string | undefined> = process.env, name = "--store"): { kind: StoreKind; url?: string } {
  const envUrl = env.CHROMA_URL ?? "";
  if (choice === "auto") return envUrl !== "" ? { kind: "remote", url: envUrl } : { kind: "local" };
  if (choice === "local" || choice === "memory" || choice === "none") return { kind: choice };
  if (/^https?:\/\//.test(choice)) return { kind: "remote", url: choice };
  throw new InvalidArgumentError(name, `one of ${STORE_CHOICES.join(", ")} or an http(s) URL`, choice);
}

export interface SystemOptions {
  kbDir: string;
  /** The eval cases; null for none (a graph to serve rather than to evaluate). */
  casesFile: string | null;
  /** See the module comment; default `auto`. */
  store?: StoreChoice;
  /** Embedder spec: `auto` (default), `builtin`, `lsa` (corpus-fit, fitted on the KB's chunks), or a transformers.js model id / folder. */
  embedder?: string;
  /** Cross-encoder spec, or null for no reranking (the default). */
  reranker?: string | null;
  /** Local Chroma data folder (default `.retrace/chroma`). */
  dataDir?: string;
  /** Environment to resolve `auto` against (default `process.env`). */
  env?: Record<string, string | undefined>;
  onIngestProgress?: (done: number, total: number) => void;
  /** Deadline of every Chroma request, ms (docs/reliability.md). */
  requestTimeoutMs?: number;
  /** Largest card file read, bytes (`--max-card-bytes`; default RETRACE_MAX_CARD_BYTES, else 1 MiB: src/kb/cards.ts). */
  maxCardBytes?: number;
  /** The KB and cases already loaded and validated (by the caller, before anything starts); else loaded here. */
  data?: LoadedData;
  /** BM25 k1/b of the retriever's index (a `--config` file's `retrieval.bm25`; docs/fusion-and-tuning.md). */
  bm25Params?: { k1?: number; b?: number };
}

export interface RetraceSystem extends LoadedData {
  /** null when store-less. */
  retriever: HybridRetriever | null;
  /**
   * The KB's analyzers (`<kb>/analyzers.json`, else the default profile):
   * those of the retriever's BM25 index and LSA embedder; give them to
   * `buildGraph({ analyzers })` for the answerer and follow-up detection
   * (a graph over `retriever` takes them from it by default).
   */
  analyzers: Analyzers;
  /** `reason`: which embedder and why, in full; `summary`: the same in one short line (src/retrieval/embedders/resolve.ts). */
  embedder: { id: string; description: string; reason: string; summary: string } | null;
  reranker: { id: string; reason: string; summary: string } | null;
  /** `local`, `memory`, `none`, or the server URL (what reports print as the store). */
  store: string;
  storeKind: StoreKind;
  /** The Chroma collection served from, when the store is Chroma. */
  collection: string | null;
  ingest: IngestResult | null;
  /** How to open the same retriever in a worker thread (`openRetriever`); null when store-less. */
  retrieverRecipe: RetrieverRecipe | null;
  /** Releases the store (stops a Chroma server this system started). Safe to call more than once. */
  close(): Promise<void>;
}

/**
 * What opens a system's retriever again elsewhere (a worker thread of a
 * parallel sweep, src/eval/sweep/parallel.ts): the specs it was opened with and its
 * dense index over shared memory. Plain data (structured-cloneable).
 */
export interface RetrieverRecipe {
  kbDir: string;
  /** The embedder spec given (`auto`, `lsa`, a model id...) and the fingerprinted id it resolved to. */
  embedder: string;
  embedderId: string;
  /** Where the LSA embedder's fitted state is (absent for the memory store: refitted, same bytes). */
  stateDir?: string;
  reranker: string | null;
  bm25Params?: { k1?: number; b?: number };
  /** The analyzer overrides of the KB (`<kb>/analyzers.json`; `{}`: the default profile), rebuilt with `createAnalyzers`. */
  analyzers: AnalyzerConfig;
  /** The exact index's shared matrices; null for the memory store (its index is rebuilt from the chunks). */
  dense: SharedExactDense | null;
}

/**
 * The entry module of a sweep worker thread (src/sweep-worker.ts), handed to
 * the parallel sweep (`runSweepInWorkers({ workerEntry })`) so that eval/
 * never imports this root: the compiled `.js` beside this module, or the
 * `.ts` source when retrace runs from TypeScript (tests, `npm run retrace`).
 */
export const SWEEP_WORKER_ENTRY: URL = new URL(import.meta.url.endsWith(".ts") ? "./sweep-worker.ts" : "./sweep-worker.js", import.meta.url);

/**
 * The retriever a recipe describes, over `chunks` (the chunks of the system
 * that wrote the recipe): the same analyzers, embedder (its id is checked),
 * reranker, BM25 parameters and dense vectors, so every query ranks as in the
 * original system.
 */
export async function openRetriever(recipe: RetrieverRecipe, chunks: readonly Chunk[]): Promise<HybridRetriever> {
  const analyzers = createAnalyzers(recipe.analyzers);
  const resolved = await resolveEmbedder(recipe.embedder, { corpus: { chunks, analyzers, ...(recipe.stateDir !== undefined ? { stateDir: recipe.stateDir } : {}) } });
  const embedder = await fingerprinted(resolved.embedder);
  if (embedder.id !== recipe.embedderId) {
    throw new InvalidArgumentError("embedder", `the embedder the sweep was opened with (${recipe.embedderId})`, embedder.id);
  }
  const rerank = await resolveReranker(recipe.reranker);
  const dense: DenseIndex = recipe.dense !== null ? ExactDenseIndex.fromShared(recipe.dense) : await InMemoryDenseIndex.fromChunks(chunks, embedder);
  return new HybridRetriever({
    chunks,
    embedder,
    dense,
    analyzers,
    ...(recipe.bm25Params !== undefined ? { bm25Params: recipe.bm25Params } : {}),
    ...(rerank.reranker !== null ? { reranker: rerank.reranker } : {}),
  });
}

/**
 * Where the fitted state of the corpus-fit LSA embedder is saved: `<data dir>/lsa`
 * (data dir: `dataDir`, else `.retrace/chroma`), for a local and a remote
 * store alike (the state is too large for Chroma collection metadata; a
 * missing file is refitted to the same bytes, docs/fusion-and-tuning.md).
 */
export function lsaStateDir(dataDir?: string): string {
  return path.join(dataDir ?? defaultDataDir(), "lsa");
}

/** Assembles a running system from options (see the module comment). */
export async function openSystem(opts: SystemOptions): Promise<RetraceSystem> {
  const choice = resolveStoreChoice(opts.store ?? "auto", opts.env);
  const data = opts.data ?? (await loadData(opts.kbDir, opts.casesFile, opts.maxCardBytes !== undefined ? { maxCardBytes: opts.maxCardBytes } : {}));
  // `<kb>/analyzers.json` (docs/languages.md): validated before anything starts; this system's BM25, LSA embedder and graph analyse with them.
  const { analyzers, file: analyzerFile } = loadKbAnalyzers(opts.kbDir);
  if (analyzerFile !== null) log.info(`analyzers: ${analyzerFile} applied`);
  if (choice.kind === "none") {
    log.info("Store-less run: the graph has no retrieval node; retrieval metrics will be reported as not measured");
    return { ...data, retriever: null, analyzers, embedder: null, reranker: null, store: "none", storeKind: "none", collection: null, ingest: null, retrieverRecipe: null, close: async () => {} };
  }
  // The lsa embedder is fitted on the KB's chunks; its state lives in the local data dir (docs/fusion-and-tuning.md).
  const stateDir = choice.kind === "memory" ? undefined : lsaStateDir(opts.dataDir);
  const resolved = await resolveEmbedder(opts.embedder ?? "auto", { corpus: { chunks: data.chunks, analyzers, ...(stateDir !== undefined ? { stateDir } : {}) } });
  logChoice("embedder", resolved);
  const rerank = await resolveReranker(opts.reranker ?? null);
  if (rerank.reranker !== null) logChoice("reranker", rerank);
  else if (opts.reranker !== undefined && opts.reranker !== null) logChoice("reranker", rerank, "warn");
  // The weights' fingerprint is part of the collection identity (docs/reliability.md).
  const embedder = await fingerprinted(resolved.embedder);
  const described = {
    embedder: { id: embedder.id, description: embedder.description, reason: resolved.reason, summary: resolved.summary },
    reranker: rerank.reranker === null ? null : { id: rerank.reranker.id, reason: rerank.reason, summary: rerank.summary },
  };
  const recipeFor = (dense: ExactDenseIndex | null): RetrieverRecipe => ({
    kbDir: opts.kbDir,
    embedder: opts.embedder ?? "auto",
    embedderId: embedder.id,
    ...(stateDir !== undefined ? { stateDir } : {}),
    reranker: opts.reranker ?? null,
    ...(opts.bm25Params !== undefined ? { bm25Params: opts.bm25Params } : {}),
    analyzers: analyzers.overrides,
    dense: dense === null ? null : dense.share(),
  });
  const retrieverOver = (dense: DenseIndex) =>
    new HybridRetriever({
      chunks: data.chunks,
      embedder,
      dense,
      analyzers,
      ...(opts.bm25Params !== undefined ? { bm25Params: opts.bm25Params } : {}),
      ...(rerank.reranker !== null ? { reranker: rerank.reranker } : {}),
    });

  if (choice.kind === "memory") {
    const dense = await InMemoryDenseIndex.fromChunks(data.chunks, embedder);
    return { ...data, ...described, retriever: retrieverOver(dense), analyzers, store: "memory", storeKind: "memory", collection: null, ingest: null, retrieverRecipe: recipeFor(null), close: async () => {} };
  }

  let handle: ChromaStoreHandle | undefined;
  try {
    handle = await openStore({
      ...(choice.url !== undefined ? { url: choice.url } : { local: true }),
      ...(opts.dataDir !== undefined ? { dataDir: opts.dataDir } : {}),
      ...(opts.requestTimeoutMs !== undefined ? { requestTimeoutMs: opts.requestTimeoutMs } : {}),
    });
    log.info(`Chroma ${handle.kind === "local" ? "local server" : "server"} ready at ${handle.url}`);
    const ingested = await ingest({
      client: handle.client,
      chunks: data.chunks,
      embedder,
      kbHash: data.hashes.kb,
      ...(opts.onIngestProgress !== undefined ? { onProgress: opts.onIngestProgress } : {}),
    });
    log.info(describeIngest(ingested));
    const current = await requireCurrentCollection(handle.client, { kbHash: data.hashes.kb, embedder, fallbackToLatest: false });
    // Exact search over the stored vectors: the same ranking on every run (docs/determinism.md).
    const dense = await openExactDense(current);
    // The vectors are in memory now: a local server (and its data-dir lock) is not needed for the sweep (docs/reliability.md).
    if (handle.kind === "local") await handle.close();
    const h = handle;
    return {
      ...data,
      ...described,
      retriever: retrieverOver(dense),
      analyzers,
      store: h.kind === "local" ? "local" : h.url,
      storeKind: h.kind,
      collection: current.name,
      ingest: ingested,
      retrieverRecipe: recipeFor(dense),
      close: () => h.close(),
    };
  } catch (e) {
    await handle?.close();
    throw e;
  }
}
