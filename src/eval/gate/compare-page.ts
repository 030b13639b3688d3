/**
 * `retrace compare A B --out html:`: both runs side by side (docs/html-report.md):
 * the paired comparison per metric (B − A, its paired bootstrap interval and
 * p, all from ./compare.ts), both runs' summaries, and the turns whose
 * hit@k flipped (./compare.ts turnFlips) — hit→miss first, then miss→hit, each in dataset order — and,
 * below them, the turns whose hit@k held but whose recall@k or nDCG@k moved
 * by at least SHIFT_THRESHOLD; each row opens both runs' turn views; and
 * both runs' stage funnels with their intervals and the paired difference per
 * stage (./compare.ts compareFunnels). It computes no statistic itself.
 */
import {
  comparisonNote,
  type ComparisonMethod,
  type FunnelComparison,
  type KeyComparison,
  type TurnFlip,
} from "./compare.js";
import { HIT_KEY, metricKey } from "../measures/metrics.js";
import type { Report, TurnReport } from "../report/types.js";
import { renderPage } from "../report/html/page.js";
import type { ComparePageData } from "../report/html/page-data.js";
import { registryPageData, runPageData, type RunPageData } from "../report/html/report-page.js";

const RECALL_KEY = metricKey("recall");
const NDCG_KEY = metricKey("ndcg");

/** The smallest |B − A| of recall@k or nDCG@k for which a turn whose hit@k held is listed as shifted (docs/html-report.md). */
export const SHIFT_THRESHOLD = 0.2;
/** Float rounding allowed when comparing a change with the threshold. */
const FLOAT_SLACK = 1e-9;

/**
 * What the compare page shows of the comparison, all of it computed by
 * ./compare.ts and handed in, so the page and `retrace compare` print the
 * same figures and name the same test: `comparisons` (compareRuns),
 * `method` (comparisonMethod, with the options compareRuns was given),
 * `funnels` (compareFunnels) and `flips` (turnFlips).
 */
export interface PageComparison {
  comparisons: KeyComparison[];
  method: ComparisonMethod;
  funnels: FunnelComparison;
  flips: readonly TurnFlip[];
}

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
export function shiftedTurns(
  a: Pick<Report, "turns">,
  b: Pick<Report, "turns">,
  threshold: number = SHIFT_THRESHOLD,
): Shift[] {
  const inB = new Map(b.turns.map((t, i) => [`${t.caseId}#${t.turn}`, i]));
  const out: (Shift & { key: number })[] = [];
  a.turns.forEach((t, i) => {
    const id = `${t.caseId}#${t.turn}`;
    const j = inB.get(id);
    if (j === undefined) return;
    const u = b.turns[j]!;
    const [ha, hb, ra, rb, na, nb] = [
      hit(t),
      hit(u),
      scoreOf(t, RECALL_KEY),
      scoreOf(u, RECALL_KEY),
      scoreOf(t, NDCG_KEY),
      scoreOf(u, NDCG_KEY),
    ];
    if (
      ha === undefined ||
      hb === undefined ||
      ra === undefined ||
      rb === undefined ||
      na === undefined ||
      nb === undefined
    )
      return;
    if (ha !== hb) return;
    const recall = rb - ra;
    const ndcg = nb - na;
    if (Math.abs(recall) < threshold - FLOAT_SLACK && Math.abs(ndcg) < threshold - FLOAT_SLACK) return;
    out.push({ id, a: i, b: j, hit: ha, recall, ndcg, key: Math.abs(ndcg) > Math.abs(recall) ? ndcg : recall });
  });
  return out.sort((x, y) => x.key - y.key || x.a - y.a).map(({ key: _key, ...s }) => s);
}

/** The flips of ./compare.ts turnFlips, in its order, with each turn's index in A's and in B's `turns`. */
function pageFlips(a: Report, b: Report, flips: readonly TurnFlip[]): Flip[] {
  const index = (r: Report) => new Map(r.turns.map((t, i) => [`${t.caseId}#${t.turn}`, i]));
  const [ia, ib] = [index(a), index(b)];
  return flips.flatMap((f) => {
    const [i, j] = [ia.get(f.id), ib.get(f.id)];
    return i === undefined || j === undefined ? [] : [{ id: f.id, direction: f.direction, a: i, b: j }];
  });
}

/**
 * A run's page data holding only what the compare page's turn views need:
 * the turns at `open` (indices into `report.turns`) in full, and the earlier
 * turns of the same cases (the conversation so far) with only their user
 * text, answer and refusal — no trace, scores or citations. Dataset order is
 * kept; `index` maps an index in `report.turns` to its index in the kept list.
 * Summary figures, counts and the funnel stay those of the whole run.
 */
function keptRun(
  report: Report,
  name: string,
  open: ReadonlySet<number>,
): { run: RunPageData; index: Map<number, number> } {
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
  const ids = new Set(
    kept.filter((i) => open.has(i)).map((i) => `${report.turns[i]!.caseId}#${report.turns[i]!.turn}`),
  );
  const timings =
    report.timings === undefined
      ? undefined
      : {
          ...report.timings,
          turns: Object.fromEntries(Object.entries(report.timings.turns).filter(([id]) => ids.has(id))),
        };
  return {
    run: {
      ...full,
      report: { ...report, turns, ...(timings === undefined ? {} : { timings }) },
      view: { ...full.view, cuts: kept.map((i) => full.view.cuts[i]!) },
    },
    index,
  };
}

/**
 * The compare page. To stay small it embeds, of each run's turns, only the
 * flipped and shifted ones and their conversations (docs/html-report.md);
 * everything else it shows comes from the aggregates and `comparisons`.
 */
export function renderHtmlComparison(
  a: { name: string; report: Report },
  b: { name: string; report: Report },
  comparison: PageComparison,
): string {
  const flips = pageFlips(a.report, b.report, comparison.flips);
  const shifts = shiftedTurns(a.report, b.report);
  const ka = keptRun(a.report, a.name, new Set([...flips, ...shifts].map((f) => f.a)));
  const kb = keptRun(b.report, b.name, new Set([...flips, ...shifts].map((f) => f.b)));
  const remap = <T extends { a: number; b: number }>(f: T): T => ({
    ...f,
    a: ka.index.get(f.a)!,
    b: kb.index.get(f.b)!,
  });
  const data: ComparePageData = {
    kind: "compare",
    registry: registryPageData(),
    a: ka.run,
    b: kb.run,
    comparisons: comparison.comparisons,
    method: comparison.method,
    note: comparisonNote(comparison.method),
    flips: flips.map(remap),
    shiftThreshold: SHIFT_THRESHOLD,
    shifts: shifts.map(remap),
    funnels: comparison.funnels,
  };
  return renderPage(`retrace compare: ${a.name} vs ${b.name}`, data);
}
