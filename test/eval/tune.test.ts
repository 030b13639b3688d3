import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { ndcgAtK } from "../../src/eval/measures/metrics.js";
import {
  DEFAULT_GRID,
  alphaOf,
  assignFolds,
  bestCandidate,
  bm25Key,
  candidateKey,
  crossValidate,
  expandGrid,
  gridAround,
  scoreMatrix,
  scoreUnit,
  type Candidate,
  type TuneUnit,
} from "../../src/research/tune.js";
import { TUNE_MIN_GAIN, crossValidateCandidates, tuneDecision } from "../../src/app/tune.js";
import type { Ranked } from "../../src/retrieval/types.js";

const list = (...pairs: [string, number][]): Ranked[] =>
  pairs.map(([id, score], i) => ({ id, parentId: id, score, rank: i + 1 }));
const DEFAULTS: Candidate = {
  fusion: "rrf",
  rrfK: 60,
  weights: { dense: 1, bm25: 1 },
  denseK: 20,
  bm25K: 20,
  bm25: { k1: 1.2, b: 0.75 },
};

describe("assignFolds", () => {
  it("stratifies: each fold gets a near-equal share of every stratum, and is seeded", () => {
    const groups = [
      ...Array.from({ length: 10 }, (_, i) => ({ id: `en-${i}`, stratum: "en" })),
      ...Array.from({ length: 5 }, (_, i) => ({ id: `es-${i}`, stratum: "es-419" })),
    ];
    const folds = assignFolds(groups, 5, 42);
    for (let f = 0; f < 5; f++) {
      // es-419 first (sorted strata): 5 groups dealt to folds 0..4, then en's 10 to 0..4 twice → 1 es + 2 en each
      expect(groups.filter((g) => g.stratum === "es-419" && folds.get(g.id) === f)).toHaveLength(1);
      expect(groups.filter((g) => g.stratum === "en" && folds.get(g.id) === f)).toHaveLength(2);
    }
    expect(assignFolds(groups, 5, 42)).toEqual(folds);
    expect([...assignFolds(groups, 5, 7)]).not.toEqual([...folds]);
  });

  it("says how many cases are needed when there are fewer than folds", () => {
    expect(() => assignFolds([{ id: "a", stratum: "en" }], 5, 1)).toThrow(InvalidArgumentError);
    expect(() => assignFolds([{ id: "a", stratum: "en" }], 5, 1)).toThrow(/at least 5 cases/);
  });
});

describe("crossValidate", () => {
  it("scores every group once with a candidate chosen without it", () => {
    // 4 groups, 2 folds. Candidate 0 (defaults) scores 0.5 everywhere; candidate 1 scores 1 on g1..g3 and 0 on g4.
    // Any training half contains at least one of g1..g3 → mean of candidate 1 on it is ≥ 0.5; it is chosen only when strictly
    // better (ties keep the defaults). Held-out: whichever is chosen, the mean over groups is checked against the matrix.
    const groups = ["g1", "g2", "g3", "g4"].map((id) => ({ id, stratum: "x" }));
    const matrix = [
      [0.5, 0.5, 0.5, 0.5],
      [1, 1, 1, 0],
    ];
    const cv = crossValidate(matrix, groups, 2, 3);
    expect(cv.n).toBe(4);
    expect(cv.defaultScore).toBe(0.5);
    const folds = assignFolds(groups, 2, 3);
    let expected = 0;
    for (let f = 0; f < 2; f++) {
      const train = groups
        .map((g, i) => ({ g, i }))
        .filter(({ g }) => folds.get(g.id) !== f)
        .map(({ i }) => i);
      const c = bestCandidate(matrix, train);
      for (const [i, g] of groups.entries()) if (folds.get(g.id) === f) expected += matrix[c]![i]!;
    }
    expect(cv.cvScore).toBeCloseTo(expected / 4, 12);
    expect(cv.final).toBe(1); // on all groups: 0.75 > 0.5
  });

  it("bestCandidate keeps the earlier candidate on a tie", () => {
    expect(
      bestCandidate(
        [
          [1, 0],
          [0, 1],
        ],
        [0, 1],
      ),
    ).toBe(0);
  });
});

describe("candidates and units", () => {
  it("puts the defaults first, varies rrfK for RRF only, and includes k1=0.9 b=0.4", () => {
    const cands = expandGrid(DEFAULT_GRID, DEFAULTS);
    expect(candidateKey(cands[0]!)).toBe(candidateKey(DEFAULTS));
    expect(new Set(cands.map(candidateKey)).size).toBe(cands.length);
    expect(cands.some((c) => c.bm25.k1 === 0.9 && c.bm25.b === 0.4)).toBe(true);
    expect(new Set(cands.filter((c) => c.fusion !== "rrf").map((c) => c.rrfK))).toEqual(new Set([60]));
  });

  it("scores a unit by cutting, fusing and evaluating", () => {
    // dense [a, b], bm25 [b, c]; minmax weights 0.2/0.8: a 0.2·1 = 0.2, b 0.2·0 + 0.8·1 = 0.8, c 0 → [b, a, c]
    const unit: TuneUnit = {
      group: "g",
      stratum: "en",
      dense: list(["a", 0.9], ["b", 0.1]),
      bm25: new Map([[bm25Key({ k1: 1.2, b: 0.75 }), list(["b", 5], ["c", 1])]]),
      evaluate: (fused) =>
        ndcgAtK(
          fused.map((r) => r.id),
          ["b"],
          1,
        ),
    };
    const mm: Candidate = { ...DEFAULTS, fusion: "minmax", weights: { dense: 0.2, bm25: 0.8 } };
    expect(scoreUnit(unit, mm)).toBe(1);
    // dense only (bm25K cut keeps b; weight 0 on bm25): a first → nDCG@1 for b = 0
    expect(scoreUnit(unit, { ...mm, weights: { dense: 1, bm25: 0 } })).toBe(0);
    expect(scoreMatrix([unit], [mm], ["g"])).toEqual([[1]]);
    expect(() => scoreUnit(unit, { ...mm, bm25: { k1: 0.9, b: 0.4 } })).toThrow(/cached/);
  });
});

describe("the grid covers the defaults' neighbourhood (gridAround)", () => {
  it("adds α ± 0.05 around a default at the upper end, inside (0, 1)", () => {
    const lsa: Candidate = { ...DEFAULTS, fusion: "minmax", weights: { dense: 0.9, bm25: 0.1 } };
    const g = gridAround(DEFAULT_GRID, lsa);
    expect(g.alpha).toEqual([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95]);
    // RRF 1/1 (the built-in embedder's default): α = 0.5, neighbours 0.45 and 0.55.
    expect(gridAround(DEFAULT_GRID, DEFAULTS).alpha).toEqual([0.1, 0.2, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9]);
    // α = 0.97: 1.02 is dropped, 0.92 and 0.97 added.
    expect(gridAround(DEFAULT_GRID, { ...lsa, weights: { dense: 0.97, bm25: 0.03 } }).alpha.slice(-3)).toEqual([
      0.9, 0.92, 0.97,
    ]);
    expect(alphaOf({ weights: { dense: 1, bm25: 4 } })).toBeCloseTo(0.2, 12);
    expect(alphaOf({ weights: { dense: 0, bm25: 0 } })).toBe(0.5);
  });

  it("every grid α up to 0.9 and the default's neighbours are candidates", () => {
    const lsa: Candidate = { ...DEFAULTS, fusion: "minmax", weights: { dense: 0.9, bm25: 0.1 } };
    const minmaxAlphas = new Set(
      expandGrid(gridAround(DEFAULT_GRID, lsa), lsa)
        .filter((c) => c.fusion === "minmax")
        .map((c) => c.weights.dense),
    );
    for (const a of [0.1, 0.5, 0.85, 0.9, 0.95]) expect(minmaxAlphas.has(a)).toBe(true);
  });

  it("the methods of the cross-collection candidates (signals included, the previous LSA default) are searched over every α; a default method in the grid is not repeated", () => {
    expect(DEFAULT_GRID.fusion).toEqual(["rrf", "minmax", "zscore", "combmnz", "signals"]);
    const signals: Candidate = { ...DEFAULTS, fusion: "signals", weights: { dense: 0.9, bm25: 0.1 } };
    const g = gridAround(DEFAULT_GRID, signals);
    expect(g.fusion).toEqual(["rrf", "minmax", "zscore", "combmnz", "signals"]);
    const cands = expandGrid(g, signals);
    expect(cands[0]).toEqual(signals);
    const signalsAlphas = new Set(cands.filter((c) => c.fusion === "signals").map((c) => c.weights.dense));
    for (const a of [0.1, 0.5, 0.85, 0.9, 0.95]) expect(signalsAlphas.has(a)).toBe(true);
    // A default method outside the grid is added (adaptive is in no candidate set).
    expect(gridAround(DEFAULT_GRID, { ...signals, fusion: "adaptive" }).fusion).toEqual([
      "rrf",
      "minmax",
      "zscore",
      "combmnz",
      "signals",
      "adaptive",
    ]);
  });

  it("searches each single stage (BM25 alone, dense alone) beside the fused candidates, scored as that stage", () => {
    const lsa: Candidate = {
      ...DEFAULTS,
      fusion: "minmax",
      weights: { dense: 0.9, bm25: 0.1 },
      bm25K: 50,
      bm25: { k1: 0.9, b: 0.4 },
    };
    const cands = expandGrid(gridAround(DEFAULT_GRID, lsa), lsa);
    const bm25Only = cands.filter((c) => c.weights.dense === 0);
    const denseOnly = cands.filter((c) => c.weights.bm25 === 0);
    // BM25 alone at each (k1, b) × bm25K (2 × 2), dense alone at each denseK (2); all RRF, at the grid's first other depth.
    expect(bm25Only.map(candidateKey).sort()).toEqual([
      "rrf(k=60) w=0/1 denseK=20 bm25K=20 k1=0.9,b=0.4",
      "rrf(k=60) w=0/1 denseK=20 bm25K=20 k1=1.2,b=0.75",
      "rrf(k=60) w=0/1 denseK=20 bm25K=50 k1=0.9,b=0.4",
      "rrf(k=60) w=0/1 denseK=20 bm25K=50 k1=1.2,b=0.75",
    ]);
    expect(denseOnly.map(candidateKey).sort()).toEqual([
      "rrf(k=60) w=1/0 denseK=20 bm25K=20 k1=1.2,b=0.75",
      "rrf(k=60) w=1/0 denseK=50 bm25K=20 k1=1.2,b=0.75",
    ]);
    expect(
      expandGrid({ ...DEFAULT_GRID, stages: [] }, lsa).filter((c) => c.weights.dense === 0 || c.weights.bm25 === 0),
    ).toEqual([]);
    // Gold g is BM25's first and dense's second (dense first: y). Scored at rank 1:
    // BM25 alone → g (1); dense alone → y (0); min-max 0.9/0.1 → y 0.9·1 = 0.9 > g 0.9·0 + 0.1·1 = 0.1 (0).
    const unit: TuneUnit = {
      group: "g",
      stratum: "en",
      dense: list(["y", 0.9], ["g", 0.8]),
      bm25: new Map([
        [bm25Key({ k1: 0.9, b: 0.4 }), list(["g", 7], ["x", 2])],
        [bm25Key({ k1: 1.2, b: 0.75 }), list(["g", 7], ["x", 2])],
      ]),
      evaluate: (fused) =>
        ndcgAtK(
          fused.map((r) => r.id),
          ["g"],
          1,
        ),
    };
    for (const c of bm25Only) expect(scoreUnit(unit, c)).toBe(1);
    for (const c of denseOnly) expect(scoreUnit(unit, c)).toBe(0);
    expect(scoreUnit(unit, lsa)).toBe(0);
  });
});

describe("tuneDecision: never a worse file silently", () => {
  const paired = (diff: number, lo: number, hi: number) => ({
    n: 50,
    meanA: 0.8,
    meanB: 0.8 + diff,
    diff,
    ci95: [lo, hi] as [number, number],
    pValue: 0.01,
    method: "sampled" as const,
  });

  it("adopts only a gain ≥ TUNE_MIN_GAIN whose interval lies above 0", () => {
    expect(TUNE_MIN_GAIN).toBe(0.005);
    expect(tuneDecision(paired(0.02, 0.004, 0.036)).adopted).toBe(true);
    // The case: CV 0.8075 vs defaults 0.8201 (−0.0126): kept, with the numbers in the reason.
    const worse = tuneDecision(paired(-0.0126, -0.03, 0.006));
    expect(worse.adopted).toBe(false);
    expect(worse.reason).toMatch(
      /does not beat the defaults by ≥ 0\.005 .*-0\.0126 \[-0\.0300, \+0\.0060\]\): the defaults are kept/,
    );
    // A gain whose interval reaches 0, and a significant gain below the margin: kept.
    expect(tuneDecision(paired(0.02, -0.001, 0.04)).adopted).toBe(false);
    expect(tuneDecision(paired(0.004, 0.001, 0.007)).adopted).toBe(false);
    expect(tuneDecision(null).adopted).toBe(false);
  });
});

describe("crossValidateCandidates: the defaults stay unless the held-out gain is clear", () => {
  const lsa: Candidate = {
    ...DEFAULTS,
    fusion: "minmax",
    weights: { dense: 0.9, bm25: 0.1 },
    bm25K: 50,
    bm25: { k1: 0.9, b: 0.4 },
  };
  const settings = { folds: 5, seed: 42, metric: "nDCG@1", source: "ten toy queries" };
  const units = (dense: Ranked[], bm25: Ranked[]): TuneUnit[] =>
    Array.from({ length: 10 }, (_, i) => ({
      group: `q${i}`,
      stratum: "en",
      dense,
      bm25: new Map([
        [bm25Key({ k1: 0.9, b: 0.4 }), bm25],
        [bm25Key({ k1: 1.2, b: 0.75 }), bm25],
      ]),
      evaluate: (fused: readonly Ranked[]) =>
        ndcgAtK(
          fused.map((r) => r.id),
          ["g"],
          1,
        ),
    }));
  const groups = Array.from({ length: 10 }, (_, i) => ({ id: `q${i}`, stratum: "en" }));

  it("adopts a configuration that wins on every held-out query", () => {
    // Every query: the defaults (min-max 0.9/0.1) put the dense decoy y first (0.9 > 0.1: nDCG@1 0); BM25 alone, or a low dense weight, puts g first (1).
    const cands = expandGrid(gridAround(DEFAULT_GRID, lsa), lsa);
    const t = crossValidateCandidates(
      units(list(["y", 0.9], ["g", 0.8]), list(["g", 7], ["x", 2])),
      groups,
      cands,
      settings,
    );
    expect(t.cv.defaultScore).toBe(0);
    expect(t.cv.cvScore).toBe(1);
    expect(t.decision.adopted).toBe(true);
    expect(t.config.tuned?.written).toBe("tuned");
    expect(t.config.retrieval.weights).not.toEqual(lsa.weights);
  });

  it("keeps the defaults (and writes them) when nothing beats them held out", () => {
    // g first in both lists: every candidate scores 1, the tie goes to candidate 0, the defaults.
    const cands = expandGrid(gridAround(DEFAULT_GRID, lsa), lsa);
    const t = crossValidateCandidates(
      units(list(["g", 0.9], ["y", 0.8]), list(["g", 7], ["x", 2])),
      groups,
      cands,
      settings,
    );
    expect(t.cv.cvScore).toBe(1);
    expect(t.cv.defaultScore).toBe(1);
    expect(t.decision.adopted).toBe(false);
    expect(t.config.tuned?.written).toBe("defaults");
    expect(t.config.retrieval).toMatchObject({
      fusion: "minmax",
      weights: { dense: 0.9, bm25: 0.1 },
      denseK: 20,
      bm25K: 50,
      bm25: { k1: 0.9, b: 0.4 },
    });
  });
});
