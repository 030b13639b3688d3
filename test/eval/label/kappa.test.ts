/**
 * Cohen's κ (src/eval/stats/kappa.ts) against hand-computed examples.
 */
import { describe, expect, it } from "vitest";
import { cohenKappa } from "../../../src/eval/stats/kappa.js";

/** Ratings from a 2×2 table of counts: [[yes/yes, A yes B no], [A no B yes, no/no]]. */
function fromTable(t: number[][]): { a: number[]; b: number[] } {
  const a: number[] = [];
  const b: number[] = [];
  t.forEach((row, i) =>
    row.forEach((n, j) => {
      for (let x = 0; x < n; x++) {
        a.push(i);
        b.push(j);
      }
    }),
  );
  return { a, b };
}

describe("cohenKappa", () => {
  it("gives 0.4 on the textbook 2×2 example (50 items: 20 both yes, 5 A-only yes, 10 B-only yes, 15 both no)", () => {
    // p_o = (20 + 15) / 50 = 0.70; A says yes 25/50, B says yes 30/50:
    // p_e = 0.5·0.6 + 0.5·0.4 = 0.50; κ = (0.70 − 0.50) / (1 − 0.50) = 0.40.
    const { a, b } = fromTable([
      [20, 5],
      [10, 15],
    ]);
    const r = cohenKappa(a, b);
    expect(r.n).toBe(50);
    expect(r.observed).toBeCloseTo(0.7, 12);
    expect(r.expected).toBeCloseTo(0.5, 12);
    expect(r.kappa).toBeCloseTo(0.4, 12);
    expect(r.matrix).toEqual([
      [20, 5],
      [10, 15],
    ]);
  });

  it("is unweighted: a near miss (1 vs 2) counts as much as a far one (0 vs 3)", () => {
    // Four items, grades 0..3: A = [0,1,2,3], B = [0,2,2,3] and C = [3,1,2,3]: one disagreement each.
    // p_o = 3/4 in both. A vs B: A's shares 1/4 each; B: 0→1/4, 2→2/4, 3→1/4: p_e = (1/4)(1/4)+(1/4)(0)+(1/4)(2/4)+(1/4)(1/4) = 4/16 = 0.25, κ = (0.75 − 0.25)/0.75 = 2/3.
    // A vs C: C: 1→1/4, 2→1/4, 3→2/4: p_e = 0 + (1/4)(1/4) + (1/4)(1/4) + (1/4)(2/4) = 4/16 = 0.25, κ = 2/3 as well.
    expect(cohenKappa([0, 1, 2, 3], [0, 2, 2, 3]).kappa).toBeCloseTo(2 / 3, 12);
    expect(cohenKappa([0, 1, 2, 3], [3, 1, 2, 3]).kappa).toBeCloseTo(2 / 3, 12);
  });

  it("is 1 for perfect agreement, negative below chance, null when undefined", () => {
    expect(cohenKappa([0, 1, 2], [0, 1, 2]).kappa).toBe(1);
    // Always disagreeing on two balanced categories: p_o = 0, p_e = 0.5, κ = −1.
    expect(cohenKappa([0, 1, 0, 1], [1, 0, 1, 0]).kappa).toBe(-1);
    // One category used throughout by both: p_e = 1, κ = 0/0.
    expect(cohenKappa([2, 2], [2, 2]).kappa).toBeNull();
    expect(cohenKappa([], []).kappa).toBeNull();
    expect(() => cohenKappa([1], [])).toThrow(RangeError);
  });
});
