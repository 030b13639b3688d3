/**
 * Cross-validated search of the hybrid settings (docs/fusion-and-tuning.md).
 *
 * The search runs over cached candidate lists, so every configuration is
 * scored without touching the store again: each query ("unit") carries its
 * dense list at the largest depth searched and one BM25 list per (k1, b)
 * pair at that depth; a configuration cuts them to its depths, fuses them
 * with its method and weights, and scores the result with the unit's
 * `evaluate` (nDCG@k over cards for the eval set, nDCG@10 for BEIR).
 *
 * Cross-validation is by group (an eval case, or a BEIR query), never by
 * turn, so a case's turns never sit on both sides: groups are dealt into k
 * folds after a seeded shuffle within each stratum (locale), round-robin, so
 * each fold holds a near-equal share of every locale. For each fold the
 * configuration with the best mean over the other folds' groups is chosen
 * (ties: the earlier candidate, the current defaults first) and scored on the
 * held-out fold. The CV score is the mean of those held-out group scores:
 * every group is scored exactly once, by a configuration chosen without it.
 * The configuration finally written is the best on all groups; its own
 * in-sample score is never reported.
 */
import { InvalidArgumentError } from "../errors.js";
import { fuse, type FusionMethod } from "../retrieval/fusion.js";
import type { Ranked } from "../retrieval/types.js";
import { mulberry32, pairedComparison, type PairedComparison } from "../eval/stats/bootstrap.js";

export interface Candidate {
  fusion: FusionMethod;
  rrfK: number;
  weights: { dense: number; bm25: number };
  /** δ of `signals` (the retriever's own, `HybridDefaults.signalsShift`); every signals candidate of a search shares the defaults' one. */
  signalsShift?: number;
  denseK: number;
  bm25K: number;
  bm25: { k1: number; b: number };
}

export interface TuneUnit {
  /** The group (case id, or query id) the unit belongs to: the unit of cross-validation. */
  group: string;
  /** Stratum of the group (locale). */
  stratum: string;
  /** Dense list at the largest depth searched (ranks 1..n). */
  dense: readonly Ranked[];
  /** BM25 list at the largest depth, per `bm25Key(k1, b)`. */
  bm25: ReadonlyMap<string, readonly Ranked[]>;
  /** Score of a fused list (higher is better), or null when the unit has nothing to score. */
  evaluate(fused: readonly Ranked[]): number | null;
  /** When set, both branches are cut here whatever the candidate's depths (BEIR queries keep `--depth`). */
  depth?: number;
}

export const bm25Key = (p: { k1: number; b: number }) => `k1=${p.k1},b=${p.b}`;

/** The grid searched by default: `include` (the current defaults) first, then every combination below. */
export interface Grid {
  fusion: readonly FusionMethod[];
  /** Dense weight α; the BM25 weight is 1 − α. */
  alpha: readonly number[];
  rrfK: readonly number[];
  denseK: readonly number[];
  bm25K: readonly number[];
  bm25: ReadonlyArray<{ k1: number; b: number }>;
  /**
   * Single stages searched beside the fused candidates (the "BM25 only"
   * candidate of the leave-one-collection-out study, bench/loco-fusion.bench.ts,
   * and its dense twin): RRF with the other branch's weight 0, i.e. that
   * branch's own order, the other branch's extra candidates after it at
   * score 0 (what the retriever does with such a config file). `bm25` varies
   * (k1, b) and bm25K at the grid's first denseK; `dense` varies denseK at the
   * grid's first bm25K and (k1, b). Empty or absent: none.
   */
  stages?: ReadonlyArray<"bm25" | "dense">;
}

/**
 * The dense weights α searched (BM25 weight 1 − α), the one list `retrace
 * tune` and `retrace beir --tune` share: 0.1 … 0.9 in steps of 0.1, then the
 * defaults' own neighbourhood is added by `gridAround` (α ± 0.05, in (0, 1)),
 * so a default at the upper end (the LSA default on the shipped KB is 0.9)
 * has candidates on both sides of it.
 */
export const TUNE_ALPHAS: readonly number[] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];

/** The step of the neighbours `gridAround` adds on each side of the defaults' α. */
export const ALPHA_NEIGHBOUR_STEP = 0.05;

export const DEFAULT_GRID: Grid = {
  // The fusion methods of the candidate defaults compared across collections (docs/fusion-and-tuning.md,
  // "A default fitted across collections"); signals at its registered β, γ and the retriever's shift.
  fusion: ["rrf", "minmax", "zscore", "combmnz", "signals"],
  alpha: TUNE_ALPHAS,
  rrfK: [10, 60],
  denseK: [20, 50],
  bm25K: [20, 50],
  bm25: [
    { k1: 1.2, b: 0.75 },
    { k1: 0.9, b: 0.4 },
  ],
  stages: ["bm25", "dense"],
};

/** The dense share α = dense / (dense + bm25) of a candidate's weights (0.5 when both are 0). */
export function alphaOf(c: Pick<Candidate, "weights">): number {
  const sum = c.weights.dense + c.weights.bm25;
  return sum > 0 ? c.weights.dense / sum : 0.5;
}

/**
 * `grid` with the defaults' neighbourhood added: to its α list the defaults'
 * own α and α ± ALPHA_NEIGHBOUR_STEP, kept inside (0, 1) and rounded to 0.01,
 * sorted, duplicates removed; to its fusion list the defaults' own method
 * when the grid lacks it (the LSA default `signals`), so that method is
 * searched over every α too. (The defaults themselves are candidate 0 of
 * `expandGrid` whatever the grid.)
 */
export function gridAround(grid: Grid, defaults: Candidate): Grid {
  const a = alphaOf(defaults);
  const near = [a - ALPHA_NEIGHBOUR_STEP, a, a + ALPHA_NEIGHBOUR_STEP]
    .map((x) => Math.round(x * 100) / 100)
    .filter((x) => x > 0 && x < 1);
  const alpha = [...new Set([...grid.alpha, ...near])].sort((x, y) => x - y);
  const fusion = grid.fusion.includes(defaults.fusion) ? grid.fusion : [...grid.fusion, defaults.fusion];
  return { ...grid, fusion, alpha };
}

/** Canonical text of a candidate (used for ties and in reports). */
export function candidateKey(c: Candidate): string {
  const w = `w=${c.weights.dense}/${c.weights.bm25}`;
  return `${c.fusion}${c.fusion === "rrf" ? `(k=${c.rrfK})` : ""} ${w} denseK=${c.denseK} bm25K=${c.bm25K} ${bm25Key(c.bm25)}`;
}

/** The grid's candidates, `first` (the current defaults) at index 0, then the fused ones, then the single stages (`grid.stages`); duplicates removed. RRF alone varies rrfK. */
export function expandGrid(grid: Grid, first: Candidate): Candidate[] {
  const out: Candidate[] = [first];
  const seen = new Set([candidateKey(first)]);
  const add = (c: Candidate) => {
    const key = candidateKey(c);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(c);
    }
  };
  for (const bm25 of grid.bm25)
    for (const denseK of grid.denseK)
      for (const bm25K of grid.bm25K)
        for (const fusion of grid.fusion)
          for (const alpha of grid.alpha)
            for (const rrfK of fusion === "rrf" ? grid.rrfK : [first.rrfK]) {
              const c: Candidate = {
                fusion,
                rrfK,
                weights: { dense: alpha, bm25: Math.round((1 - alpha) * 1e9) / 1e9 },
                ...(first.signalsShift !== undefined ? { signalsShift: first.signalsShift } : {}),
                denseK,
                bm25K,
                bm25,
              };
              add(c);
            }
  const stage = (weights: Candidate["weights"], denseK: number, bm25K: number, bm25: Candidate["bm25"]): Candidate => ({
    fusion: "rrf",
    rrfK: first.rrfK,
    weights,
    denseK,
    bm25K,
    bm25,
  });
  const [denseK0, bm25K0, bm250] = [grid.denseK[0], grid.bm25K[0], grid.bm25[0]];
  if (grid.stages?.includes("bm25") && denseK0 !== undefined)
    for (const bm25 of grid.bm25)
      for (const bm25K of grid.bm25K) add(stage({ dense: 0, bm25: 1 }, denseK0, bm25K, bm25));
  if (grid.stages?.includes("dense") && bm25K0 !== undefined && bm250 !== undefined)
    for (const denseK of grid.denseK) add(stage({ dense: 1, bm25: 0 }, denseK, bm25K0, bm250));
  return out;
}

/** Score of one unit under one candidate. */
export function scoreUnit(unit: TuneUnit, c: Candidate): number | null {
  const bm25 = unit.bm25.get(bm25Key(c.bm25));
  if (bm25 === undefined) throw new InvalidArgumentError("bm25", `a BM25 list cached for ${bm25Key(c.bm25)}`, c.bm25);
  const fused = fuse(
    [
      { name: "dense", ranked: unit.dense.slice(0, unit.depth ?? c.denseK), weight: c.weights.dense },
      { name: "bm25", ranked: bm25.slice(0, unit.depth ?? c.bm25K), weight: c.weights.bm25 },
    ],
    { method: c.fusion, rrfK: c.rrfK, ...(c.signalsShift !== undefined ? { shift: c.signalsShift } : {}) },
  );
  return unit.evaluate(fused);
}

/** Group scores of every candidate: `matrix[c][g]` = mean over the group's scored units (groups in `groups` order). */
export function scoreMatrix(
  units: readonly TuneUnit[],
  candidates: readonly Candidate[],
  groups: readonly string[],
  onProgress?: (done: number, total: number) => void,
): number[][] {
  const index = new Map(groups.map((g, i) => [g, i]));
  const matrix: number[][] = [];
  candidates.forEach((c, ci) => {
    const sums = new Float64Array(groups.length);
    const counts = new Uint32Array(groups.length);
    for (const u of units) {
      const s = scoreUnit(u, c);
      if (s === null) continue;
      const gi = index.get(u.group) as number;
      sums[gi] = (sums[gi] as number) + s;
      counts[gi] = (counts[gi] as number) + 1;
    }
    matrix.push(Array.from(sums, (s, i) => ((counts[i] as number) === 0 ? Number.NaN : s / (counts[i] as number))));
    onProgress?.(ci + 1, candidates.length);
  });
  return matrix;
}

/**
 * Assigns each group to one of `k` folds: within each stratum (sorted by
 * name) the groups, sorted by id, are shuffled with a seeded Fisher–Yates
 * (mulberry32) and dealt round-robin, continuing the deal across strata so
 * fold sizes differ by at most one. Throws when there are fewer groups than
 * folds, saying how many are needed.
 */
export function assignFolds(
  groups: ReadonlyArray<{ id: string; stratum: string }>,
  k: number,
  seed: number,
): Map<string, number> {
  if (!Number.isInteger(k) || k < 2) throw new InvalidArgumentError("folds", "an integer ≥ 2", k);
  if (groups.length < k)
    throw new InvalidArgumentError(
      "cases",
      `at least ${k} cases with gold for ${k}-fold cross-validation (got ${groups.length}; lower --folds or add cases)`,
      groups.length,
    );
  const rand = mulberry32(seed);
  const strata = new Map<string, string[]>();
  for (const g of groups) {
    const list = strata.get(g.stratum) ?? [];
    list.push(g.id);
    strata.set(g.stratum, list);
  }
  const folds = new Map<string, number>();
  let next = 0;
  for (const stratum of [...strata.keys()].sort()) {
    const ids = (strata.get(stratum) as string[]).sort();
    for (let i = ids.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [ids[i], ids[j]] = [ids[j] as string, ids[i] as string];
    }
    for (const id of ids) {
      folds.set(id, next % k);
      next++;
    }
  }
  return folds;
}

/** Weighted mean of row[i] over idx (weight 1 each when `weights` is absent); NaN entries skipped. */
function meanOver(row: readonly number[], idx: readonly number[], weights?: readonly number[]): number {
  let s = 0;
  let n = 0;
  for (const i of idx) {
    const v = row[i] as number;
    if (Number.isNaN(v)) continue;
    const w = weights?.[i] ?? 1;
    s += w * v;
    n += w;
  }
  return n === 0 ? Number.NaN : s / n;
}

/**
 * Index of the best candidate on the given group indices (ties: lowest
 * index). `weights[i]` weighs group i in the mean (e.g. 1/size of its
 * dataset, so two pooled datasets count equally); 1 each by default.
 */
export function bestCandidate(
  matrix: readonly (readonly number[])[],
  idx: readonly number[],
  weights?: readonly number[],
): number {
  let best = 0;
  let bestScore = -Infinity;
  matrix.forEach((row, c) => {
    const m = meanOver(row, idx, weights);
    if (m > bestScore) {
      bestScore = m;
      best = c;
    }
  });
  return best;
}

export interface CvResult {
  folds: number;
  seed: number;
  /** Groups with a score. */
  n: number;
  /** Mean held-out score of the selection procedure. */
  cvScore: number;
  /** The current defaults (candidate 0) on the same groups (nothing fitted). */
  defaultScore: number;
  /** Paired comparison over groups: held-out tuned − defaults. */
  paired: PairedComparison | null;
  /** The candidate chosen in each fold. */
  chosenPerFold: string[];
  /** Index of the candidate best on all groups (what is written). */
  final: number;
  /** Held-out score per group. */
  heldOut: Map<string, number>;
}

/**
 * k-fold cross-validation of "pick the best candidate" (see the module
 * comment). `groups` lists each group with its stratum; `matrix` comes from
 * scoreMatrix with the same group order; candidate 0 is the current defaults.
 */
export function crossValidate(
  matrix: readonly (readonly number[])[],
  groups: ReadonlyArray<{ id: string; stratum: string }>,
  k: number,
  seed: number,
  weights?: readonly number[],
): CvResult {
  const scored = groups.map((g, i) => ({ ...g, i })).filter((g) => !Number.isNaN(matrix[0]?.[g.i] ?? Number.NaN));
  const folds = assignFolds(scored, k, seed);
  const heldOut = new Map<string, number>();
  const defaults = new Map<string, number>();
  const chosenPerFold: string[] = [];
  for (let f = 0; f < k; f++) {
    const train = scored.filter((g) => folds.get(g.id) !== f).map((g) => g.i);
    const test = scored.filter((g) => folds.get(g.id) === f);
    const c = bestCandidate(matrix, train, weights);
    chosenPerFold.push(String(c));
    for (const g of test) {
      heldOut.set(g.id, (matrix[c] as number[])[g.i] as number);
      defaults.set(g.id, (matrix[0] as number[])[g.i] as number);
    }
  }
  const mean = (m: Map<string, number>) => [...m.values()].reduce((s, v) => s + v, 0) / Math.max(1, m.size);
  return {
    folds: k,
    seed,
    n: heldOut.size,
    cvScore: mean(heldOut),
    defaultScore: mean(defaults),
    paired: pairedComparison(defaults, heldOut, { seed }),
    chosenPerFold,
    final: bestCandidate(
      matrix,
      scored.map((g) => g.i),
      weights,
    ),
    heldOut,
  };
}
