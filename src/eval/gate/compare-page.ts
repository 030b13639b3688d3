/**
 * `retrace compare A B --html`: both runs side by side (docs/html-report.md):
 * the paired comparison per metric (B − A, its interval, the randomization
 * p-value, all from ../compare.ts), both runs' summaries, and the turns whose
 * hit@k flipped — hit→miss first, then miss→hit, each in dataset order — and,
 * below them, the turns whose hit@k held but whose recall@k or nDCG@k moved
 * by at least SHIFT_THRESHOLD; each row opens both runs' turn views. With
 * `funnels` (../compare.ts compareFunnels) it also shows both runs' stage
 * funnels with their intervals and the paired difference per stage.
 */
import type { FunnelComparison, KeyComparison } from "./compare.js";
import { HIT_KEY, metricKey } from "../measures/metrics.js";
import { SIGNIFICANCE_LEVEL } from "../report/render.js";
import type { Report, TurnReport } from "../report/types.js";
import { DEFAULT_RESAMPLE, DEFAULT_SAMPLES, type ResampleUnit } from "../stats/bootstrap.js";
import { funnelDiff, funnelStages, perTurnStages } from "../report/funnel-stats.js";
import { renderPage } from "../report/html/page.js";
import { registryPageData, runPageData, type RunPageData } from "../report/html/report-page.js";

const RECALL_KEY = metricKey("recall");
const NDCG_KEY = metricKey("ndcg");

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

/**
 * A run's page data holding only what the compare page's turn views need:
 * the turns at `open` (indices into `report.turns`) in full, and the earlier
 * turns of the same cases (the conversation so far) with only their user
 * text, answer and refusal — no trace, scores or citations. Dataset order is
 * kept; `index` maps an index in `report.turns` to its index in the kept list.
 * Summary figures, counts and the funnel stay those of the whole run.
 */
function keptRun(report: Report, name: string, open: ReadonlySet<number>): { run: RunPageData; index: Map<number, number> } {
  const full = runPageData(report, name);
  const lastOpen = new Map<string, number>();
  for (const i of open) {
    const t = report.turns[i]!;
    lastOpen.set(t.caseId, Math.max(lastOpen.get(t.caseId) ?? -1, t.turn));
  }
  const kept = report.turns.flatMap((t, i) => (open.has(i) || t.turn < (lastOpen.get(t.caseId) ?? -1) ? [i] : []));
  const index = new Map(kept.map((i, j) => [i, j]));
  const turns = kept.map((i): TurnReport => {
    const t = report.turns[i]!;
    if (open.has(i)) return t;
    const { trace: _trace, ...rest } = t;
    return { ...rest, retrievedIds: [], citedIds: [], results: [] };
  });
  const ids = new Set(kept.filter((i) => open.has(i)).map((i) => `${report.turns[i]!.caseId}#${report.turns[i]!.turn}`));
  const timings = report.timings === undefined ? undefined : { ...report.timings, turns: Object.fromEntries(Object.entries(report.timings.turns).filter(([id]) => ids.has(id))) };
  return {
    run: { ...full, report: { ...report, turns, ...(timings === undefined ? {} : { timings }) }, view: { ...full.view, cuts: kept.map((i) => full.view.cuts[i]!) } },
    index,
  };
}

/** Both reports' stage funnels and the paired difference per stage (what compareFunnels gives for two report files). */
function reportFunnels(a: Report, b: Report, o: { seed: number; resample: ResampleUnit }): FunnelComparison {
  const opts = { seed: o.seed, samples: DEFAULT_SAMPLES, resample: o.resample };
  return { a: funnelStages(a.turns, opts), b: funnelStages(b.turns, opts), diff: funnelDiff(perTurnStages(a.turns), perTurnStages(b.turns), opts) };
}

/**
 * The compare page. To stay small it embeds, of each run's turns, only the
 * flipped and shifted ones and their conversations (docs/html-report.md);
 * everything else it shows comes from the aggregates and `comparisons`.
 */
export function renderHtmlComparison(
  a: { name: string; report: Report },
  b: { name: string; report: Report },
  comparisons: KeyComparison[],
  opts: {
    seed: number;
    /** Both stage funnels and the paired difference per stage, as compareFunnels gave them; absent: computed here from the two reports with the same seed and unit. */
    funnels?: FunnelComparison;
    /** What the paired bootstrap resampled (default: cases). */
    resample?: ResampleUnit;
  },
): string {
  const flips = flippedTurns(a.report, b.report);
  const shifts = shiftedTurns(a.report, b.report);
  const ka = keptRun(a.report, a.name, new Set([...flips, ...shifts].map((f) => f.a)));
  const kb = keptRun(b.report, b.name, new Set([...flips, ...shifts].map((f) => f.b)));
  const remap = <T extends { a: number; b: number }>(f: T): T => ({ ...f, a: ka.index.get(f.a)!, b: kb.index.get(f.b)! });
  return renderPage(`retrace compare: ${a.name} vs ${b.name}`, {
    kind: "compare",
    significance: SIGNIFICANCE_LEVEL,
    registry: registryPageData(),
    seed: opts.seed,
    a: ka.run,
    b: kb.run,
    comparisons,
    flips: flips.map(remap),
    shiftThreshold: SHIFT_THRESHOLD,
    shifts: shifts.map(remap),
    funnels: opts.funnels ?? reportFunnels(a.report, b.report, { seed: opts.seed, resample: opts.resample ?? DEFAULT_RESAMPLE }),
    resample: opts.resample ?? DEFAULT_RESAMPLE,
  });
}
