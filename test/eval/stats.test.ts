import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import {
  bootstrapCI,
  mean,
  mulberry32,
  pairedComparison,
  permutationTest,
  perTurnScores,
  quantileSorted,
} from "../../src/eval/stats/bootstrap.js";
import { fixtureReport } from "./report-fixture.js";

describe("mulberry32", () => {
  it("is deterministic per seed and yields floats in [0, 1)", () => {
    const a = mulberry32(7);
    const b = mulberry32(7);
    const c = mulberry32(8);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs);
    expect(Array.from({ length: 1000 }, () => c())).not.toEqual(xs);
    for (const x of xs) expect(x >= 0 && x < 1).toBe(true);
    // Roughly uniform: the mean of 1000 draws is near 0.5.
    expect(Math.abs((mean(xs) as number) - 0.5)).toBeLessThan(0.05);
  });
});

describe("quantileSorted (type 7)", () => {
  it("interpolates between order statistics", () => {
    // h = (5 − 1)·0.25 = 1 → x[1] = 2; h = 4·0.1 = 0.4 → 1 + 0.4·(2 − 1) = 1.4
    expect(quantileSorted([1, 2, 3, 4, 5], 0.25)).toBe(2);
    expect(quantileSorted([1, 2, 3, 4, 5], 0.1)).toBeCloseTo(1.4, 12);
    expect(quantileSorted([1, 2, 3, 4, 5], 1)).toBe(5);
    expect(quantileSorted([7], 0.5)).toBe(7);
  });
});

describe("mean", () => {
  it("is null for an empty list, not 0", () => {
    expect(mean([])).toBeNull();
    expect(mean([1, 0, 0, 1])).toBe(0.5);
  });
});

describe("bootstrapCI", () => {
  const values = [1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1]; // 15/20 = 0.75

  it("is reproducible with a seed and changes with another seed", () => {
    const a = bootstrapCI(values, { seed: 1 });
    expect(bootstrapCI(values, { seed: 1 })).toEqual(a);
    // Binary scores give discrete resample means (multiples of 1/20), so two seeds may agree;
    // continuous scores (nDCG-like) show the seed's effect.
    const graded = values.map((v, i) => v * (0.5 + i / 40));
    const g1 = bootstrapCI(graded, { seed: 1 });
    expect(bootstrapCI(graded, { seed: 1 })).toEqual(g1);
    expect(bootstrapCI(graded, { seed: 2 })).not.toEqual(g1);
  });

  it("covers the sample mean, with a sensible width for n = 20", () => {
    const [lo, hi] = bootstrapCI(values, { seed: 42 }) as [number, number];
    expect(lo).toBeLessThan(0.75);
    expect(hi).toBeGreaterThan(0.75);
    // Normal approximation: 0.75 ± 1.96·sqrt(0.75·0.25/20) ≈ 0.75 ± 0.19.
    expect(hi - lo).toBeGreaterThan(0.25);
    expect(hi - lo).toBeLessThan(0.5);
  });

  it("has about 95% frequentist coverage on Bernoulli(0.7) samples", () => {
    const rand = mulberry32(123);
    let covered = 0;
    const trials = 200;
    for (let t = 0; t < trials; t++) {
      const sample = Array.from({ length: 40 }, () => (rand() < 0.7 ? 1 : 0));
      const [lo, hi] = bootstrapCI(sample, { seed: t, samples: 1000 }) as [number, number];
      if (lo <= 0.7 && 0.7 <= hi) covered++;
    }
    // Percentile bootstrap at n = 40 is slightly liberal; expect ~0.92–0.96.
    expect(covered / trials).toBeGreaterThan(0.85);
    expect(covered / trials).toBeLessThanOrEqual(0.99);
  });

  it("is null below 2 values and zero-width for constant values", () => {
    expect(bootstrapCI([])).toBeNull();
    expect(bootstrapCI([1])).toBeNull();
    expect(bootstrapCI([0.5, 0.5, 0.5])).toEqual([0.5, 0.5]);
  });

  it("rejects bad options and values with typed errors", () => {
    expect(() => bootstrapCI([1, 0], { samples: 0 })).toThrow(InvalidArgumentError);
    expect(() => bootstrapCI([1, 0], { alpha: 1 })).toThrow(InvalidArgumentError);
    expect(() => bootstrapCI([1, Number.NaN])).toThrow(InvalidArgumentError);
  });

  it("property: min ≤ lo ≤ hi ≤ max, and the input is not mutated", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 2, maxLength: 30 }),
        fc.integer(),
        (xs, seed) => {
          const copy = [...xs];
          const [lo, hi] = bootstrapCI(xs, { seed, samples: 200 }) as [number, number];
          expect(xs).toEqual(copy);
          return Math.min(...xs) <= lo + 1e-12 && lo <= hi && hi <= Math.max(...xs) + 1e-12;
        },
      ),
      { seed: 42, numRuns: 200 },
    );
  });
});

function map(entries: [string, number][]): Map<string, number> {
  return new Map(entries);
}

describe("pairedComparison (sign-flip randomization test)", () => {
  it("gives p = 1 and diff 0 for identical runs, exact and sampled", () => {
    const small = map([
      ["a", 1],
      ["b", 0],
      ["c", 1],
    ]);
    const r = pairedComparison(small, small);
    expect(r).toMatchObject({ n: 3, meanA: 2 / 3, meanB: 2 / 3, diff: 0, pValue: 1, method: "exact", ci95: [0, 0] });
    const big = map(Array.from({ length: 50 }, (_, i) => [`t${i}`, i % 3 === 0 ? 0 : 1] as [string, number]));
    const s = pairedComparison(big, big, { samples: 500 });
    expect(s?.method).toBe("sampled");
    expect(s?.pValue).toBe(1); // (500 + 1) / (500 + 1)
  });

  it("computes the exact p-value by enumerating 2^n sign vectors (hand-checked)", () => {
    // d = [1,1,1,1,1]: only the all-plus and all-minus vectors reach |Σ| = 5 → p = 2/32.
    const a = map([
      ["a", 0],
      ["b", 0],
      ["c", 0],
      ["d", 0],
      ["e", 0],
    ]);
    const b = map([
      ["a", 1],
      ["b", 1],
      ["c", 1],
      ["d", 1],
      ["e", 1],
    ]);
    const r = pairedComparison(a, b);
    expect(r?.pValue).toBeCloseTo(2 / 32, 12);
    expect(r?.diff).toBe(1);
    // d = [1, −1]: observed |Σ| = 0, every vector reaches it → p = 1.
    expect(
      pairedComparison(
        map([
          ["a", 0],
          ["b", 1],
        ]),
        map([
          ["a", 1],
          ["b", 0],
        ]),
      )?.pValue,
    ).toBe(1);
    // d = [1, 1, 0.5]: |Σ| = 2.5; vectors reaching it: (+,+,+) and (−,−,−) → 2/8.
    expect(
      pairedComparison(
        map([
          ["a", 0],
          ["b", 0],
          ["c", 0],
        ]),
        map([
          ["a", 1],
          ["b", 1],
          ["c", 0.5],
        ]),
      )?.pValue,
    ).toBeCloseTo(0.25, 12);
  });

  it("gives a small p-value for a consistent shift (sampled, +1 corrected)", () => {
    const rand = mulberry32(9);
    const base: [string, number][] = Array.from({ length: 40 }, (_, i) => [`t${i}`, 0.3 + 0.4 * rand()]);
    const shifted: [string, number][] = base.map(([id, v]) => [id, v - 0.1 - 0.05 * rand()]);
    const r = pairedComparison(map(base), map(shifted), { samples: 2000 }) as NonNullable<
      ReturnType<typeof pairedComparison>
    >;
    expect(r.method).toBe("sampled");
    expect(r.diff).toBeLessThan(-0.1);
    expect(r.pValue).toBeGreaterThan(0); // never 0 thanks to the +1 correction
    expect(r.pValue).toBeLessThan(0.001);
    expect((r.ci95 as [number, number])[1]).toBeLessThan(0);
    // Reproducible.
    expect(pairedComparison(map(base), map(shifted), { samples: 2000 })).toEqual(r);
  });

  it("uses only the ids present in both and returns null when there are none", () => {
    const r = pairedComparison(
      map([
        ["a", 1],
        ["b", 1],
        ["only-a", 0],
      ]),
      map([
        ["b", 0],
        ["a", 1],
        ["only-b", 1],
      ]),
    );
    expect(r?.n).toBe(2);
    expect(r?.meanA).toBe(1);
    expect(r?.meanB).toBe(0.5);
    expect(pairedComparison(map([["a", 1]]), map([["b", 1]]))).toBeNull();
  });
});

describe("permutationTest (two-sample, unpaired)", () => {
  it("gives p = 1 for identical groups", () => {
    const r = permutationTest([1, 0, 1, 0], [1, 0, 1, 0], { samples: 300 });
    expect(r).toMatchObject({ nA: 4, nB: 4, diff: 0, pValue: 1 });
  });

  it("gives a small p-value for clearly different groups, and a negative diff CI", () => {
    const a = Array.from({ length: 20 }, (_, i) => (i < 18 ? 1 : 0)); // 0.9
    const b = Array.from({ length: 25 }, (_, i) => (i < 5 ? 1 : 0)); // 0.2
    const r = permutationTest(a, b) as NonNullable<ReturnType<typeof permutationTest>>;
    expect(r.diff).toBeCloseTo(0.2 - 0.9, 12);
    expect(r.pValue).toBeLessThan(0.01);
    expect((r.ci95 as [number, number])[1]).toBeLessThan(0);
    expect(permutationTest(a, b)).toEqual(r);
  });

  it("is not significant for a small difference on small groups", () => {
    const r = permutationTest([1, 1, 0, 1, 0], [1, 0, 0, 1, 0]);
    expect(r?.pValue).toBeGreaterThan(0.3);
  });

  it("returns null for an empty group and leaves inputs untouched", () => {
    const a = [1, 0, 1];
    expect(permutationTest(a, [])).toBeNull();
    permutationTest(a, [0, 0]);
    expect(a).toEqual([1, 0, 1]);
  });
});

describe("perTurnScores + pairedComparison", () => {
  it("pairs per-turn scores by caseId#turn, from a report or a baseline's perTurn map", async () => {
    const report = await fixtureReport();
    // hit@3 per turn: g1#0 1, g1#1 1, g2#1 0, adv1#0 1 (g2#0, adv1#1 empty gold; g3#0 store-less).
    expect(perTurnScores(report, "retrieval_hit_at_k")).toEqual(
      map([
        ["g1#0", 1],
        ["g1#1", 1],
        ["g2#1", 0],
        ["adv1#0", 1],
      ]),
    );
    const baseline = {
      perTurn: {
        "g1#0": { retrieval_hit_at_k: 1 },
        "g1#1": { retrieval_hit_at_k: 1 },
        "g2#1": { retrieval_hit_at_k: 1 },
        "gone#0": { retrieval_hit_at_k: 1 },
      },
    };
    const r = pairedComparison(
      perTurnScores(baseline, "retrieval_hit_at_k"),
      perTurnScores(report, "retrieval_hit_at_k"),
    );
    // Shared turns: g1#0, g1#1, g2#1 → A = [1,1,1], B = [1,1,0]; d = [0,0,−1] → |Σ| = 1;
    // every sign vector reaches 1 → exact p = 1.
    expect(r).toMatchObject({ n: 3, meanA: 1, meanB: 2 / 3, pValue: 1, method: "exact" });
    expect(r?.diff).toBeCloseTo(-1 / 3, 12);
    expect(pairedComparison(perTurnScores(report, "no_such_key"), perTurnScores(report, "no_such_key"))).toBeNull();
  });
});
