/**
 * Use-case: a KB's chunks embedded into Chroma (`retrace ingest`,
 * `ingestKb`; atomic and idempotent, src/retrieval/ingest.ts), or the
 * store's retrace collections listed or pruned. Starts a local Chroma server
 * on `dataDir` unless `store` (or CHROMA_URL) names one, and stops it before
 * returning. The embedder is the composition root's (`openEmbedder`), so a
 * later eval finds the collection it would have written. `signal` stops an
 * ingest cleanly (the previous collection stays current).
 */
import { checkGivenSettings } from "./settings/read.js";
import path from "node:path";
import { InvalidArgumentError } from "../errors.js";
import { loadKnowledgeBase } from "../kb/cards.js";
import { chunkKnowledgeBase } from "../kb/chunk.js";
import { kbHash } from "../kb/hash.js";
import { log } from "../log.js";
import { loadKbAnalyzers } from "../retrieval/analyzer.js";
import { defaultDataDir, openStore, type ChromaStoreHandle } from "../retrieval/chroma-client.js";
import { requestTimeoutMs } from "../retrieval/chroma-faults.js";
import { collectionName } from "../retrieval/chroma-store.js";
import {
  describeCollections,
  pruneStore,
  type CollectionInfo,
  type StorePruneResult,
} from "../retrieval/collections.js";
import { DEFAULT_BATCH_SIZE, ingest, type IngestResult } from "../retrieval/ingest.js";
import { lsaStateDir, openEmbedder, resolveStoreChoice, type EmbedderSetup } from "../system.js";
import { NO_PROGRESS, type UseCaseHooks } from "./progress.js";

export interface IngestKbOptions {
  /** The KB folder (default `kb`). */
  kb?: string;
  /** `auto` (default: CHROMA_URL, else local), `local` or a Chroma URL. */
  store?: string;
  /** Default `auto`. */
  embedder?: string;
  /** The local Chroma's data folder (default `.retrace/chroma`). */
  dataDir?: string;
  /** Chunks embedded and written per request (default DEFAULT_BATCH_SIZE). */
  batchSize?: number;
  /** Chroma request deadline, seconds (docs/reliability.md). */
  timeout?: number;
  /** List retrace's collections with their sizes instead of ingesting. */
  list?: boolean;
  /** Delete every retrace collection but the current one of this KB and embedder, instead of ingesting. */
  prune?: boolean;
  /** The card size limit (src/kb/cards.ts). */
  maxCardBytes?: number;
}

/** Where the chunks went, true once the ingest returns: a server it started is stopped (no URL to reach it by); a remote one keeps running (its URL, redacted). */
export type IngestStore =
  { kind: "local"; url: null; state: "stopped"; dataDir: string } | { kind: "remote"; url: string; state: "running" };

export type IngestKbOutcome =
  | { kind: "ingested"; store: IngestStore; kbHash: string; result: IngestResult; embedderSetup: EmbedderSetup }
  | {
      kind: "collections";
      current: string;
      removed?: string[];
      pruned?: StorePruneResult;
      collections: CollectionInfo[];
    };

/** Ingests the KB (or lists / prunes collections: `list`, `prune`). Throws a typed error; an abort through `signal` rejects with its reason. */
export async function ingestKb(
  opts: IngestKbOptions,
  hooks: UseCaseHooks & { signal?: AbortSignal } = {},
): Promise<IngestKbOutcome> {
  checkGivenSettings("ingest", opts, "ingestKb options"); // as the CLI checks them (src/app/settings/read.ts)
  const batchSize = opts.batchSize ?? DEFAULT_BATCH_SIZE;
  const kbDir = opts.kb ?? "kb";
  // The store word first: a bad one is a usage error before anything is read or started.
  const store = opts.store ?? "auto";
  const choice = resolveStoreChoice(store);
  if (choice.kind === "memory" || choice.kind === "none")
    throw new InvalidArgumentError("--store", "auto, local or a Chroma URL (ingest writes into a Chroma store)", store);
  const kb = await loadKnowledgeBase(kbDir, opts.maxCardBytes !== undefined ? { maxCardBytes: opts.maxCardBytes } : {});
  const chunks = chunkKnowledgeBase(kb);
  const hash = kbHash(kb);
  // The embedder of the composition root's factory; the LSA embedder is fitted with the KB's analyzers (`<kb>/analyzers.json`), as an eval fits it: the same state and collection (and a model's weights fingerprinted).
  const { analyzers, file: analyzerFile } = loadKbAnalyzers(kbDir);
  if (analyzerFile !== null) log.info(`analyzers: ${analyzerFile} applied`);
  const { embedder, setup: embedderSetup } = await openEmbedder({
    embedder: opts.embedder ?? "auto",
    chunks,
    analyzers,
    stateDir: lsaStateDir(opts.dataDir),
  });

  let handle: ChromaStoreHandle | undefined;
  const progress = (hooks.progress ?? NO_PROGRESS)("ingest", "chunks");
  try {
    hooks.signal?.throwIfAborted(); // stopped while the KB was read or the embedder fitted: nothing is started
    if (choice.kind === "local") log.info(`Starting a local Chroma server (data ${opts.dataDir ?? defaultDataDir()})`);
    handle = await openStore({
      ...(choice.url !== undefined ? { url: choice.url } : { local: true }),
      ...(opts.dataDir !== undefined ? { dataDir: opts.dataDir } : {}),
      requestTimeoutMs: requestTimeoutMs(opts.timeout),
    });
    log.info(`Chroma ${handle.kind === "local" ? "local server" : "server"} ready at ${handle.url}`);
    hooks.signal?.throwIfAborted();
    if (opts.list === true || opts.prune === true)
      return await listOrPrune(
        handle,
        collectionName(hash, embedder),
        embedder.id,
        opts.prune === true,
        lsaStateDir(opts.dataDir),
      );
    const result = await ingest({
      client: handle.client,
      chunks,
      embedder,
      kbHash: hash,
      batchSize,
      ...(hooks.signal !== undefined ? { signal: hooks.signal } : {}),
      onProgress: (done, total) => progress.update(done, total),
    });
    progress.stop();
    if (result.removedStaging.length > 0)
      log.info(`Deleted ${result.removedStaging.length} stale staging collection(s) of interrupted ingests`);
    const where: IngestStore =
      handle.kind === "local"
        ? { kind: "local", url: null, state: "stopped", dataDir: path.resolve(opts.dataDir ?? defaultDataDir()) }
        : { kind: "remote", url: handle.url, state: "running" }; // already redacted by openStore
    return { kind: "ingested", store: where, kbHash: hash, result, embedderSetup };
  } finally {
    progress.stop();
    await handle?.close();
  }
}

async function listOrPrune(
  store: ChromaStoreHandle,
  current: string,
  embedderId: string,
  prune: boolean,
  lsaDir: string | undefined,
): Promise<IngestKbOutcome> {
  // Pruning also frees the disk: segment folders of the deleted collections, LSA states no collection uses (docs/reliability.md).
  const pruned = prune
    ? await pruneStore(store, new Set([current]), {
        ...(lsaDir !== undefined ? { lsaDir } : {}),
        keepEmbedders: new Set([embedderId]),
      })
    : undefined;
  const removed = pruned?.removed ?? [];
  for (const name of removed) log.info(`deleted collection ${name}`);
  for (const f of [...(pruned?.segmentFolders ?? []), ...(pruned?.lsaStates ?? [])]) log.info(`removed ${f}`);
  const collections = await describeCollections(store.client, current);
  return { kind: "collections", current, ...(pruned !== undefined ? { removed, pruned } : {}), collections };
}
