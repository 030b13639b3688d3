/**
 * The candidate hybrid defaults compared leave-one-collection-out
 * (bench/loco-fusion.bench.ts; docs/fusion-and-tuning.md, "A default fitted
 * across collections"). Each candidate is a rule that turns one query's two
 * branch lists (and the collection's label-free LSA statistics) into a fused
 * ranking, with a grid of its constants; every fused list comes from the
 * project's own `fuse()` (src/retrieval/fusion.ts), so what is measured here
 * is what the retriever would do.
 *
 * Candidates are listed simplest first: that order is the tie-break of the
 * choice (within 0.002 of the best worst case, the simpler wins).
 */
import { scoreTrec } from "../../src/eval/ir/trec.js";
import { toRun } from "../../src/research/beir.js";
import { fuse, type FusionInput, type FusionMethod } from "../../src/retrieval/fusion.js";
import { lsaDenseWeight, lsaStructureWeight } from "../../src/retrieval/hybrid.js";
import type { Ranked } from "../../src/retrieval/types.js";
import { BRANCH_DEPTH, type BranchLists, type BranchQuery } from "./branch-lists.js";

export type Params = Readonly<Record<string, number>>;

export interface Candidate {
  name: string;
  /** How the constants enter, for the table. */
  describe(p: Params): string;
  grid: readonly Params[];
  rank(q: BranchQuery, c: BranchLists, p: Params): readonly Ranked[];
}

const round2 = (x: number) => Math.round(x * 100) / 100;
const pair = (q: BranchQuery, dense: number): FusionInput[] => [
  { name: "dense", ranked: q.dense, weight: dense },
  { name: "bm25", ranked: q.bm25, weight: round2(1 - dense) },
];
const fused = (
  q: BranchQuery,
  method: FusionMethod,
  dense: number,
  params?: Record<string, number>,
  extra: { rrfK?: number; shift?: number } = {},
) => fuse(pair(q, dense), { method, ...(params === undefined ? {} : { params }), ...extra });
const ALPHAS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
const grid = <K extends string>(axes: Record<K, readonly number[]>): Params[] => {
  let out: Record<string, number>[] = [{}];
  for (const [k, vs] of Object.entries(axes) as [K, readonly number[]][])
    out = out.flatMap((p) => vs.map((v) => ({ ...p, [k]: v })));
  return out;
};

export const CANDIDATES: readonly Candidate[] = [
  {
    name: "bm25 only",
    describe: () => "BM25 alone",
    grid: [{}],
    rank: (q) => q.bm25,
  },
  {
    name: "rrf",
    describe: (p) => `RRF k=${p.k}, dense ${p.alpha}`,
    grid: grid({ k: [10, 30, 60, 100], alpha: [0.5] }),
    rank: (q, _c, p) => fused(q, "rrf", p.alpha as number, undefined, { rrfK: p.k as number }),
  },
  {
    name: "rrf weighted",
    describe: (p) => `RRF k=${p.k}, dense ${p.alpha}`,
    grid: grid({ k: [10, 60], alpha: ALPHAS }),
    rank: (q, _c, p) => fused(q, "rrf", p.alpha as number, undefined, { rrfK: p.k as number }),
  },
  {
    name: "minmax fixed",
    describe: (p) => `min-max, dense ${p.alpha}`,
    grid: grid({ alpha: ALPHAS }),
    rank: (q, _c, p) => fused(q, "minmax", p.alpha as number),
  },
  {
    name: "zscore fixed",
    describe: (p) => `z-score, dense ${p.alpha}`,
    grid: grid({ alpha: ALPHAS }),
    rank: (q, _c, p) => fused(q, "zscore", p.alpha as number),
  },
  {
    name: "minmax latent share",
    describe: (p) => `min-max, dense = latent share + ${p.shift}`,
    grid: grid({ shift: [-0.2, -0.1, 0, 0.1, 0.2, 0.3, 0.4] }),
    rank: (q, c, p) =>
      fused(q, "minmax", Math.min(0.9, Math.max(0.1, round2(lsaDenseWeight(c.latent.share) + (p.shift as number))))),
  },
  {
    name: "minmax κ",
    describe: (p) => `min-max, α = ${p.lambda}·κ`,
    grid: grid({ lambda: [1, 2, 2.5, 3, 3.5, 4, 5.4, 7] }),
    rank: (q, c, p) => fused(q, "minmax", lsaStructureWeight(c.latent.structure, p.lambda)),
  },
  {
    name: "zscore κ",
    describe: (p) => `z-score, α = ${p.lambda}·κ`,
    grid: grid({ lambda: [1, 2, 2.5, 3, 3.5, 4, 5.4, 7] }),
    rank: (q, c, p) => fused(q, "zscore", lsaStructureWeight(c.latent.structure, p.lambda)),
  },
  {
    name: "combmnz κ",
    describe: (p) => `CombMNZ, α = ${p.lambda}·κ`,
    grid: grid({ lambda: [1, 2, 2.5, 3, 3.5, 4, 5.4, 7] }),
    rank: (q, c, p) => fused(q, "combmnz", lsaStructureWeight(c.latent.structure, p.lambda)),
  },
  {
    name: "minmax κ, dense head",
    describe: (p) => `min-max, α = ${p.lambda}·κ, dense top ${p.head} only`,
    grid: grid({ lambda: [2, 2.5, 3, 3.5, 4, 5.4], head: [20, 50] }),
    rank: (q, c, p) =>
      fused({ ...q, dense: q.dense.slice(0, p.head) }, "minmax", lsaStructureWeight(c.latent.structure, p.lambda)),
  },
  {
    name: "minmax κ, fall back on disagreement",
    describe: (p) => `min-max, α = ${p.lambda}·κ; top-10 overlap < ${p.tau}: the branch with α ≥ 0.5 alone`,
    grid: grid({ lambda: [2, 2.5, 3, 3.5, 4, 5.4], tau: [0.1, 0.2, 0.3] }),
    rank: (q, c, p) => {
      const alpha = lsaStructureWeight(c.latent.structure, p.lambda);
      const head = new Set(q.dense.slice(0, 10).map((r) => r.id));
      const overlap = q.bm25.slice(0, 10).filter((r) => head.has(r.id)).length / 10;
      if (overlap < (p.tau as number)) return alpha >= 0.5 ? q.dense : q.bm25;
      return fused(q, "minmax", alpha);
    },
  },
  {
    name: "signals κ",
    describe: (p) => `signals, α = ${p.lambda}·κ, β ${p.beta}, γ ${p.gamma}`,
    grid: grid({ lambda: [2, 3, 4, 5.4], beta: [0, 1, 2], gamma: [-2, 0, 2] }),
    rank: (q, c, p) =>
      fused(q, "signals", lsaStructureWeight(c.latent.structure, p.lambda), {
        shift: 0,
        beta: p.beta as number,
        gamma: p.gamma as number,
      }),
  },
];

/** Per-query nDCG@10 (graded gains) and R@100 of a candidate on a collection, trec_eval's definitions (`retrace beir`'s scorer, -c). */
export function scoreLists(
  c: BranchLists,
  ranked: (q: BranchQuery) => readonly { id: string }[],
): { ndcg: Map<string, number>; r100: Map<string, number> } {
  const lists = new Map<string, string[]>();
  for (const q of c.queries)
    lists.set(
      q.id,
      ranked(q)
        .slice(0, BRANCH_DEPTH)
        .map((r) => r.id),
    );
  const s = scoreTrec(c.qrels, toRun(lists, "x"), { ks: [10, 100], complete: true, skipEmpty: true, graded: true });
  const ndcg = new Map<string, number>();
  const r100 = new Map<string, number>();
  for (const q of s.perQuery) {
    ndcg.set(q.qid, q.values.ndcg_cut_10 as number);
    r100.set(q.qid, q.values.recall_100 as number);
  }
  return { ndcg, r100 };
}

export const meanOf = (m: ReadonlyMap<string, number>): number => {
  let s = 0;
  for (const v of m.values()) s += v;
  return m.size === 0 ? 0 : s / m.size;
};

/**
 * The candidates for a model embedder's default (bench/loco-model.bench.ts):
 * a model has no κ, so every constant is a fixed number fitted across the
 * collections; simplest first, as CANDIDATES.
 */
export const MODEL_CANDIDATES: readonly Candidate[] = [
  ...CANDIDATES.filter((c) => ["bm25 only", "rrf", "rrf weighted", "minmax fixed", "zscore fixed"].includes(c.name)),
  {
    name: "combmnz fixed",
    describe: (p) => `CombMNZ, dense ${p.alpha}`,
    grid: grid({ alpha: ALPHAS }),
    rank: (q, _c, p) => fused(q, "combmnz", p.alpha as number),
  },
  {
    name: "minmax fixed, dense head",
    describe: (p) => `min-max, dense ${p.alpha}, dense top ${p.head} only`,
    grid: grid({ alpha: ALPHAS, head: [20, 50] }),
    rank: (q, _c, p) => fused({ ...q, dense: q.dense.slice(0, p.head) }, "minmax", p.alpha as number),
  },
];
