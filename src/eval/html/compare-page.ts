/**
 * `retrace compare A B --html`: both runs side by side (docs/html-report.md):
 * the paired comparison per metric (B − A, its interval, the randomization
 * p-value, all from ../compare.ts), both runs' summaries, and the turns whose
 * hit@k flipped — hit→miss first, then miss→hit, each in dataset order — and,
 * below them, the turns whose hit@k held but whose recall@k or nDCG@k moved
 * by at least SHIFT_THRESHOLD; each row opens both runs' turn views.
 */
import type { KeyComparison } from "../compare.js";
import { SIGNIFICANCE_LEVEL } from "../report.js";
import type { Report, TurnReport } from "../types.js";
import { renderPage } from "./page.js";
import { runPageData } from "./report-page.js";

const HIT_KEY = "retrieval_hit_at_k";
const RECALL_KEY = "retrieval_recall_at_k";
const NDCG_KEY = "retrieval_ndcg_at_k";

/** The smallest |B − A| of recall@k or nDCG@k for which a turn whose hit@k held is listed as shifted (docs/html-report.md). */
export const SHIFT_THRESHOLD = 0.2;
/** Float rounding allowed when comparing a change with the threshold. */
const FLOAT_SLACK = 1e-9;

export interface Flip {
  /** `caseId#turn` */
  id: string;
  direction: "hit→miss" | "miss→hit";
  /** Index of the turn in A's and in B's `turns`. */
  a: number;
  b: number;
}

function scoreOf(t: TurnReport, key: string): number | undefined {
  return t.results.find((r) => r.key === key)?.score;
}

function hit(t: TurnReport): number | undefined {
  return scoreOf(t, HIT_KEY);
}

export interface Shift {
  /** `caseId#turn` */
  id: string;
  /** Index of the turn in A's and in B's `turns`. */
  a: number;
  b: number;
  /** hit@k, the same in both runs. */
  hit: number;
  /** B − A of recall@k and of nDCG@k (unrounded). */
  recall: number;
  ndcg: number;
}

/**
 * Turns whose hit@k is the same in both runs (so not a flip) but whose
 * recall@k or nDCG@k changed by at least `threshold` in absolute value:
 * |B − A| ≥ threshold for either metric (up to FLOAT_SLACK, so that 0.7 − 0.5
 * counts as a change of 0.2). Only turns with hit@k, recall@k and
 * nDCG@k scored in both runs count (a turn without gold has none).
 *
 * Order: by the larger-magnitude change of the two (recall's on a tie),
 * ascending — the biggest drop first, the biggest gain last; equal changes in
 * A's order. A `threshold` ≤ 0 lists every unflipped turn scored in both runs.
 */
export function shiftedTurns(a: Pick<Report, "turns">, b: Pick<Report, "turns">, threshold: number = SHIFT_THRESHOLD): Shift[] {
  const inB = new Map(b.turns.map((t, i) => [`${t.caseId}#${t.turn}`, i]));
  const out: (Shift & { key: number })[] = [];
  a.turns.forEach((t, i) => {
    const id = `${t.caseId}#${t.turn}`;
    const j = inB.get(id);
    if (j === undefined) return;
    const u = b.turns[j]!;
    const [ha, hb, ra, rb, na, nb] = [hit(t), hit(u), scoreOf(t, RECALL_KEY), scoreOf(u, RECALL_KEY), scoreOf(t, NDCG_KEY), scoreOf(u, NDCG_KEY)];
    if (ha === undefined || hb === undefined || ra === undefined || rb === undefined || na === undefined || nb === undefined) return;
    if (ha !== hb) return;
    const recall = rb - ra;
    const ndcg = nb - na;
    if (Math.abs(recall) < threshold - FLOAT_SLACK && Math.abs(ndcg) < threshold - FLOAT_SLACK) return;
    out.push({ id, a: i, b: j, hit: ha, recall, ndcg, key: Math.abs(ndcg) > Math.abs(recall) ? ndcg : recall });
  });
  return out.sort((x, y) => x.key - y.key || x.a - y.a).map(({ key: _key, ...s }) => s);
}

/**
 * Turns scored in both runs whose hit@k differs: hit→miss (A 1, B 0) first,
 * then miss→hit, each group in A's order. Turns only one run scored are left out.
 */
export function flippedTurns(a: Report, b: Report): Flip[] {
  const inB = new Map(b.turns.map((t, i) => [`${t.caseId}#${t.turn}`, i]));
  const lost: Flip[] = [];
  const gained: Flip[] = [];
  a.turns.forEach((t, i) => {
    const id = `${t.caseId}#${t.turn}`;
    const j = inB.get(id);
    if (j === undefined) return;
    const ha = hit(t);
    const hb = hit(b.turns[j]!);
    if (ha === 1 && hb === 0) lost.push({ id, direction: "hit→miss", a: i, b: j });
    else if (ha === 0 && hb === 1) gained.push({ id, direction: "miss→hit", a: i, b: j });
  });
  return [...lost, ...gained];
}

export function renderHtmlComparison(a: { name: string; report: Report }, b: { name: string; report: Report }, comparisons: KeyComparison[], opts: { seed: number }): string {
  return renderPage(`retrace compare: ${a.name} vs ${b.name}`, {
    kind: "compare",
    significance: SIGNIFICANCE_LEVEL,
    seed: opts.seed,
    a: runPageData(a.report, a.name),
    b: runPageData(b.report, b.name),
    comparisons,
    flips: flippedTurns(a.report, b.report),
    shiftThreshold: SHIFT_THRESHOLD,
    shifts: shiftedTurns(a.report, b.report),
  });
}
