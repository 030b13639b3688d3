/** loadExactDenseIndex against a real local Chroma: every record read back, paged, and ranked exactly. */
import { describe, expect, it } from "vitest";
import { loadKnowledgeBase } from "../../src/kb/cards.js";
import { chunkKnowledgeBase } from "../../src/kb/chunk.js";
import { kbHash } from "../../src/kb/hash.js";
import { requireCurrentCollection } from "../../src/retrieval/chroma-store.js";
import { InMemoryDenseIndex } from "../../src/retrieval/dense.js";
import { HashingEmbedder } from "../../src/retrieval/embedders/builtin.js";
import { loadExactDenseIndex, openExactDense } from "../../src/retrieval/exact-dense.js";
import { ingest } from "../../src/retrieval/ingest.js";
import { useLocalChroma } from "../helpers/chroma.js";
import { MINI_KB } from "../helpers/fixtures.js";

const local = useLocalChroma("exact-dense");

describe("loadExactDenseIndex", () => {
  it("reads every vector back (in pages) and ranks as exact brute force over the embedder's vectors does", async () => {
    const kb = await loadKnowledgeBase(MINI_KB);
    const chunks = chunkKnowledgeBase(kb);
    const embedder = new HashingEmbedder();
    const hash = kbHash(kb);
    await ingest({ client: local.client, chunks, embedder, kbHash: hash });
    const current = await requireCurrentCollection(local.client, { kbHash: hash, embedder, fallbackToLatest: false });
    const paged = await loadExactDenseIndex(current.collection, {
      dimension: embedder.dimension,
      expectedCount: chunks.length,
      pageSize: 3,
    });
    const whole = await openExactDense(current);
    expect(paged.size).toBe(chunks.length);
    const truth = await InMemoryDenseIndex.fromChunks(chunks, embedder);
    for (const q of ["freeze my card", "refund timeline", "chave pix", "congelar tarjeta"]) {
      const v = await embedder.embedQuery(q);
      const want = truth.searchSync(v, { topN: chunks.length }).map((r) => r.id);
      expect((await paged.search(v, { topN: chunks.length })).map((r) => r.id)).toEqual(want);
      expect(await whole.search(v, { topN: 5, locale: "en" })).toEqual(
        await paged.search(v, { topN: 5, locale: "en" }),
      );
    }
  });

  it("refuses a collection holding another number of records than its metadata says (exit 3)", async () => {
    const kb = await loadKnowledgeBase(MINI_KB);
    const embedder = new HashingEmbedder();
    const current = await requireCurrentCollection(local.client, {
      kbHash: kbHash(kb),
      embedder,
      fallbackToLatest: false,
    });
    const err = await loadExactDenseIndex(current.collection, {
      dimension: embedder.dimension,
      expectedCount: current.metadata.chunks + 1,
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ exitCode: 3 });
    expect(String(err)).toMatch(/returned \d+ records .* metadata says \d+/);
  });
});
