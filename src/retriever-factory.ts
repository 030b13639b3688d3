/**
 * The one retriever factory of the composition root (./system.ts;
 * docs/decisions/0006-one-composition-root-and-store-vocabulary.md):
 * `buildRetriever` turns an embedder spec, a reranker spec, the chunks and
 * their analyzers into a HybridRetriever (`openEmbedder` is its embedder
 * half: resolve, fingerprint, say which). `openSystem`, a worker thread's
 * `openRetriever`, `retrace beir` and `retrace ingest` all go through it;
 * `openIngestedDense` is the Chroma path of a dense index (ingest, then the
 * stored vectors read back into an exact index). Like ./system.ts, imported
 * by app/, cli/ and the entries outside the layers only.
 */
import path from "node:path";
import { InvalidArgumentError } from "./errors.js";
import type { Chunk } from "./kb/types.js";
import { log } from "./log.js";
import { createAnalyzers, type AnalyzerConfig, type Analyzers } from "./retrieval/analyzer.js";
import { defaultDataDir, openStore, type ChromaStoreHandle } from "./retrieval/chroma-client.js";
import { requireCurrentCollection } from "./retrieval/chroma-store.js";
import { ExactDenseIndex, openExactDense, type SharedExactDense } from "./retrieval/exact-dense.js";
import { fingerprinted } from "./retrieval/fingerprint.js";
import { precisionOf, withVectorCache } from "./retrieval/vector-cache.js";
import { InMemoryDenseIndex, type DenseIndex } from "./retrieval/dense.js";
import { logChoice, resolveEmbedder, resolveReranker, type ResolvedReranker } from "./retrieval/embedders/resolve.js";
import { HybridRetriever, type HybridRetrieverOptions } from "./retrieval/hybrid.js";
import { describeIngest, ingest, type IngestResult } from "./retrieval/ingest.js";
import type { Embedder } from "./retrieval/types.js";

/**
 * What opens a system's retriever again elsewhere (a worker thread of a
 * parallel sweep, src/app/own-graph/parallel.ts): the specs it was opened with and its
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
 * The retriever a recipe describes, over `chunks` (the chunks of the system
 * that wrote the recipe): the same analyzers, embedder (its id is checked),
 * reranker, BM25 parameters and dense vectors, so every query ranks as in the
 * original system.
 */
export async function openRetriever(recipe: RetrieverRecipe, chunks: readonly Chunk[]): Promise<HybridRetriever> {
  const { retriever } = await buildRetriever({
    chunks,
    analyzers: createAnalyzers(recipe.analyzers),
    embedder: recipe.embedder,
    embedderId: recipe.embedderId,
    ...(recipe.stateDir !== undefined ? { stateDir: recipe.stateDir } : {}),
    reranker: recipe.reranker,
    ...(recipe.bm25Params !== undefined ? { bm25Params: recipe.bm25Params } : {}),
    // The exact index's matrices in shared memory; the memory store's index is rebuilt from the chunks (the same vectors).
    ...(recipe.dense !== null
      ? { dense: async () => ExactDenseIndex.fromShared(recipe.dense as SharedExactDense) }
      : {}),
    log: false, // the main thread said which embedder and reranker the sweep uses
  });
  return retriever;
}

/** An embedder spec resolved over a corpus: the embedder (carrying the fingerprint of its weights when it loads them from a folder) and why it was chosen. */
export interface OpenedEmbedder {
  embedder: Embedder;
  /** Which embedder and why, in full (logged at debug level). */
  reason: string;
  /** The same in one short line (logged at info level). */
  summary: string;
  /** How long it took to get the embedder ready (wall clock; reported in `timings`). */
  setup: EmbedderSetup;
}

/**
 * How an embedder was made ready and how long it took (wall clock, ms):
 * `lsa-fit` (the corpus-fit LSA embedder fitted, or refitted, on the chunks),
 * `lsa-load` (its saved state read), `model-load` (a transformers.js model
 * loaded), `none` (the built-in embedder: nothing to prepare). Apart from the
 * store's write time (an ingest's `durationMs`: embedding the chunks and
 * writing them), so a slow ingest says which part was slow.
 */
export interface EmbedderSetup {
  kind: "lsa-fit" | "lsa-load" | "model-load" | "none";
  ms: number;
  /** `lsa-fit`: the part of `ms` the LSA chance baseline took (docs/fusion-and-tuning.md, "The LSA embedder"). */
  chanceMs?: number;
}

/** What `openEmbedder` resolves: a spec over the chunks it may be fitted on. */
export interface EmbedderChoice {
  /** `auto`, `builtin`, `lsa` (corpus-fit, fitted on `chunks`), or a transformers.js model id or folder. */
  embedder: string;
  /** The chunks the `lsa` embedder is fitted on (every chunk of the KB or corpus). */
  chunks: readonly Chunk[];
  /** The analyzers the `lsa` embedder analyses with (the KB's: `loadKbAnalyzers`). */
  analyzers: Analyzers;
  /** Where the `lsa` embedder's fitted state is saved (`lsaStateDir`); absent: fitted in memory, not saved. */
  stateDir?: string;
  /** Log the choice on stderr (`embedder: …`); default true. */
  log?: boolean;
}

/**
 * The embedder half of the retriever factory: resolves the spec
 * (`resolveEmbedder`), logs which embedder and why, and wraps a model loaded
 * from a folder with the fingerprint of its weights, which is part of the
 * collection identity (docs/reliability.md). `retrace ingest` embeds with it.
 */
export async function openEmbedder(o: EmbedderChoice): Promise<OpenedEmbedder> {
  const t0 = performance.now();
  const resolved = await resolveEmbedder(o.embedder, {
    corpus: { chunks: o.chunks, analyzers: o.analyzers, ...(o.stateDir !== undefined ? { stateDir: o.stateDir } : {}) },
  });
  const ms = Math.round((performance.now() - t0) * 10) / 10;
  if (o.log !== false) logChoice("embedder", resolved);
  return {
    // A model embedder's document vectors are cached by content (src/retrieval/vector-cache.ts).
    embedder: withVectorCache(await fingerprinted(resolved.embedder), { precision: precisionOf(resolved.embedder) }),
    reason: resolved.reason,
    summary: resolved.summary,
    setup: { kind: resolved.setup, ms, ...(resolved.chanceMs !== undefined ? { chanceMs: resolved.chanceMs } : {}) },
  };
}

/** What the one retriever factory builds a HybridRetriever from (plain specs, as the CLI and a RetrieverRecipe give them). */
export interface RetrieverSpec extends EmbedderChoice {
  /** The id the embedder must resolve to (a worker thread reopening a system's retriever); another id is an InvalidArgumentError. */
  embedderId?: string;
  /** Cross-encoder spec (`auto`, a model id or folder), or null / absent for no reranking. */
  reranker?: string | null;
  /**
   * A reranker asked for but not found (`auto` without local weights) is an
   * InvalidArgumentError naming `--rerank` (default: a warning, and no
   * reranking).
   */
  requireReranker?: boolean;
  /** BM25 k1/b of the retriever's index (unset keys: the embedder's, `hybridDefaultsFor`). */
  bm25Params?: { k1?: number; b?: number };
  /** The retriever's defaults (unset keys: the embedder's, `hybridDefaultsFor`). */
  defaults?: HybridRetrieverOptions["defaults"];
  /**
   * The dense index over the chunks for the resolved embedder (the Chroma
   * path: `openIngestedDense`); default: the chunks embedded into an
   * in-process `InMemoryDenseIndex`.
   */
  dense?: (embedder: Embedder) => Promise<DenseIndex>;
}

/** A retriever and what its specs resolved to. */
export interface BuiltRetriever {
  retriever: HybridRetriever;
  embedder: OpenedEmbedder;
  reranker: ResolvedReranker;
}

/**
 * The one retriever factory: the embedder (`openEmbedder`), the reranker
 * (`resolveReranker`; the choice logged, a missing one a warning or, with
 * `requireReranker`, an error), the dense index (`dense`, else in memory) and
 * the HybridRetriever over them with the chunks' BM25 index. Nothing is
 * started before both models are resolved.
 */
export async function buildRetriever(spec: RetrieverSpec): Promise<BuiltRetriever> {
  const embedder = await openEmbedder(spec);
  if (spec.embedderId !== undefined && embedder.embedder.id !== spec.embedderId) {
    throw new InvalidArgumentError(
      "embedder",
      `the embedder the sweep was opened with (${spec.embedderId})`,
      embedder.embedder.id,
    );
  }
  const asked = spec.reranker !== undefined && spec.reranker !== null;
  const rerank = await resolveReranker(spec.reranker ?? null);
  if (rerank.reranker === null && asked && spec.requireReranker === true)
    throw new InvalidArgumentError("--rerank", "a cross-encoder available locally", spec.reranker);
  if (spec.log !== false) {
    if (rerank.reranker !== null) logChoice("reranker", rerank);
    else if (asked) logChoice("reranker", rerank, "warn");
  }
  const dense =
    spec.dense !== undefined
      ? await spec.dense(embedder.embedder)
      : await InMemoryDenseIndex.fromChunks(spec.chunks, embedder.embedder);
  const retriever = new HybridRetriever({
    chunks: spec.chunks,
    embedder: embedder.embedder,
    dense,
    analyzers: spec.analyzers,
    ...(spec.bm25Params !== undefined ? { bm25Params: spec.bm25Params } : {}),
    ...(rerank.reranker !== null ? { reranker: rerank.reranker } : {}),
    ...(spec.defaults !== undefined ? { defaults: spec.defaults } : {}),
  });
  return { retriever, embedder, reranker: rerank };
}

/** A Chroma store holding the chunks, and their vectors in an exact in-process index. */
export interface IngestedDense {
  /** Exact search over the stored vectors: the same ranking on every run (docs/determinism.md). */
  dense: ExactDenseIndex;
  ingested: IngestResult;
  /** The current collection's name. */
  collection: string;
  /** `local`, or the server's URL (credentials redacted). */
  store: string;
  storeKind: "local" | "remote";
  /** Releases the store (a local server is already stopped once the vectors are read). Safe to call more than once. */
  close(): Promise<void>;
}

/**
 * The Chroma path of a dense index: opens the store (the server at `url`,
 * else a local server started on `dataDir` under its lock), ingests the
 * chunks (atomic and idempotent: a collection of the same chunks and
 * embedder is reused), opens the current collection and reads its stored
 * vectors back into an `ExactDenseIndex`. A local server is stopped as soon
 * as the vectors are in memory (docs/reliability.md); on failure nothing is
 * left open.
 */
export async function openIngestedDense(o: {
  url?: string;
  dataDir?: string;
  requestTimeoutMs?: number;
  chunks: readonly Chunk[];
  embedder: Embedder;
  /** The content hash of what the chunks come from (a KB's `kbHash`, a BEIR corpus's hash): part of the collection name. */
  kbHash: string;
  onIngestProgress?: (done: number, total: number) => void;
}): Promise<IngestedDense> {
  let handle: ChromaStoreHandle | undefined;
  try {
    handle = await openStore({
      ...(o.url !== undefined ? { url: o.url } : { local: true }),
      ...(o.dataDir !== undefined ? { dataDir: o.dataDir } : {}),
      ...(o.requestTimeoutMs !== undefined ? { requestTimeoutMs: o.requestTimeoutMs } : {}),
    });
    log.info(`Chroma ${handle.kind === "local" ? "local server" : "server"} ready at ${handle.url}`);
    const ingested = await ingest({
      client: handle.client,
      chunks: o.chunks,
      embedder: o.embedder,
      kbHash: o.kbHash,
      ...(o.onIngestProgress !== undefined ? { onProgress: o.onIngestProgress } : {}),
    });
    log.info(describeIngest(ingested));
    const current = await requireCurrentCollection(handle.client, {
      kbHash: o.kbHash,
      embedder: o.embedder,
      fallbackToLatest: false,
    });
    const dense = await openExactDense(current);
    // The vectors are in memory now: a local server (and its data-dir lock) is not needed any more (docs/reliability.md).
    if (handle.kind === "local") await handle.close();
    const h = handle;
    return {
      dense,
      ingested,
      collection: current.name,
      store: h.kind === "local" ? "local" : h.url,
      storeKind: h.kind,
      close: () => h.close(),
    };
  } catch (e) {
    await handle?.close();
    throw e;
  }
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
