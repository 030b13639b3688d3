import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { dedupeParents, topK } from "../../src/retrieval/parents.js";
import type { Ranked } from "../../src/retrieval/types.js";

const r = (id: string, score: number, rank: number, parentId = id.split("#")[0]!): Ranked => ({
  id,
  parentId,
  score,
  rank,
});

describe("dedupeParents", () => {
  it("keeps the first chunk of each card, at its position, with its score", () => {
    const ranked = Object.freeze([
      r("b#2", 0.9, 1),
      r("a#1", 0.8, 2),
      r("b#1", 0.7, 3),
      r("c#4", 0.6, 4),
      r("a#3", 0.5, 5),
    ]);
    expect(dedupeParents(ranked)).toEqual([
      { id: "b", parentId: "b", score: 0.9, rank: 1 },
      { id: "a", parentId: "a", score: 0.8, rank: 2 },
      { id: "c", parentId: "c", score: 0.6, rank: 3 },
    ]);
    expect(ranked.map((x) => x.id)).toEqual(["b#2", "a#1", "b#1", "c#4", "a#3"]);
  });

  it("falls back to the chunk id when there is no parent id", () => {
    expect(dedupeParents([r("solo", 1, 1, ""), r("solo", 0.5, 2, "")]).map((x) => x.id)).toEqual(["solo"]);
  });

  it("yields each card once, in first-occurrence order, ranks 1..n", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("a", "b", "c", "d", "e"), fc.nat({ max: 5 })), { maxLength: 20 }),
        (pairs) => {
          const ranked = pairs.map(([card, n], i) => r(`${card}#${n}`, 1 / (i + 1), i + 1));
          const out = dedupeParents(ranked);
          const firstOrder = [...new Set(ranked.map((x) => x.parentId))];
          expect(out.map((x) => x.id)).toEqual(firstOrder);
          expect(out.map((x) => x.rank)).toEqual(firstOrder.map((_, i) => i + 1));
          for (const x of out) expect(x.score).toBe(ranked.find((y) => y.parentId === x.id)!.score);
        },
      ),
      { seed: 42, numRuns: 200 },
    );
  });
});

describe("topK", () => {
  it("cuts at k, copies, and accepts k beyond the length", () => {
    const ranked = [r("a", 3, 1), r("b", 2, 2), r("c", 1, 3)];
    const top = topK(ranked, 2);
    expect(top.map((x) => x.id)).toEqual(["a", "b"]);
    top[0]!.score = 99;
    expect(ranked[0]!.score).toBe(3);
    expect(topK(ranked, 10)).toHaveLength(3);
    expect(topK(ranked, 0)).toEqual([]);
    expect(() => topK(ranked, 1.5)).toThrow(InvalidArgumentError);
  });
});
