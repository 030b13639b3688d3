import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { applyRerank, rerankHead } from "../../src/retrieval/rerank.js";
import type { Ranked, Reranker } from "../../src/retrieval/types.js";

const list = (...ids: string[]): Ranked[] =>
  ids.map((id, i) => ({ id, parentId: id.split("#")[0]!, score: 1 / (61 + i), rank: i + 1 }));

/** A fake cross-encoder (no model can be loaded here): scores a text by how often it contains the query. */
class FakeOverlapReranker implements Reranker {
  readonly id = "fake-overlap-reranker";
  calls: { query: string; texts: string[] }[] = [];
  async score(query: string, texts: string[]): Promise<number[]> {
    this.calls.push({ query, texts });
    return texts.map((t) => t.split(query).length - 1);
  }
}

describe("applyRerank", () => {
  it("reorders the head by score, keeps the tail in fused order, renumbers", () => {
    const fused = Object.freeze(list("a#1", "b#1", "c#1", "d#1", "e#1"));
    const out = applyRerank(fused, 3, [0.1, 0.9, 0.5]);
    expect(out.map((r) => [r.id, r.rank])).toEqual([
      ["b#1", 1],
      ["c#1", 2],
      ["a#1", 3],
      ["d#1", 4],
      ["e#1", 5],
    ]);
    // Head carries the cross-encoder score, tail keeps its fused score.
    expect(out.slice(0, 3).map((r) => r.score)).toEqual([0.9, 0.5, 0.1]);
    expect(out[3]!.score).toBe(fused[3]!.score);
    expect(fused.map((r) => r.id)).toEqual(["a#1", "b#1", "c#1", "d#1", "e#1"]);
  });

  it("breaks score ties by the original rank", () => {
    expect(applyRerank(list("z#1", "a#1", "m#1"), 3, [1, 2, 1]).map((r) => r.id)).toEqual(["a#1", "z#1", "m#1"]);
  });

  it("takes the whole list when the head is larger, and is the identity for head 0", () => {
    expect(applyRerank(list("a#1", "b#1"), 20, [0, 1]).map((r) => r.id)).toEqual(["b#1", "a#1"]);
    const fused = list("a#1", "b#1");
    expect(applyRerank(fused, 0, [])).toEqual(fused);
    expect(applyRerank([], 5, [])).toEqual([]);
  });

  it("rejects a score count that does not match the head, non-finite scores and a bad head size", () => {
    expect(() => applyRerank(list("a#1", "b#1", "c#1"), 2, [1])).toThrow(
      'Expected `scores` to be one score per head entry (2), got "1 scores"',
    );
    expect(() => applyRerank(list("a#1"), 1, [Number.NaN])).toThrow(InvalidArgumentError);
    expect(() => applyRerank(list("a#1"), -1, [])).toThrow("Expected `headSize` to be a non-negative integer, got -1");
  });

  it("only permutes the head: the tail and the set of ids never change", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z]{1,4}#[1-3]$/), { maxLength: 15 }),
        fc.nat({ max: 20 }),
        fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: 20, maxLength: 20 }),
        (ids, headSize, pool) => {
          const fused = list(...ids);
          const n = Math.min(headSize, fused.length);
          const out = applyRerank(fused, headSize, pool.slice(0, n));
          expect(out.slice(n)).toEqual(fused.slice(n));
          expect(
            out
              .slice(0, n)
              .map((r) => r.id)
              .sort(),
          ).toEqual(
            fused
              .slice(0, n)
              .map((r) => r.id)
              .sort(),
          );
          expect(out.map((r) => r.rank)).toEqual(fused.map((_, i) => i + 1));
          for (let i = 1; i < n; i++) expect(out[i - 1]!.score).toBeGreaterThanOrEqual(out[i]!.score);
        },
      ),
      { seed: 42, numRuns: 200 },
    );
  });
});

describe("rerankHead", () => {
  const texts: Record<string, string> = { "a#1": "nothing here", "b#1": "pix pix", "c#1": "pix", "d#1": "pix pix pix" };
  const textOf = (id: string) => texts[id]!;

  it("scores only the head's texts and reorders it", async () => {
    const reranker = new FakeOverlapReranker();
    const out = await rerankHead(reranker, "pix", list("a#1", "b#1", "c#1", "d#1"), 3, textOf);
    expect(reranker.calls).toEqual([{ query: "pix", texts: ["nothing here", "pix pix", "pix"] }]);
    expect(out.map((r) => r.id)).toEqual(["b#1", "c#1", "a#1", "d#1"]);
  });

  it("makes no call for an empty head", async () => {
    const reranker = new FakeOverlapReranker();
    expect(await rerankHead(reranker, "pix", [], 5, textOf)).toEqual([]);
    expect(reranker.calls).toEqual([]);
  });

  it("rejects a reranker returning the wrong number of scores", async () => {
    const broken: Reranker = { id: "broken", score: async () => [1] };
    await expect(rerankHead(broken, "pix", list("a#1", "b#1"), 2, textOf)).rejects.toThrow(
      'Expected `broken scores` to be 2 scores (one per text), got "1 scores"',
    );
  });
});
