/**
 * Atomic, idempotent ingestion of chunks into Chroma.
 *
 * - Idempotent: when the target collection (named from the KB hash and the
 *   embedder, see `collectionName`) exists and is complete — metadata
 *   `complete: true`, same chunk count, chunk-set hash, embedder id and
 *   dimension, and the record count agrees — nothing is written.
 * - Atomic: the vectors go into a NEW staging collection
 *   (`<name>--staging-<hex>`), batch by batch; its record count is verified;
 *   then one `modify({ name, metadata })` call renames it to the target name
 *   and marks it complete. Until then readers keep the previous collection;
 *   an abort (AbortSignal) deletes the staging collection, a killed process
 *   leaves it behind and the next ingest deletes it (a staging collection is
 *   stale when its owner process is gone).
 */
import { hostname } from "node:os";
import { DimensionMismatchError, InvalidArgumentError, ServiceUnavailableError } from "../errors.js";
import type { Chunk } from "../kb/types.js";
import { log } from "../log.js";
import { processAlive } from "./lock.js";
import {
  asDimensionMismatch,
  chunksHash,
  collectionName,
  getCollectionOrNull,
  incompleteReason,
  isStagingName,
  listAllCollections,
  readStoreMetadata,
  STORE_SCHEMA_VERSION,
  stagingCollectionName,
  stagingTarget,
  toCollectionMetadata,
  type ChunkMetadata,
  type StoreMetadata,
} from "./chroma-store.js";
import type { ChromaClientLike, ChromaCollection } from "./chroma-types.js";
import { fingerprintOf } from "./fingerprint.js";
import { assertPositiveInteger } from "./fusion.js";
import type { Embedder } from "./types.js";
import { vectorCacheStatsOf } from "./vector-cache.js";

export const DEFAULT_BATCH_SIZE = 64;
/** A staging collection of another host is considered abandoned after this long. */
export const FOREIGN_STAGING_TTL_MS = 60 * 60 * 1000;
/** Vector-space settings of every retrace collection (accepted by chromadb 3.5 + server 1.0). */
export const COSINE_CONFIGURATION = { hnsw: { space: "cosine" as const } };

export interface IngestOptions {
  client: ChromaClientLike;
  chunks: readonly Chunk[];
  embedder: Embedder;
  /** Content hash of the KB the chunks come from (names the collection). */
  kbHash: string;
  /** Chunks embedded and written per request; default 64. */
  batchSize?: number;
  /** Called after each written batch with (chunks written, total); once with (0, total) before the first. */
  onProgress?: (done: number, total: number) => void;
  /** Aborting stops before the next batch, deletes the staging collection and rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface IngestResult {
  /** `up-to-date`: nothing written; `ingested`: a new collection became current. */
  status: "up-to-date" | "ingested";
  collection: string;
  chunks: number;
  embedder: string;
  dimension: number;
  durationMs: number;
  /** Stale staging collections deleted before this ingest. */
  removedStaging: string[];
  /** Why the existing collection of that name was rebuilt (absent when there was none or it was up to date). */
  replacedBecause?: string;
  /** A model embedder's document vectors during this ingest: how many the model embedded and how many were read from the vector cache (src/retrieval/vector-cache.ts). */
  vectors?: { embedded: number; cached: number };
}

/** One line saying what an ingest did: `collection X: N chunks, embedder E (D-d), already up to date | ingested N chunks in T ms`. */
export function describeIngest(r: IngestResult): string {
  const what =
    r.status === "up-to-date"
      ? "already up to date"
      : `ingested ${r.chunks} chunks in ${r.durationMs.toFixed(0)} ms${r.vectors === undefined ? "" : ` (${r.vectors.embedded} embedded, ${r.vectors.cached} from the vector cache)`}`;
  return `collection ${r.collection}: ${r.chunks} chunks, embedder ${r.embedder} (${r.dimension}-d), ${what}`;
}

/** Staging collections that ingests of this process are filling right now. */
const inFlight = new Set<string>();

function ownerTag(): string {
  return `${hostname()}:${process.pid}`;
}

/** Why a staging collection is still in use, or null when it is stale. */
function stagingInUse(c: ChromaCollection, now: number): string | null {
  if (inFlight.has(c.name)) return "an ingest of this process is filling it";
  const meta = readStoreMetadata(c);
  const owner = meta?.owner;
  if (meta === null || owner === undefined) return null;
  const colon = owner.lastIndexOf(":");
  const host = owner.slice(0, colon);
  const pid = Number(owner.slice(colon + 1));
  if (host === hostname()) {
    return pid !== process.pid && Number.isInteger(pid) && pid > 0 && processAlive(pid)
      ? `process ${pid} is filling it`
      : null;
  }
  return now - meta.startedAt < FOREIGN_STAGING_TTL_MS ? `host ${host} started it less than an hour ago` : null;
}

/**
 * Deletes staging collections left by interrupted ingests: those whose owner
 * process is gone (same host), older than an hour (other hosts), or without
 * an owner. Returns the deleted names.
 */
export async function removeStaleStaging(client: ChromaClientLike): Promise<string[]> {
  const removed: string[] = [];
  const now = Date.now();
  for (const c of await listAllCollections(client)) {
    if (!isStagingName(c.name)) continue;
    const busy = stagingInUse(c, now);
    if (busy !== null) {
      log.debug(`Keeping staging collection ${c.name}: ${busy}`);
      continue;
    }
    try {
      await client.deleteCollection({ name: c.name });
      removed.push(c.name);
      log.info(`Deleted stale staging collection ${c.name} (an interrupted ingest of ${stagingTarget(c.name) ?? "?"})`);
    } catch (e) {
      log.warn(`Could not delete stale staging collection ${c.name}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return removed;
}

function validate(options: IngestOptions): number {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  assertPositiveInteger("batchSize", batchSize);
  if (options.chunks.length === 0) throw new InvalidArgumentError("chunks", "a non-empty list of chunks", []);
  const seen = new Set<string>();
  for (const c of options.chunks) {
    if (seen.has(c.id)) throw new InvalidArgumentError("chunks", "unique chunk ids", c.id);
    seen.add(c.id);
  }
  assertPositiveInteger("embedder.dimension", options.embedder.dimension);
  return batchSize;
}

function checkVectors(vectors: number[][], expectedCount: number, embedder: Embedder, firstIndex: number): void {
  if (!Array.isArray(vectors) || vectors.length !== expectedCount) {
    throw new InvalidArgumentError(
      `${embedder.id}.embedDocuments(texts)`,
      `${expectedCount} vectors`,
      Array.isArray(vectors) ? vectors.length : vectors,
    );
  }
  vectors.forEach((v, i) => {
    if (v.length !== embedder.dimension) {
      throw new DimensionMismatchError(
        embedder.dimension,
        v.length,
        `embedder ${embedder.id} (vector of chunk #${firstIndex + i + 1})`,
      );
    }
    for (const x of v) {
      if (!Number.isFinite(x))
        throw new InvalidArgumentError(`${embedder.id} vector of chunk #${firstIndex + i + 1}`, "finite numbers", x);
    }
  });
}

async function deleteQuietly(client: ChromaClientLike, name: string): Promise<void> {
  try {
    await client.deleteCollection({ name });
  } catch (e) {
    log.warn(
      `Could not delete collection ${name}: ${e instanceof Error ? e.message : String(e)} (the next ingest will)`,
    );
  }
}

/** Embeds `chunks` with `embedder` into the KB's collection, atomically and only when needed. */
export async function ingest(options: IngestOptions): Promise<IngestResult> {
  const { client, chunks, embedder, signal } = options;
  const batchSize = validate(options);
  const started = performance.now();
  const statsBefore = vectorCacheStatsOf(embedder);
  const before = statsBefore === undefined ? undefined : { ...statsBefore };
  const name = collectionName(options.kbHash, embedder);
  const total = chunks.length;
  const expected = { embedder, chunks: total, chunksHash: chunksHash(chunks) };
  const base = { collection: name, chunks: total, embedder: embedder.id, dimension: embedder.dimension };
  signal?.throwIfAborted();

  const removedStaging = await removeStaleStaging(client);

  let replacedBecause: string | undefined;
  const existing = await getCollectionOrNull(client, name);
  if (existing !== null) {
    const meta = readStoreMetadata(existing);
    if (meta !== null && meta.dimension !== embedder.dimension) {
      throw new DimensionMismatchError(
        meta.dimension,
        embedder.dimension,
        `embedder ${embedder.id} and existing collection ${name}`,
      );
    }
    replacedBecause = incompleteReason(meta, expected) ?? undefined;
    if (replacedBecause === undefined) {
      const count = await existing.count();
      if (count === total) {
        // Nothing to write: no progress line (docs/reliability.md).
        return { ...base, status: "up-to-date", durationMs: performance.now() - started, removedStaging };
      }
      replacedBecause = `it holds ${count} records but its metadata says ${total}`;
    }
    log.info(`Rebuilding collection ${name}: ${replacedBecause}`);
  }
  signal?.throwIfAborted();

  const stagingName = stagingCollectionName(name);
  const meta: StoreMetadata = {
    retrace: STORE_SCHEMA_VERSION,
    kbHash: options.kbHash,
    chunksHash: expected.chunksHash,
    embedder: embedder.id,
    dimension: embedder.dimension,
    chunks: total,
    complete: false,
    startedAt: Date.now(),
    target: name,
    owner: ownerTag(),
    ...(fingerprintOf(embedder) !== undefined ? { weights: fingerprintOf(embedder) } : {}),
  };
  inFlight.add(stagingName);
  let staging: ChromaCollection | undefined;
  try {
    staging = await client.createCollection({
      name: stagingName,
      configuration: COSINE_CONFIGURATION,
      metadata: toCollectionMetadata(meta),
      embeddingFunction: null,
    });
    options.onProgress?.(0, total);
    for (let start = 0; start < total; start += batchSize) {
      signal?.throwIfAborted();
      const batch = chunks.slice(start, start + batchSize);
      const vectors = await embedder.embedDocuments(
        batch.map((c) => c.text),
        { locales: batch.map((c) => c.locale) },
      );
      checkVectors(vectors, batch.length, embedder, start);
      signal?.throwIfAborted();
      const metadatas: ChunkMetadata[] = batch.map((c) => ({
        parentId: c.parentId,
        locale: c.locale,
        title: c.title,
        section: c.section,
      }));
      try {
        await staging.add({
          ids: batch.map((c) => c.id),
          embeddings: vectors,
          documents: batch.map((c) => c.text),
          metadatas,
        });
      } catch (e) {
        throw asDimensionMismatch(e, `staging collection ${stagingName}`) ?? e;
      }
      options.onProgress?.(Math.min(start + batchSize, total), total);
    }
    signal?.throwIfAborted();
    const count = await staging.count();
    if (count !== total) {
      throw new ServiceUnavailableError(
        "chroma",
        `Chroma holds ${count} records in ${stagingName} after writing ${total}; the ingest was not made current`,
      );
    }

    // Make it current. Chroma cannot rename onto an existing name, so a collection being
    // replaced is first moved aside (a brief moment with no collection of that name).
    let aside: string | undefined;
    const stillThere = existing === null ? null : await getCollectionOrNull(client, name);
    if (stillThere !== null) {
      aside = stagingCollectionName(name);
      await stillThere.modify({ name: aside });
    }
    const { target: _target, owner: _owner, ...rest } = meta;
    try {
      await staging.modify({
        name,
        metadata: toCollectionMetadata({ ...rest, complete: true, completedAt: Date.now() }),
      });
    } catch (e) {
      if (aside !== undefined && stillThere !== null) await stillThere.modify({ name }).catch(() => undefined);
      // Lost the race to another process ingesting the same KB (docs/reliability.md): use its collection once verified.
      const winner = await getCollectionOrNull(client, name).catch(() => null);
      if (
        winner !== null &&
        incompleteReason(readStoreMetadata(winner), expected) === null &&
        (await winner.count()) === total
      ) {
        inFlight.delete(stagingName);
        await deleteQuietly(client, stagingName);
        log.info(`Another process made ${name} current first (verified: ${total} chunks, same chunk set); using it`);
        options.onProgress?.(total, total);
        return { ...base, status: "up-to-date", durationMs: performance.now() - started, removedStaging };
      }
      throw e;
    }
    inFlight.delete(stagingName);
    if (aside !== undefined) await deleteQuietly(client, aside);
  } catch (e) {
    if (inFlight.has(stagingName)) {
      inFlight.delete(stagingName);
      if (staging !== undefined) await deleteQuietly(client, stagingName);
    }
    throw e;
  }
  const durationMs = performance.now() - started;
  log.debug(`Ingested ${total} chunks into ${name} in ${durationMs.toFixed(0)} ms`);
  return {
    ...base,
    status: "ingested",
    durationMs,
    removedStaging,
    ...(replacedBecause !== undefined ? { replacedBecause } : {}),
    ...vectorCounts(embedder, before),
  };
}

/** What a cached model embedder did between `before` and now (nothing for other embedders). */
function vectorCounts(
  embedder: Embedder,
  before: { hits: number; embedded: number } | undefined,
): { vectors?: { embedded: number; cached: number } } {
  const now = vectorCacheStatsOf(embedder);
  if (now === undefined || before === undefined) return {};
  return { vectors: { embedded: now.embedded - before.embedded, cached: now.hits - before.hits } };
}
