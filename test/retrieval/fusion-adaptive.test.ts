import { describe, expect, it } from "vitest";
import { adaptiveFusion, adaptiveWeights, fuse, headConfidence, minMaxFusion } from "../../src/retrieval/fusion.js";
import type { Ranked } from "../../src/retrieval/types.js";

const list = (...pairs: [string, number][]): Ranked[] =>
  pairs.map(([id, score], i) => ({ id, parentId: id, score, rank: i + 1 }));

describe("headConfidence (1 − normalised entropy of the top scores' shifted mass)", () => {
  it("is 1 when one entry holds the head's mass, 0 for a flat head or fewer than 3 entries", () => {
    expect(headConfidence([1, 0, 0, 0])).toBe(1);
    expect(headConfidence([2, 2, 2])).toBe(0);
    expect(headConfidence([5, 1])).toBe(0);
    expect(headConfidence([])).toBe(0);
  });

  it("matches a hand computation and ignores scale, offset and order", () => {
    // [3, 2, 1]: shifted by the last → [2, 1], p = [2/3, 1/3], H = 0.636514, ln 2 = 0.693147 → c = 1 − 0.918296 = 0.081704.
    expect(headConfidence([3, 2, 1])).toBeCloseTo(0.081704, 6);
    expect(headConfidence([1, 3, 2])).toBeCloseTo(0.081704, 6);
    expect(headConfidence([30 + 7, 20 + 7, 10 + 7])).toBeCloseTo(0.081704, 6);
  });

  it("reads only the top n", () => {
    // top 3 of [1, 0, 0, 5, 5]: [5, 5, 1] → shifted [4, 4] → flat → 0.
    expect(headConfidence([1, 0, 0, 5, 5], 3)).toBe(0);
  });
});

describe("adaptiveFusion", () => {
  const dense = list(["a", 1], ["b", 0], ["c", 0], ["d", 0]); // confidence 1
  const bm25 = list(["c", 2], ["b", 2], ["a", 2]); // confidence 0

  it("w'_l = w_l · exp(β · c_l)", () => {
    const w = adaptiveWeights(
      [
        { name: "dense", ranked: dense, weight: 0.5 },
        { name: "bm25", ranked: bm25, weight: 0.5 },
      ],
      { beta: 1 },
    );
    expect(w[0]).toBeCloseTo(0.5 * Math.E, 12);
    expect(w[1]).toBeCloseTo(0.5, 12);
  });

  it("β = 0 is min-max CombSUM; fuse() dispatches 'adaptive' with the shipped β", () => {
    const lists = [
      { name: "dense", ranked: list(["a", 0.9], ["b", 0.5], ["c", 0.4]), weight: 0.4 },
      { name: "bm25", ranked: list(["c", 9], ["a", 3], ["d", 1]), weight: 0.6 },
    ];
    expect(adaptiveFusion(lists, { beta: 0 }).map((r) => [r.id, r.score])).toEqual(
      minMaxFusion(lists).map((r) => [r.id, r.score]),
    );
    expect(fuse(lists, { method: "adaptive" }).map((r) => r.id)).toEqual(adaptiveFusion(lists).map((r) => r.id));
  });

  it("a confident list wins a query that min-max with equal weights ties; contributions add up; inputs untouched", () => {
    // Equal weights: a = 1 (dense) + 1 (bm25, tied list normalises to 1) = 2; c = 0 + 1 = 1 … with β = 1 the dense list counts e times more.
    const lists = [
      { name: "dense", ranked: dense, weight: 1 },
      { name: "bm25", ranked: bm25, weight: 1 },
    ];
    const before = JSON.stringify(lists);
    const fused = adaptiveFusion(lists, { beta: 1 });
    expect(fused[0]?.id).toBe("a");
    expect(fused[0]?.score).toBeCloseTo(Math.E + 1, 12);
    for (const r of fused) expect(r.contributions.reduce((s, c) => s + c.value, 0)).toBeCloseTo(r.score, 12);
    expect(JSON.stringify(lists)).toBe(before);
    expect(() => adaptiveFusion(lists, { beta: -1 })).toThrow(/beta/);
  });
});
