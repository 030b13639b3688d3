/**
 * Atomic, idempotent ingestion against a real Chroma server: a second run is
 * a no-op; an interrupted run leaves the previous collection serving and no
 * staging collection in use; stale staging collections are cleaned; wrong
 * dimensions are a DimensionMismatchError.
 */
import os from "node:os";
import type { ChromaClientLike } from "../../src/retrieval/chroma-types.js";
import { beforeAll, describe, expect, it } from "vitest";
import { DimensionMismatchError, InvalidArgumentError } from "../../src/errors.js";
import type { Chunk } from "../../src/kb/types.js";
import {
  ChromaDenseIndex,
  collectionName,
  isStagingName,
  listAllCollections,
  openCurrentCollection,
  stagingCollectionName,
} from "../../src/retrieval/chroma-store.js";
import { COSINE_CONFIGURATION, ingest, removeStaleStaging } from "../../src/retrieval/ingest.js";
import { chunk, deadPid, TableEmbedderFake, useLocalChroma, WrongDimensionEmbedderFake } from "../helpers/chroma.js";

const KB_V1 = "1".repeat(64);
const KB_V2 = "2".repeat(64);

const local = useLocalChroma("ingest");
let client: ChromaClientLike;
beforeAll(() => {
  client = local.client;
});

/** 2-d vectors: text "t<i>" ↦ (cos, sin) of i·10°. */
function fixture(n: number, embedderId: string, prefix = "c"): { chunks: Chunk[]; embedder: TableEmbedderFake } {
  const table: Record<string, number[]> = {};
  const chunks: Chunk[] = [];
  for (let i = 0; i < n; i++) {
    const text = `${prefix} t${i}`;
    const a = (i * 10 * Math.PI) / 180;
    table[text] = [Math.cos(a), Math.sin(a)];
    chunks.push(chunk(`${prefix}${i}#1`, i % 2 === 0 ? "en" : "es-419", text));
  }
  return { chunks, embedder: new TableEmbedderFake(embedderId, 2, table) };
}

async function stagingNames(): Promise<string[]> {
  return (await listAllCollections(client)).map((c) => c.name).filter(isStagingName);
}

describe("ingest", () => {
  it("writes every chunk with its metadata, then a second run is a no-op", async () => {
    const { chunks, embedder } = fixture(5, "idem");
    const progress: [number, number][] = [];
    const first = await ingest({
      client,
      chunks,
      embedder,
      kbHash: KB_V1,
      batchSize: 2,
      onProgress: (d, t) => progress.push([d, t]),
    });
    expect(first).toMatchObject({
      status: "ingested",
      collection: collectionName(KB_V1, embedder),
      chunks: 5,
      embedder: "idem",
      dimension: 2,
    });
    expect(progress).toEqual([
      [0, 5],
      [2, 5],
      [4, 5],
      [5, 5],
    ]);
    expect(embedder.calls.map((c) => c.length)).toEqual([2, 2, 1]);

    const col = await client.getCollection({ name: first.collection, embeddingFunction: null as never });
    const firstId = col.id;
    expect(await col.count()).toBe(5);
    const got = await col.get({ ids: ["c1#1"], include: ["documents", "metadatas"] });
    expect(got.documents).toEqual(["c t1"]);
    expect(got.metadatas).toEqual([{ parentId: "c1", locale: "es-419", title: "c1", section: "Body" }]);

    const second = await ingest({ client, chunks, embedder, kbHash: KB_V1, batchSize: 2 });
    expect(second.status).toBe("up-to-date");
    expect(second.collection).toBe(first.collection);
    expect(embedder.calls).toHaveLength(3); // nothing embedded again
    const after = await client.getCollection({ name: first.collection, embeddingFunction: null as never });
    expect(after.id).toBe(firstId); // the very same collection, not a rebuilt one
    expect(await after.count()).toBe(5);
    expect(await stagingNames()).toEqual([]);
  });

  it("an abort after the first batch leaves the previous collection serving and no staging collection", async () => {
    const v1 = fixture(4, "abort");
    await ingest({ client, chunks: v1.chunks, embedder: v1.embedder, kbHash: KB_V1 });
    const v2 = fixture(6, "abort", "d");
    const controller = new AbortController();
    const run = ingest({
      client,
      chunks: v2.chunks,
      embedder: v2.embedder,
      kbHash: KB_V2,
      batchSize: 2,
      signal: controller.signal,
      onProgress: (done) => {
        if (done === 2) controller.abort(new Error("stop here"));
      },
    });
    await expect(run).rejects.toThrow("stop here");
    expect(v2.embedder.calls).toHaveLength(1); // only the first batch was embedded
    expect(await stagingNames()).toEqual([]);
    expect(
      await client
        .getCollection({ name: collectionName(KB_V2, v2.embedder), embeddingFunction: null as never })
        .catch(() => null),
    ).toBeNull();

    // The retriever still finds the v1 collection (as a fallback for the v2 KB) and it answers queries.
    const current = await openCurrentCollection(client, { kbHash: KB_V2, embedder: v2.embedder });
    expect(current?.exact).toBe(false);
    expect(current?.name).toBe(collectionName(KB_V1, v1.embedder));
    const hits = await new ChromaDenseIndex(current!.collection).search([1, 0], { topN: 2 });
    expect(hits.map((h) => h.id)).toEqual(["c0#1", "c1#1"]);

    // Once v2 completes it becomes current.
    const done = await ingest({ client, chunks: v2.chunks, embedder: v2.embedder, kbHash: KB_V2, batchSize: 2 });
    expect(done.status).toBe("ingested");
    expect((await openCurrentCollection(client, { kbHash: KB_V2, embedder: v2.embedder }))?.exact).toBe(true);
  });

  it("an ingest killed half-way leaves a staging collection that the next ingest deletes", async () => {
    const { chunks, embedder } = fixture(3, "stale");
    const name = collectionName(KB_V1, embedder);
    // What a killed process leaves: a half-filled staging collection whose owner is gone.
    const stale = stagingCollectionName(name);
    const half = await client.createCollection({
      name: stale,
      configuration: COSINE_CONFIGURATION,
      embeddingFunction: null,
      metadata: {
        retrace: 1,
        kbHash: KB_V1,
        chunksHash: "h",
        embedder: embedder.id,
        dimension: 2,
        chunks: 3,
        complete: false,
        startedAt: Date.now(),
        target: name,
        owner: `${os.hostname()}:${await deadPid()}`,
      },
    });
    await half.add({ ids: ["c0#1"], embeddings: [[1, 0]] });
    // One still being filled by a live process (our parent) must be kept.
    const busy = stagingCollectionName(name);
    await client.createCollection({
      name: busy,
      embeddingFunction: null,
      metadata: {
        retrace: 1,
        kbHash: KB_V1,
        chunksHash: "h",
        embedder: embedder.id,
        dimension: 2,
        chunks: 3,
        complete: false,
        startedAt: Date.now(),
        target: name,
        owner: `${os.hostname()}:${process.ppid}`,
      },
    });
    expect(await openCurrentCollection(client, { kbHash: KB_V1, embedder })).toBeNull(); // never served

    const result = await ingest({ client, chunks, embedder, kbHash: KB_V1 });
    expect(result.removedStaging).toEqual([stale]);
    expect(await stagingNames()).toEqual([busy]);
    expect(await removeStaleStaging(client)).toEqual([]);
    await client.deleteCollection({ name: busy });
  });

  it("rebuilds a collection whose chunks changed under the same KB hash, atomically replacing it", async () => {
    const { chunks, embedder } = fixture(3, "rebuild");
    const first = await ingest({ client, chunks, embedder, kbHash: KB_V1 });
    const changed = fixture(4, "rebuild");
    const second = await ingest({ client, chunks: changed.chunks, embedder: changed.embedder, kbHash: KB_V1 });
    expect(second.status).toBe("ingested");
    expect(second.collection).toBe(first.collection);
    expect(second.replacedBecause).toMatch(/3 chunks, expected 4/);
    const current = await openCurrentCollection(client, { kbHash: KB_V1, embedder });
    expect(await current?.collection.count()).toBe(4);
    expect(await stagingNames()).toEqual([]);
  });

  it("vectors of the wrong length → DimensionMismatchError, and nothing half-written stays", async () => {
    const { chunks } = fixture(3, "x");
    const broken = new WrongDimensionEmbedderFake("broken-model", 4, 3);
    const e = await ingest({ client, chunks, embedder: broken, kbHash: KB_V1 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DimensionMismatchError);
    expect((e as DimensionMismatchError).exitCode).toBe(2);
    expect((e as Error).message).toMatch(/dimension 4 for embedder broken-model .* got 3/);
    expect(await stagingNames()).toEqual([]);
    expect(await openCurrentCollection(client, { kbHash: KB_V1, embedder: broken })).toBeNull();
  });

  it("an existing collection of that name with another dimension → DimensionMismatchError", async () => {
    const { chunks, embedder } = fixture(2, "dim-clash");
    await client.createCollection({
      name: collectionName(KB_V1, embedder),
      embeddingFunction: null,
      metadata: {
        retrace: 1,
        kbHash: KB_V1,
        chunksHash: "h",
        embedder: embedder.id,
        dimension: 7,
        chunks: 2,
        complete: true,
        startedAt: 1,
      },
    });
    const e = await ingest({ client, chunks, embedder, kbHash: KB_V1 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DimensionMismatchError);
    expect((e as Error).message).toContain("existing collection");
  });

  it("validates its arguments before touching the store", async () => {
    const { chunks, embedder } = fixture(2, "args");
    await expect(ingest({ client, chunks, embedder, kbHash: KB_V1, batchSize: 0 })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(ingest({ client, chunks: [], embedder, kbHash: KB_V1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(ingest({ client, chunks: [chunks[0]!, chunks[0]!], embedder, kbHash: KB_V1 })).rejects.toThrow(
      /unique chunk ids/,
    );
    const aborted = new AbortController();
    aborted.abort(new Error("already aborted"));
    await expect(ingest({ client, chunks, embedder, kbHash: KB_V1, signal: aborted.signal })).rejects.toThrow(
      "already aborted",
    );
    expect(embedder.calls).toEqual([]);
  });
});
