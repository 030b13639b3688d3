/**
 * Collection naming (pure), ChromaDenseIndex and openCurrentCollection against
 * a real Chroma server. The dense index is checked against hand-computed
 * cosines and, differentially, against the exact in-memory index.
 */
import type { ChromaClientLike } from "../../src/retrieval/chroma-types.js";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { DimensionMismatchError, InvalidArgumentError, ServiceUnavailableError } from "../../src/errors.js";
import { loadKnowledgeBase } from "../../src/kb/cards.js";
import { chunkKnowledgeBase } from "../../src/kb/chunk.js";
import { kbHash } from "../../src/kb/hash.js";
import type { Chunk } from "../../src/kb/types.js";
import {
  ChromaDenseIndex,
  chunksHash,
  collectionName,
  isStagingName,
  openCurrentCollection,
  readStoreMetadata,
  requireCurrentCollection,
  stagingCollectionName,
  stagingTarget,
} from "../../src/retrieval/chroma-store.js";
import { InMemoryDenseIndex } from "../../src/retrieval/dense.js";
import { HashingEmbedder } from "../../src/retrieval/embedders/builtin.js";
import { COSINE_CONFIGURATION, ingest } from "../../src/retrieval/ingest.js";
import { MINI_KB } from "../helpers/fixtures.js";
import { chunk, TableEmbedderFake, useLocalChroma } from "../helpers/chroma.js";

const KB_A = "a".repeat(64);
const KB_B = "b".repeat(64);
const KB_C = "c".repeat(64);
/** Chroma's collection-name rule (server 1.x). */
const CHROMA_NAME = /^[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]$/;

describe("collectionName (pure)", () => {
  it("is retrace-<12 hex of the KB hash>-<embedder id>-d<dimension>", () => {
    expect(collectionName(KB_A, { id: "builtin-hashed-ngrams-384-v1", dimension: 384 })).toBe(
      "retrace-aaaaaaaaaaaa-builtin-hashed-ngrams-384-v1-d384",
    );
  });

  it("sanitises an id with other characters and appends a hash of the original", () => {
    const name = collectionName(KB_A, { id: "Xenova/bge-small-en-v1.5", dimension: 384 });
    expect(name).toMatch(/^retrace-aaaaaaaaaaaa-xenova-bge-small-en-v1\.5-[0-9a-f]{6}-d384$/);
    expect(name).not.toBe(collectionName(KB_A, { id: "xenova-bge-small-en-v1.5", dimension: 384 }));
  });

  it("rejects a KB hash that is not a hex digest and a non-positive dimension", () => {
    expect(() => collectionName("xyz", { id: "e", dimension: 3 })).toThrow(InvalidArgumentError);
    expect(() => collectionName(KB_A, { id: "e", dimension: 0 })).toThrow(InvalidArgumentError);
    expect(() => collectionName(KB_A, { id: "  ", dimension: 3 })).toThrow(InvalidArgumentError);
  });

  it("always satisfies Chroma's name rule and never gives two embedders one name (property)", () => {
    const id = fc.string({ minLength: 1, maxLength: 120, unit: "grapheme" }).filter((s) => s.trim() !== "");
    fc.assert(
      fc.property(id, id, fc.integer({ min: 1, max: 4096 }), fc.integer({ min: 1, max: 4096 }), (id1, id2, d1, d2) => {
        const n1 = collectionName(KB_A, { id: id1, dimension: d1 });
        const n2 = collectionName(KB_A, { id: id2, dimension: d2 });
        expect(n1).toMatch(CHROMA_NAME);
        expect(n1.includes("..")).toBe(false);
        expect(stagingCollectionName(n1)).toMatch(CHROMA_NAME);
        if (id1 !== id2 || d1 !== d2) expect(n1).not.toBe(n2);
      }),
      { seed: 42, numRuns: 200 },
    );
  });

  it("marks staging names and knows their target", () => {
    const final = collectionName(KB_A, { id: "e", dimension: 3 });
    const staging = stagingCollectionName(final, "0123abcd");
    expect(staging).toBe(`${final}--staging-0123abcd`);
    expect(isStagingName(staging)).toBe(true);
    expect(isStagingName(final)).toBe(false);
    expect(stagingTarget(staging)).toBe(final);
    expect(stagingTarget(final)).toBeUndefined();
  });

  it("hashes a chunk set independently of order, and changes with any text", () => {
    const a = chunk("x#1", "en", "one");
    const b = chunk("y#1", "en", "two");
    expect(chunksHash([a, b])).toBe(chunksHash([b, a]));
    expect(chunksHash([a, b])).not.toBe(chunksHash([a, { ...b, text: "two!" }]));
  });
});

const local = useLocalChroma("chroma-store");
let client: ChromaClientLike;
beforeAll(() => {
  client = local.client;
});

describe("ChromaDenseIndex", () => {
  // Hand-made 3-d vectors; cosines with the query q = (1, 0, 0):
  //   en-a#1 (1,0,0) → 1;  en-b#1 (1,1,0) → 1/√2 ≈ 0.7071;  en-c#1 and en-d#1 (0,1,0) → 0 (a tie, by id);
  //   es-a#1 (1,0.1,0) → 1/√1.01 ≈ 0.99504;  pt-a#1 (0,0,1) → 0.
  const vectors: Record<string, number[]> = {
    "card a": [1, 0, 0],
    "card b": [1, 1, 0],
    "card c": [0, 1, 0],
    "card d": [0, 1, 0],
    "tarjeta a": [1, 0.1, 0],
    "cartao a": [0, 0, 1],
  };
  const chunks: Chunk[] = [
    chunk("en-a#1", "en", "card a"),
    chunk("en-b#1", "en", "card b"),
    chunk("en-d#1", "en", "card d"),
    chunk("en-c#1", "en", "card c"),
    chunk("es-a#1", "es-419", "tarjeta a"),
    chunk("pt-a#1", "pt-BR", "cartao a"),
  ];
  const embedder = new TableEmbedderFake("table-fake-v1", 3, vectors);
  let index: ChromaDenseIndex;

  beforeAll(async () => {
    await ingest({ client, chunks, embedder, kbHash: KB_A, batchSize: 4 });
    const current = await requireCurrentCollection(client, { kbHash: KB_A, embedder });
    index = new ChromaDenseIndex(current.collection);
  });

  it("ranks by cosine similarity (1 − distance), 1-based, ties by id", async () => {
    const hits = await index.search([1, 0, 0], { topN: 10 });
    expect(index.name).toBe(`chroma:${collectionName(KB_A, embedder)}`);
    expect(hits.map((h) => h.id)).toEqual(["en-a#1", "es-a#1", "en-b#1", "en-c#1", "en-d#1", "pt-a#1"]);
    expect(hits.map((h) => h.rank)).toEqual([1, 2, 3, 4, 5, 6]);
    const expected = [1, 1 / Math.sqrt(1.01), Math.SQRT1_2, 0, 0, 0];
    hits.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i] as number, 5));
    expect(hits[0]?.parentId).toBe("en-a");
  });

  it("resolves a tie that straddles the cut by id, whichever tied record Chroma would cut", async () => {
    // Ranks 4-6 all score 0 (en-c#1, en-d#1, pt-a#1): topN 4 must keep en-c#1, topN 5 adds en-d#1.
    for (let i = 0; i < 5; i++) {
      expect((await index.search([1, 0, 0], { topN: 4 })).map((h) => h.id)).toEqual([
        "en-a#1",
        "es-a#1",
        "en-b#1",
        "en-c#1",
      ]);
      expect((await index.search([1, 0, 0], { topN: 5 })).at(-1)?.id).toBe("en-d#1");
      expect((await index.search([0, 1, 0], { topN: 1, locale: "en" })).map((h) => h.id)).toEqual(["en-c#1"]);
    }
  });

  it("filters by locale and cuts at topN", async () => {
    const en = await index.search([1, 0, 0], { topN: 10, locale: "en" });
    expect(en.map((h) => h.id)).toEqual(["en-a#1", "en-b#1", "en-c#1", "en-d#1"]);
    const es = await index.search([1, 0, 0], { topN: 10, locale: "es-419" });
    expect(es.map((h) => [h.id, h.rank])).toEqual([["es-a#1", 1]]);
    const top2 = await index.search([0, 1, 0], { topN: 2, locale: "en" });
    expect(top2.map((h) => h.id)).toEqual(["en-c#1", "en-d#1"]);
    expect(top2[1]?.score).toBeCloseTo(1, 5);
  });

  it("rejects a query vector of the wrong dimension and a bad topN", async () => {
    await expect(index.search([1, 0], { topN: 3 })).rejects.toBeInstanceOf(DimensionMismatchError);
    await expect(index.search([1, 0], { topN: 3 })).rejects.toThrow(/dimension 3 .* got 2/);
    await expect(index.search([1, 0, 0], { topN: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
    // A collection without retrace metadata (dimension unknown): Chroma's own complaint becomes the same typed error.
    const plain = await client.createCollection({
      name: "plain-3d",
      configuration: COSINE_CONFIGURATION,
      embeddingFunction: null,
    });
    await plain.add({ ids: ["p#1"], embeddings: [[1, 0, 0]], metadatas: [{ parentId: "p", locale: "en" }] });
    const bare = new ChromaDenseIndex(plain);
    expect(bare.dimension).toBeUndefined();
    await expect(bare.search([1, 0], { topN: 3 })).rejects.toBeInstanceOf(DimensionMismatchError);
    expect((await bare.search([1, 0, 0], { topN: 3 })).map((h) => [h.id, h.parentId, h.rank])).toEqual([
      ["p#1", "p", 1],
    ]);
  });

  it("agrees with the exact in-memory index on the mini KB (built-in embedder)", async () => {
    const kb = await loadKnowledgeBase(MINI_KB);
    const kbChunks = chunkKnowledgeBase(kb);
    const builtin = new HashingEmbedder();
    const hash = kbHash(kb);
    await ingest({ client, chunks: kbChunks, embedder: builtin, kbHash: hash });
    const chroma = new ChromaDenseIndex(
      (await requireCurrentCollection(client, { kbHash: hash, embedder: builtin })).collection,
    );
    const memory = await InMemoryDenseIndex.fromChunks(kbChunks, builtin);
    const queries = ["how long does a refund take", "congelar tarjeta", "chave pix", "freeze my card", "zzz"];
    for (const q of queries) {
      const v = await builtin.embedQuery(q);
      for (const locale of [undefined, "en", "es-419"] as const) {
        const opts = { topN: 5, ...(locale !== undefined ? { locale } : {}) };
        const got = await chroma.search(v, opts);
        const want = memory.searchSync(v, opts);
        expect(
          got.map((h) => h.id),
          `${q} / ${locale ?? "all"}`,
        ).toEqual(want.map((h) => h.id));
        got.forEach((h, i) => expect(h.score).toBeCloseTo(want[i]?.score as number, 4));
      }
    }
  });
});

describe("openCurrentCollection", () => {
  const vectors = { one: [1, 0], two: [0, 1] };
  const chunks = [chunk("c1#1", "en", "one"), chunk("c2#1", "en", "two")];

  it("opens the KB's own complete collection (exact)", async () => {
    const embedder = new TableEmbedderFake("open-exact", 2, vectors);
    await ingest({ client, chunks, embedder, kbHash: KB_A });
    const current = await openCurrentCollection(client, { kbHash: KB_A, embedder });
    expect(current?.exact).toBe(true);
    expect(current?.name).toBe(collectionName(KB_A, embedder));
    expect(current?.metadata).toMatchObject({
      complete: true,
      chunks: 2,
      dimension: 2,
      embedder: "open-exact",
      kbHash: KB_A,
    });
  });

  it("falls back to the embedder's latest complete collection when the KB's is missing", async () => {
    const embedder = new TableEmbedderFake("open-fallback", 2, vectors);
    await ingest({ client, chunks, embedder, kbHash: KB_A });
    await new Promise((r) => setTimeout(r, 5)); // distinct completedAt (ms) for the two
    await ingest({ client, chunks: [chunks[0] as Chunk], embedder, kbHash: KB_B });
    const current = await openCurrentCollection(client, { kbHash: KB_C, embedder });
    expect(current?.exact).toBe(false);
    expect(current?.name).toBe(collectionName(KB_B, embedder)); // the later of the two
    expect(current?.metadata.kbHash).toBe(KB_B);
    expect(await openCurrentCollection(client, { kbHash: KB_C, embedder, fallbackToLatest: false })).toBeNull();
  });

  it("returns null for an embedder with no collection; requireCurrentCollection says to ingest (exit 3)", async () => {
    const embedder = new TableEmbedderFake("never-ingested", 2, vectors);
    expect(await openCurrentCollection(client, { kbHash: KB_A, embedder })).toBeNull();
    const e = await requireCurrentCollection(client, { kbHash: KB_A, embedder }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ServiceUnavailableError);
    expect((e as Error).message).toContain("retrace ingest");
  });

  it("never serves an incomplete collection", async () => {
    const embedder = new TableEmbedderFake("open-incomplete", 2, vectors);
    const name = collectionName(KB_A, embedder);
    await client.createCollection({
      name,
      configuration: COSINE_CONFIGURATION,
      embeddingFunction: null,
      metadata: {
        retrace: 1,
        kbHash: KB_A,
        chunksHash: "x",
        embedder: embedder.id,
        dimension: 2,
        chunks: 2,
        complete: false,
        startedAt: 1,
      },
    });
    expect(await openCurrentCollection(client, { kbHash: KB_A, embedder })).toBeNull();
  });

  it("a collection of that name with another dimension → DimensionMismatchError", async () => {
    const embedder = new TableEmbedderFake("open-dim", 2, vectors);
    const name = collectionName(KB_A, embedder);
    const c = await client.createCollection({
      name,
      configuration: COSINE_CONFIGURATION,
      embeddingFunction: null,
      metadata: {
        retrace: 1,
        kbHash: KB_A,
        chunksHash: "x",
        embedder: embedder.id,
        dimension: 5,
        chunks: 2,
        complete: true,
        startedAt: 1,
        completedAt: 2,
      },
    });
    expect(readStoreMetadata(c)?.dimension).toBe(5);
    const e = await openCurrentCollection(client, { kbHash: KB_A, embedder }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DimensionMismatchError);
    expect((e as Error).message).toMatch(/dimension 5 .* got 2/);
  });
});
