import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { holmAdjust } from "../../src/eval/stats/holm.js";
import {
  bootstrapDelta,
  caseOfTurnKey,
  clusterMean,
  ClusterMeanBatch,
  mulberry32,
  pairedBootstrap,
  percentileInterval,
  percentilePValue,
  quantileSorted,
  type ClusteredValue,
} from "../../src/eval/stats/bootstrap.js";

const cv = (cluster: string, ...values: number[]): ClusteredValue[] => values.map((value) => ({ cluster, value }));

describe("holmAdjust (Holm 1979)", () => {
  it("step-down adjustment, hand-computed, in input order", () => {
    // sorted: 0.005 ×4 = 0.02; 0.01 ×3 = 0.03; 0.03 ×2 = 0.06; 0.04 ×1 = 0.04 → running max 0.06
    const adj = holmAdjust([0.01, 0.04, 0.03, 0.005]);
    [0.03, 0.06, 0.06, 0.02].forEach((x, i) => expect(adj[i]).toBeCloseTo(x, 12));
    expect(holmAdjust([0.5, 0.6])).toEqual([1, 1]); // capped at 1
    expect(holmAdjust([0.02])).toEqual([0.02]); // a family of one is not adjusted
    expect(holmAdjust([])).toEqual([]);
  });

  it("never lowers a p-value and rejects invalid ones", () => {
    const ps = [0.001, 0.2, 0.049, 0.7, 0.049];
    holmAdjust(ps).forEach((a, i) => expect(a).toBeGreaterThanOrEqual(ps[i] as number));
    expect(() => holmAdjust([0.1, 1.5])).toThrow(InvalidArgumentError);
    expect(() => holmAdjust([Number.NaN])).toThrow(InvalidArgumentError);
  });
});

describe("percentilePValue (inverting the percentile interval)", () => {
  it("hand-computed: replicates −1, 1, 2, 3, 4 cross 0 at h = 0.5 of 4 → p = 2·0.125", () => {
    const sorted = [-1, 1, 2, 3, 4];
    expect(percentilePValue(sorted)).toBeCloseTo(0.25, 12);
    // At α = 0.25 the interval touches 0; just above, it excludes it.
    expect(percentileInterval(sorted, 0.25)[0]).toBeCloseTo(0, 12);
    expect(percentileInterval(sorted, 0.26)[0]).toBeGreaterThan(0);
  });

  it("all replicates 0 → p = 1; all of one sign → the floor 1/B", () => {
    expect(percentilePValue([0, 0, 0])).toBe(1);
    expect(percentilePValue([0.1, 0.2, 0.3, 0.4])).toBe(0.25);
    expect(percentilePValue([-0.4, -0.1])).toBe(0.5);
  });

  it("property (seeded): for every α > 1/B, p < α exactly when the (1 − α) interval excludes 0", () => {
    const rand = mulberry32(7);
    const alphas = [0.01, 0.05, 0.1, 0.2, 0.5];
    for (let trial = 0; trial < 400; trial++) {
      const B = 50 + Math.floor(rand() * 150);
      const shift = (rand() - 0.5) * 2;
      // Rounded to a coarse grid so that ties and exact zeros occur.
      const xs = Array.from({ length: B }, () => Math.round((shift + (rand() - 0.5) * 2) * 8) / 8).sort(
        (a, b) => a - b,
      );
      const p = percentilePValue(xs);
      for (const alpha of alphas) {
        if (alpha <= 1 / B) continue;
        const lo = quantileSorted(xs, alpha / 2);
        const hi = quantileSorted(xs, 1 - alpha / 2);
        const excludes = lo > 0 || hi < 0;
        // An endpoint exactly at 0 with p exactly α is a tie that float rounding of α/2 decides either way.
        if (Math.abs(p - alpha) < 1e-9) continue;
        if (excludes !== p < alpha) expect.fail(`B=${B} α=${alpha} p=${p} interval=[${lo}, ${hi}]`);
      }
    }
  });
});

describe("clusterMean", () => {
  it("the estimate is the turn-weighted mean; n counts turns and nCases cases", () => {
    const values = [...cv("a", 1, 1, 1), ...cv("b", 0)];
    const m = clusterMean(values, { unit: "case" })!;
    expect(m).toMatchObject({ mean: 0.75, n: 4, nCases: 2, unit: "case" });
    expect(clusterMean(values, { unit: "turn" })?.mean).toBe(0.75);
    expect(clusterMean([])).toBeNull();
    expect(clusterMean(cv("a", 1, 0))?.ci95).toBeNull(); // one case: nothing to resample at case level
    expect(clusterMean(cv("a", 1, 0), { unit: "turn" })?.ci95).not.toBeNull();
  });

  it("with one turn per case, both units resample the same units and give the same interval", () => {
    const values = [0, 1, 1, 0, 1, 1, 1, 0, 1, 1].map((v, i) => ({ cluster: `c${i}`, value: v }));
    expect(clusterMean(values, { unit: "case" })?.ci95).toEqual(clusterMean(values, { unit: "turn" })?.ci95);
  });

  it("does not depend on the order of the input", () => {
    const values = [...cv("a", 1, 0, 1), ...cv("b", 0, 0), ...cv("c", 1), ...cv("d", 1, 1, 0, 1)];
    const shuffled = [
      values[5]!,
      values[0]!,
      values[9]!,
      values[2]!,
      values[7]!,
      values[1]!,
      values[8]!,
      values[3]!,
      values[6]!,
      values[4]!,
    ];
    expect(clusterMean(shuffled)).toEqual(clusterMean(values));
  });

  it("is wider by case than by turn when a case's turns are identical (perfect within-case correlation)", () => {
    const values: ClusteredValue[] = [];
    for (let c = 0; c < 20; c++)
      values.push(...cv(`c${String(c).padStart(2, "0")}`, ...Array(5).fill(c % 3 === 0 ? 0 : 1)));
    const [cl, ch] = clusterMean(values, { unit: "case" })!.ci95!;
    const [tl, th] = clusterMean(values, { unit: "turn" })!.ci95!;
    // 20 independent cases vs 100 "independent" turns: about √5 ≈ 2.2 times wider.
    expect((ch - cl) / (th - tl)).toBeGreaterThan(1.8);
  });
});

describe("bootstrapDelta and pairedBootstrap", () => {
  it("bootstrapDelta: B − A of turn-weighted means, with the case counts; no CI from one case", () => {
    const a = [...cv("a1", 1, 1), ...cv("a2", 0)];
    const b = [...cv("b1", 0, 0, 0), ...cv("b2", 1)];
    const d = bootstrapDelta(a, b)!;
    expect(d).toMatchObject({ nA: 3, nB: 4, nCasesA: 2, nCasesB: 2, unit: "case" });
    expect(d.diff).toBeCloseTo(1 / 4 - 2 / 3, 12);
    expect(bootstrapDelta(a, [])).toBeNull();
    expect(bootstrapDelta(a, cv("b1", 0, 1))).toMatchObject({ pValue: 1, ci95: null });
  });

  it("bootstrapDelta: a clear gap between many cases is significant and its interval excludes 0", () => {
    const a: ClusteredValue[] = [];
    const b: ClusteredValue[] = [];
    for (let c = 0; c < 30; c++) {
      a.push(...cv(`a${c}`, 1, c % 10 === 0 ? 0 : 1));
      b.push(...cv(`b${c}`, c % 2, 0));
    }
    const d = bootstrapDelta(a, b)!;
    expect(d.ci95![1]).toBeLessThan(0);
    expect(d.pValue).toBeLessThan(0.05);
  });

  it("pairedBootstrap groups `caseId#turn` keys by case; identical runs give [0, 0] and p = 1", () => {
    expect(caseOfTurnKey("en-refund-003#1")).toBe("en-refund-003");
    expect(caseOfTurnKey("a#b#2")).toBe("a#b");
    const a = new Map([
      ["x#0", 1],
      ["x#1", 0],
      ["y#0", 1],
      ["only-a#0", 1],
    ]);
    const same = pairedBootstrap(a, new Map(a))!;
    expect(same).toMatchObject({ n: 4, nCases: 3, diff: 0, ci95: [0, 0], pValue: 1 });
    const b = new Map([
      ["x#0", 1],
      ["x#1", 1],
      ["y#0", 1],
      ["only-b#0", 0],
    ]);
    const r = pairedBootstrap(a, b)!;
    expect(r).toMatchObject({ n: 3, nCases: 2, meanA: 2 / 3, meanB: 1 });
    expect(r.diff).toBeCloseTo(1 / 3, 12);
    expect(pairedBootstrap(new Map([["p#0", 1]]), new Map([["q#0", 1]]))).toBeNull();
  });
});

describe("ClusterMeanBatch (many clusterMeans sharing one stream of draws)", () => {
  const rand = mulberry32(7);
  const list = (cases: number, turnsPer: number, graded: boolean): ClusteredValue[] => {
    const out: ClusteredValue[] = [];
    for (let c = 0; c < cases; c++)
      for (let t = 0; t < 1 + (c % turnsPer); t++)
        out.push({ cluster: `case-${c}`, value: graded ? rand() : rand() < 0.5 ? 1 : 0 });
    return out;
  };
  // Lists of the same unit count (shared draws), a duplicate, different counts, one unit, and an empty list.
  const a = list(30, 3, true);
  const lists = [a, list(30, 3, false), [...a], list(30, 1, true), list(17, 2, true), list(1, 3, true), []];

  for (const unit of ["case", "turn"] as const)
    it(`gives exactly what clusterMean gives each list (unit ${unit})`, () => {
      const opts = { seed: 11, samples: 500, unit };
      const batch = new ClusterMeanBatch(opts);
      const got: unknown[] = [];
      const pending = lists.map((l, i) =>
        batch.add(l, (ci95) => {
          got[i] = ci95;
        }),
      );
      expect(got).toEqual([]); // nothing computed before run()
      batch.run();
      lists.forEach((l, i) => {
        const want = clusterMean(l, opts);
        if (want === null) {
          expect(pending[i]).toBeNull();
          return;
        }
        expect(pending[i]).toEqual({ mean: want.mean, n: want.n, nCases: want.nCases, unit });
        // Bit for bit: toEqual on numbers is Object.is.
        expect(got[i]).toEqual(want.ci95);
      });
    });

  it("gives exactly what clusterMean gives each of more lists than one lane group holds (9 of 40 units)", () => {
    const opts = { seed: 5, samples: 300 };
    const many = Array.from({ length: 9 }, (_, i) => list(40, 1 + (i % 4), i % 3 !== 0));
    const batch = new ClusterMeanBatch(opts);
    const got: unknown[] = [];
    many.forEach((l, i) =>
      batch.add(l, (ci95) => {
        got[i] = ci95;
      }),
    );
    batch.run();
    many.forEach((l, i) => expect(got[i]).toEqual(clusterMean(l, opts)!.ci95));
    expect(new Set(got.map((g) => JSON.stringify(g))).size).toBeGreaterThan(1);
  });
});
