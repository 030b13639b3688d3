import { describe, expect, it } from "vitest";
import { kendallTauB } from "../../src/eval/stats/kendall.js";
import { tauInterval } from "../../src/app/beir-synthetic.js";

describe("Kendall's τ-b", () => {
  it("is +1 for the same order, −1 for the reverse", () => {
    expect(kendallTauB([1, 2, 3, 4], [10, 20, 30, 40])).toBe(1);
    expect(kendallTauB([1, 2, 3, 4], [4, 3, 2, 1])).toBe(-1);
  });

  it("matches the hand count with ties", () => {
    // x = [1,2,2,3], y = [1,3,2,3]: pairs (6): (0,1) C, (0,2) C, (0,3) C, (1,2) tie x, (1,3) D? x 2<3, y 3=3 → tie y, (2,3) C.
    // C = 4, D = 0, tiesX = 1, tiesY = 1 → 4 / √(5·5) = 0.8. Checked by hand; scipy gives 0.8 too.
    expect(kendallTauB([1, 2, 2, 3], [1, 3, 2, 3])).toBeCloseTo(0.8, 12);
    // One swap among 4: C = 5, D = 1 → 4/6.
    expect(kendallTauB([1, 2, 3, 4], [2, 1, 3, 4])).toBeCloseTo(4 / 6, 12);
  });

  it("is undefined for a constant vector or fewer than two items", () => {
    expect(kendallTauB([1, 1, 1], [1, 2, 3])).toBeNull();
    expect(kendallTauB([1], [1])).toBeNull();
    expect(() => kendallTauB([1, 2], [1])).toThrow(RangeError);
  });
});

describe("the bootstrap interval of τ", () => {
  it("covers +1 tightly when both query sets order the systems alike, and is seeded", () => {
    // Three systems, clearly separated on every query of both sets.
    const real = [Array(20).fill(0.1), Array(20).fill(0.5), Array(20).fill(0.9)];
    const syn = [Array(30).fill(0.2), Array(30).fill(0.4), Array(30).fill(0.6)];
    expect(tauInterval(real, syn, 7, 200)).toEqual([1, 1]);
    // Two real systems with the same mean and opposite per-query scores: resampling flips their order, so the interval widens.
    const noisyReal = [
      Array.from({ length: 21 }, (_, i) => i % 2),
      Array.from({ length: 21 }, (_, i) => (i + 1) % 2),
      Array(21).fill(0.9),
    ];
    const a = tauInterval(noisyReal, syn, 7, 200);
    expect(a).toEqual(tauInterval(noisyReal, syn, 7, 200));
    expect(a![0]).toBeLessThan(1);
    expect(tauInterval([[1]], syn, 7)).toBeNull();
  });
});
