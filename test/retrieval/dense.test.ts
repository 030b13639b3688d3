import { describe, expect, it } from "vitest";
import { DimensionMismatchError, InvalidArgumentError } from "../../src/errors.js";
import type { Locale } from "../../src/kb/types.js";
import { InMemoryDenseIndex, cosineSimilarity, type DenseEntry, type DenseIndex } from "../../src/retrieval/dense.js";
import { HashingEmbedder } from "../../src/retrieval/embedders/builtin.js";

const entry = (id: string, vector: number[], locale: Locale = "en"): DenseEntry => ({
  id,
  parentId: id.split("#")[0]!,
  locale,
  vector,
});

describe("cosineSimilarity", () => {
  it("is the normalised dot product, 0 for a zero vector", () => {
    expect(cosineSimilarity([1, 0], [0, 1])).toBe(0);
    expect(cosineSimilarity([1, 1], [2, 2])).toBeCloseTo(1, 15);
    expect(cosineSimilarity([1, 0], [-3, 0])).toBeCloseTo(-1, 15);
    // (3·4 + 4·3) / (5 · 5) = 24 / 25
    expect(cosineSimilarity([3, 4], [4, 3])).toBeCloseTo(0.96, 15);
    expect(cosineSimilarity([0, 0], [1, 2])).toBe(0);
    expect(() => cosineSimilarity([1], [1, 2])).toThrow(DimensionMismatchError);
  });
});

describe("InMemoryDenseIndex", () => {
  const index: DenseIndex & InMemoryDenseIndex = new InMemoryDenseIndex([
    entry("a#1", [1, 0, 0]),
    entry("b#1", [0.6, 0.8, 0]), // cos with [1,0,0] = 0.6
    entry("c#1", [2, 0, 0]), // same direction as a#1: ties with it at 1
    entry("es#1", [1, 0, 0], "es-419"),
    entry("z#1", [0, 0, 5]),
  ]);

  it("ranks by cosine similarity, ties by id, ranks 1-based", async () => {
    const hits = await index.search([3, 0, 0], { topN: 10 });
    expect(hits.map((h) => h.id)).toEqual(["a#1", "c#1", "es#1", "b#1", "z#1"]);
    expect(hits.map((h) => h.score)).toEqual([
      expect.closeTo(1, 12),
      expect.closeTo(1, 12),
      expect.closeTo(1, 12),
      expect.closeTo(0.6, 12),
      expect.closeTo(0, 12),
    ]);
    expect(hits.map((h) => h.rank)).toEqual([1, 2, 3, 4, 5]);
    expect(hits[3]!.parentId).toBe("b");
  });

  it("cuts at topN and filters by locale", async () => {
    expect((await index.search([1, 0, 0], { topN: 2 })).map((h) => h.id)).toEqual(["a#1", "c#1"]);
    expect((await index.search([1, 0, 0], { topN: 10, locale: "es-419" })).map((h) => h.id)).toEqual(["es#1"]);
    expect(await index.search([1, 0, 0], { topN: 10, locale: "pt-BR" })).toEqual([]);
    expect(index.size).toBe(5);
    expect(index.name).toBe("memory");
  });

  it("rejects wrong dimensions, bad topN, duplicate ids", async () => {
    await expect(index.search([1, 0], { topN: 1 })).rejects.toThrow(DimensionMismatchError);
    await expect(index.search([1, 0, 0], { topN: 0 })).rejects.toThrow(
      "Expected `topN` to be a positive integer, got 0",
    );
    expect(() => new InMemoryDenseIndex([entry("a#1", [1]), entry("a#1", [2])])).toThrow(InvalidArgumentError);
    expect(() => new InMemoryDenseIndex([entry("a#1", [1]), entry("b#1", [1, 2])])).toThrow(DimensionMismatchError);
    expect(() => new InMemoryDenseIndex([])).toThrow(InvalidArgumentError);
    expect(new InMemoryDenseIndex([], { dimension: 4 }).size).toBe(0);
  });

  it("builds from chunks with an embedder, in batches, keeping order and parents", async () => {
    const embedder = new HashingEmbedder();
    const chunks = [
      { id: "card-freeze#1", parentId: "card-freeze", locale: "en" as const, text: "Freeze your card from the app" },
      { id: "fees#1", parentId: "fees", locale: "en" as const, text: "Monthly fees and ATM fees" },
      {
        id: "es-congelar-tarjeta#1",
        parentId: "es-congelar-tarjeta",
        locale: "es-419" as const,
        text: "Congelar tu tarjeta",
      },
    ];
    const idx = await InMemoryDenseIndex.fromChunks(chunks, embedder, { batchSize: 2 });
    expect(idx.dimension).toBe(384);
    const hits = await idx.search(await embedder.embedQuery("freeze card"), { topN: 3, locale: "en" });
    expect(hits.map((h) => h.id)).toEqual(["card-freeze#1", "fees#1"]);
    expect(hits[0]!.parentId).toBe("card-freeze");
    const self = await idx.search(await embedder.embedQuery("Congelar tu tarjeta"), { topN: 1 });
    expect(self[0]).toEqual({
      id: "es-congelar-tarjeta#1",
      parentId: "es-congelar-tarjeta",
      score: expect.closeTo(1, 12),
      rank: 1,
    });
  });
});
