/**
 * What retrace keeps in a Chroma database, and removing what is no longer
 * used (`retrace ingest --list` / `--prune`, docs/reliability.md).
 */
import { COLLECTION_PREFIX, isStagingName, listAllCollections, readStoreMetadata } from "./chroma-store.js";
import type { ChromaClientLike } from "./chroma-types.js";
import type { SweepResult } from "./chroma-segments.js";
import { pruneLsaStates } from "./embedders/lsa.js";
import { removeStaleStaging } from "./ingest.js";

export interface CollectionInfo {
  name: string;
  /** `current`: the collection of the KB and embedder given; `complete`: another complete one; `staging`; `incomplete`. */
  state: "current" | "complete" | "staging" | "incomplete";
  kbHash: string | null;
  embedder: string | null;
  dimension: number | null;
  records: number;
  /** Estimated size of the stored vectors: records × dimension × 4 bytes (float32); text and index overhead not included. */
  vectorBytes: number;
}

/** Every retrace collection (name prefix `retrace-`), sorted by name, with its record count. */
export async function describeCollections(client: ChromaClientLike, currentName: string): Promise<CollectionInfo[]> {
  const out: CollectionInfo[] = [];
  for (const c of await listAllCollections(client)) {
    if (!c.name.startsWith(COLLECTION_PREFIX)) continue;
    const meta = readStoreMetadata(c);
    const records = await c.count();
    const state = isStagingName(c.name)
      ? "staging"
      : c.name === currentName && meta?.complete
        ? "current"
        : meta?.complete
          ? "complete"
          : "incomplete";
    out.push({
      name: c.name,
      state,
      kbHash: meta?.kbHash ?? null,
      embedder: meta?.embedder ?? null,
      dimension: meta?.dimension ?? null,
      records,
      vectorBytes: records * (meta?.dimension ?? 0) * 4,
    });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Deletes every retrace collection except `keep` (the current collection of
 * the KB and embedder in use) and staging collections still being filled by
 * a live process. Returns the deleted names, sorted.
 */
export async function pruneCollections(client: ChromaClientLike, keep: ReadonlySet<string>): Promise<string[]> {
  const removed = await removeStaleStaging(client);
  for (const c of await listAllCollections(client)) {
    if (!c.name.startsWith(COLLECTION_PREFIX) || isStagingName(c.name) || keep.has(c.name)) continue;
    await client.deleteCollection({ name: c.name });
    removed.push(c.name);
  }
  return removed.sort();
}

/** What `pruneStore` removed and the disk space it gave back. */
export interface StorePruneResult {
  /** Collections deleted, sorted. */
  removed: string[];
  /** Bytes freed on this machine: segment folders of deleted collections plus LSA state files (sum of file sizes). */
  reclaimedBytes: number;
  /** Segment folders removed from a local data dir (empty for a remote store). */
  segmentFolders: string[];
  segmentBytes: number;
  /** LSA state files removed. */
  lsaStates: string[];
  lsaBytes: number;
}

/**
 * `pruneCollections`, then the disk space: the segment folders of every
 * deleted collection (a local store's `reclaimSpace`), and the LSA state
 * files in `lsaDir` whose embedder no remaining collection uses, nor
 * `keepEmbedders` (the embedder in use).
 */
export async function pruneStore(
  store: { client: ChromaClientLike; reclaimSpace(): Promise<SweepResult> },
  keep: ReadonlySet<string>,
  options: { lsaDir?: string; keepEmbedders?: ReadonlySet<string> } = {},
): Promise<StorePruneResult> {
  const removed = await pruneCollections(store.client, keep);
  const swept = await store.reclaimSpace();
  let lsa = { removed: [] as string[], bytes: 0 };
  if (options.lsaDir !== undefined) {
    const used = new Set(options.keepEmbedders ?? []);
    for (const c of await listAllCollections(store.client)) {
      const embedder = readStoreMetadata(c)?.embedder;
      if (c.name.startsWith(COLLECTION_PREFIX) && embedder !== undefined) used.add(embedder);
    }
    lsa = await pruneLsaStates(options.lsaDir, used);
  }
  return {
    removed,
    reclaimedBytes: swept.bytes + lsa.bytes,
    segmentFolders: swept.removed,
    segmentBytes: swept.bytes,
    lsaStates: lsa.removed,
    lsaBytes: lsa.bytes,
  };
}
