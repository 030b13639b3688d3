import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import {
  FUSION_METHODS,
  combMnzFusion,
  fuse,
  minMaxFusion,
  minMaxNormalize,
  reciprocalRankFusion,
  zScoreFusion,
  zScoreNormalize,
  type FusedRanked,
  type FusionInput,
  type FusionMethod,
} from "../../src/retrieval/fusion.js";
import type { Ranked } from "../../src/retrieval/types.js";

/** A ranked list from [id, score] pairs in rank order. */
const scored = (...pairs: [string, number][]): Ranked[] =>
  pairs.map(([id, score], i) => ({ id, parentId: id.split("#")[0]!, score, rank: i + 1 }));

// dense: a 0.9, b 0.5, c 0.1      bm25: b 12, d 6, a 3
const dense = scored(["a", 0.9], ["b", 0.5], ["c", 0.1]);
const bm25 = scored(["b", 12], ["d", 6], ["a", 3]);
const ids = (f: FusedRanked[]) => f.map((r) => r.id);
const byId = (f: FusedRanked[]) => Object.fromEntries(f.map((r) => [r.id, r.score]));

describe("min-max CombSUM: hand-checked", () => {
  it("normalises over each list's candidates and takes the convex combination", () => {
    // dense: min 0.1, max 0.9 → a (0.9−0.1)/0.8 = 1, b (0.5−0.1)/0.8 = 0.5, c 0
    // bm25:  min 3, max 12    → b 1, d (6−3)/9 = 1/3, a 0
    // α = 0.3: a 0.3·1 + 0.7·0 = 0.3 ; b 0.3·0.5 + 0.7·1 = 0.85 ; c 0.3·0 = 0 ; d 0.7·(1/3) = 0.2333…
    const f = minMaxFusion([
      { name: "dense", ranked: dense, weight: 0.3 },
      { name: "bm25", ranked: bm25, weight: 0.7 },
    ]);
    expect(ids(f)).toEqual(["b", "a", "d", "c"]);
    const s = byId(f);
    expect(s.a).toBeCloseTo(0.3, 12);
    expect(s.b).toBeCloseTo(0.85, 12);
    expect(s.c).toBe(0);
    expect(s.d).toBeCloseTo(0.7 / 3, 12);
    // contributions: b got 0.15 from dense and 0.7 from bm25
    const b = f.find((r) => r.id === "b")!;
    expect(b.contributions.map((c) => [c.list, c.rank, c.normalized, c.value])).toEqual([
      ["bm25", 1, 1, 0.7],
      ["dense", 2, 0.5, 0.15],
    ]);
  });

  it("single-item and all-tied lists normalise to 1", () => {
    expect(minMaxNormalize([7])).toEqual([1]);
    expect(minMaxNormalize([2, 2, 2])).toEqual([1, 1, 1]);
    expect(minMaxNormalize([])).toEqual([]);
    // tie a = b = 1 in the fused score: broken by id
    const f = minMaxFusion([{ name: "d", ranked: scored(["b", 5], ["a", 5]) }]);
    expect(f.map((r) => [r.id, r.score, r.rank])).toEqual([
      ["a", 1, 1],
      ["b", 1, 2],
    ]);
  });
});

describe("z-score CombSUM: hand-checked", () => {
  it("standardises each list with its population σ and sums", () => {
    // dense μ = 0.5, deviations 0.4, 0, −0.4 → σ = √(0.32/3) = 0.326599 → z a 1.224745, b 0, c −1.224745
    // bm25 μ = 7, deviations 5, −1, −4 → σ = √(42/3) = √14 = 3.741657 → z b 1.336306, d −0.267261, a −1.069045
    // a 1.224745 − 1.069045 = 0.155700 ; b 0 + 1.336306 ; c −1.224745 ; d −0.267261
    const f = zScoreFusion([
      { name: "dense", ranked: dense },
      { name: "bm25", ranked: bm25 },
    ]);
    expect(ids(f)).toEqual(["b", "a", "d", "c"]);
    const s = byId(f);
    expect(s.a).toBeCloseTo(0.1557, 4);
    expect(s.b).toBeCloseTo(1.336306, 5);
    expect(s.c).toBeCloseTo(-1.224745, 5);
    expect(s.d).toBeCloseTo(-0.267261, 5);
  });

  it("σ = 0 (single item or all tied) gives 0", () => {
    expect(zScoreNormalize([3])).toEqual([0]);
    expect(zScoreNormalize([1, 1])).toEqual([0, 0]);
    // [1, 3]: μ 2, σ 1 → −1, 1
    expect(zScoreNormalize([1, 3])).toEqual([-1, 1]);
  });
});

describe("CombMNZ: hand-checked", () => {
  it("multiplies the min-max sum by the number of lists that returned the id", () => {
    // a: 2 lists × (1 + 0) = 2 ; b: 2 × (0.5 + 1) = 3 ; c: 1 × 0 = 0 ; d: 1 × 1/3
    const f = combMnzFusion([
      { name: "dense", ranked: dense },
      { name: "bm25", ranked: bm25 },
    ]);
    expect(ids(f)).toEqual(["b", "a", "d", "c"]);
    const s = byId(f);
    expect(s.a).toBe(2);
    expect(s.b).toBe(3);
    expect(s.c).toBe(0);
    expect(s.d).toBeCloseTo(1 / 3, 12);
    // contributions are already multiplied: b = 2·0.5 (dense) + 2·1 (bm25)
    expect(f.find((r) => r.id === "b")!.contributions.map((c) => c.value)).toEqual([2, 1]);
  });

  it("a weight-0 list does not count in the multiplier", () => {
    // a: only dense counts → 1 × 1 = 1 ; b: 1 × 0.5 ; bm25's 0-weight hits add 0
    const f = combMnzFusion([
      { name: "dense", ranked: dense },
      { name: "bm25", ranked: bm25, weight: 0 },
    ]);
    expect(byId(f).a).toBe(1);
    expect(byId(f).b).toBe(0.5);
  });
});

describe("weighted RRF: contributions", () => {
  it("records w/(k + rank) per list", () => {
    // k = 10, dense weight 2: a = 2/11 + 1/13 ; b = 2/12 + 1/11
    const f = reciprocalRankFusion(
      [
        { name: "dense", ranked: dense, weight: 2 },
        { name: "bm25", ranked: bm25 },
      ],
      { k: 10 },
    );
    const a = f.find((r) => r.id === "a")!;
    expect(a.score).toBeCloseTo(2 / 11 + 1 / 13, 14);
    expect(a.contributions).toEqual([
      { list: "bm25", rank: 3, score: 3, normalized: 1 / 13, weight: 1, value: 1 / 13 },
      { list: "dense", rank: 1, score: 0.9, normalized: 1 / 11, weight: 2, value: 2 / 11 },
    ]);
  });
});

describe("fuse()", () => {
  it("dispatches by name and rejects unknown methods and bad scores", () => {
    const lists: FusionInput[] = [{ name: "dense", ranked: dense }];
    expect(fuse(lists, { method: "combmnz" })).toEqual(combMnzFusion(lists));
    expect(fuse(lists, { method: "rrf", rrfK: 5 })).toEqual(reciprocalRankFusion(lists, { k: 5 }));
    expect(() => fuse(lists, { method: "borda" as FusionMethod })).toThrow(InvalidArgumentError);
    const nan: Ranked[] = [{ id: "a", parentId: "a", score: Number.NaN, rank: 1 }];
    expect(() => minMaxFusion([{ name: "dense", ranked: nan }])).toThrow("score of a in dense");
  });
});

// ---- properties (seeded) ----
const idArb = fc.constantFrom("a", "b", "c", "d", "e", "f", "g", "h");
const listArb = fc
  .uniqueArray(fc.tuple(idArb, fc.integer({ min: -50, max: 50 })), { selector: (t) => t[0], maxLength: 8 })
  .map((pairs) => scored(...[...pairs].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))));
const inputsArb = fc.array(
  fc.record({ name: fc.constantFrom("dense", "bm25", "x"), ranked: listArb, weight: fc.constantFrom(0, 0.25, 1, 2) }),
  { maxLength: 3 },
);
const RUNS = { seed: 7, numRuns: 150 };

describe.each(FUSION_METHODS)("%s: properties", (method) => {
  it("is independent of list order, keyed by id, ordered by score then id, and leaves inputs untouched", () => {
    fc.assert(
      fc.property(inputsArb, (lists) => {
        const before = structuredClone(lists);
        const base = fuse(lists, { method });
        expect(fuse([...lists].reverse(), { method })).toEqual(base);
        expect(lists).toEqual(before);
        const all = new Set(lists.flatMap((l) => l.ranked.map((r) => r.id)));
        expect(base.map((r) => r.id).sort()).toEqual([...all].sort());
        for (let i = 1; i < base.length; i++) {
          const p = base[i - 1]!;
          const c = base[i]!;
          expect(p.score > c.score || (p.score === c.score && p.id < c.id)).toBe(true);
          expect(c.rank).toBe(i + 1);
        }
        for (const r of base) {
          const sum = r.contributions.reduce((s, c) => s + c.value, 0);
          expect(r.score).toBeCloseTo(sum, 9);
        }
      }),
      RUNS,
    );
  });
});

describe("score-based methods: properties", () => {
  it("min-max scores lie in [0, Σ weights]; CombMNZ never ranks an id below its min-max score", () => {
    fc.assert(
      fc.property(inputsArb, (lists) => {
        const total = lists.reduce((s, l) => s + l.weight, 0);
        const mm = minMaxFusion(lists);
        for (const r of mm) {
          expect(r.score).toBeGreaterThanOrEqual(0);
          expect(r.score).toBeLessThanOrEqual(total + 1e-12);
        }
        const mnz = byId(combMnzFusion(lists));
        for (const r of mm) expect(mnz[r.id]).toBeGreaterThanOrEqual(r.score - 1e-12);
      }),
      RUNS,
    );
  });

  it("normalisation is invariant to a positive affine change of a list's scores", () => {
    fc.assert(
      fc.property(listArb, fc.integer({ min: 1, max: 9 }), fc.integer({ min: -100, max: 100 }), (ranked, a, b) => {
        const moved = ranked.map((r) => ({ ...r, score: a * r.score + b }));
        for (const f of [minMaxFusion, zScoreFusion]) {
          const x = f([{ name: "d", ranked }]);
          const y = f([{ name: "d", ranked: moved }]);
          expect(y.map((r) => r.id)).toEqual(x.map((r) => r.id));
          y.forEach((r, i) => expect(r.score).toBeCloseTo(x[i]!.score, 9));
        }
      }),
      RUNS,
    );
  });
});
