/**
 * Where gold goes through the pipeline, derived from the report's per-turn
 * trace summaries (goldPositions + retrievedIds) for the HTML report
 * (docs/html-report.md): the stage that cut each gold card, the stage funnel
 * (gold-bearing turns with a gold card in each stage's list) and recall@k
 * curves per stage. Pure; nothing here reads a file or the clock.
 */
import { STAGES } from "../stages.js";
import type { Report, TurnReport } from "../types.js";

/** Pipeline order (the stage registry's). `final` is the scored top-k (the turn's `retrievedIds`). */
export const PIPELINE_STAGES: readonly string[] = Object.freeze(STAGES.map((s) => s.id));
const BRANCHES: ReadonlySet<string> = new Set(STAGES.filter((s) => s.branch).map((s) => s.id));

/** Largest k drawn on the recall curves (stage lists are usually 20–40 long). */
export const MAX_CURVE_K = 50;

/** Rank of one gold card at each stage of one turn (1-based; null = absent), `final` included. */
export function goldRanks(t: TurnReport, gold: string): Record<string, number | null> | null {
  const tr = t.trace;
  if (tr === undefined) return null;
  const pos = tr.goldPositions[gold] ?? {};
  const idx = tr.retrievedIds.indexOf(gold);
  return { ...pos, final: idx >= 0 ? idx + 1 : null };
}

/**
 * The stage that lost `gold` on turn `t`: null when it reached the top-k (or
 * the turn has no trace); `"retrieval"` when no branch (dense, BM25) listed
 * it; otherwise the first stage after the branches whose list no longer holds
 * it (`"parents"` is possible only if dedup dropped it; `"final"` means it was
 * a listed card but cut at k).
 */
export function cutStage(t: TurnReport, gold: string): string | null {
  const ranks = goldRanks(t, gold);
  if (ranks === null || ranks.final !== null) return null;
  const stages = PIPELINE_STAGES.filter((s) => s in ranks);
  const branches = stages.filter((s) => BRANCHES.has(s));
  if (branches.length > 0 && branches.every((s) => ranks[s] === null)) return "retrieval";
  for (const s of stages) if (!BRANCHES.has(s) && ranks[s] === null) return s === "fused" && branches.length === 0 ? "retrieval" : s;
  return "final";
}

export interface FunnelRow {
  stage: string;
  /** Gold-bearing traced turns whose stage list holds at least one gold card. */
  turns: number;
}

export interface Funnel {
  /** Gold-bearing turns with a trace (the denominator). */
  n: number;
  rows: FunnelRow[];
}

function traced(turns: readonly TurnReport[]): TurnReport[] {
  return turns.filter((t) => t.gold.length > 0 && t.trace !== undefined);
}

/** Stages present in any of the turns, in pipeline order. */
function stagesOf(turns: readonly TurnReport[]): string[] {
  const seen = new Set<string>(["final"]);
  for (const t of turns) for (const g of t.gold) for (const s of Object.keys(t.trace?.goldPositions[g] ?? {})) seen.add(s);
  return PIPELINE_STAGES.filter((s) => seen.has(s));
}

/**
 * Funnel over `turns`: for each stage, how many gold-bearing traced turns had
 * any gold card in that stage's list (for chunk stages, any chunk of it).
 * Edge case: no traced gold-bearing turn → `{ n: 0, rows: [] }`.
 */
export function stageFunnel(turns: readonly TurnReport[]): Funnel {
  const ts = traced(turns);
  if (ts.length === 0) return { n: 0, rows: [] };
  return {
    n: ts.length,
    rows: stagesOf(ts).map((stage) => ({
      stage,
      turns: ts.filter((t) => t.gold.some((g) => (goldRanks(t, g)?.[stage] ?? null) !== null)).length,
    })),
  };
}

export interface RecallCurve {
  stage: string;
  /** `values[i]` is mean recall at k = i + 1. */
  values: number[];
}

/**
 * recall@k per stage for k = 1..maxK: the mean over gold-bearing traced turns
 * of |{gold card whose rank at the stage ≤ k}| / |gold|. Ranks at chunk
 * stages are the rank of the card's best chunk, so k counts list positions of
 * that stage (chunks before parent dedup, cards after). maxK is the longest
 * stage list seen (from `stageSizes`, else the run's k), capped at MAX_CURVE_K.
 * At `final`, k = run k gives the report's recall@k mean.
 */
export function recallCurves(turns: readonly TurnReport[], runK: number): { maxK: number; curves: RecallCurve[] } {
  const ts = traced(turns);
  if (ts.length === 0) return { maxK: 0, curves: [] };
  let maxK = runK;
  for (const t of ts) for (const n of Object.values(t.trace?.stageSizes ?? {})) maxK = Math.max(maxK, n);
  maxK = Math.min(maxK, MAX_CURVE_K);
  const curves = stagesOf(ts).map((stage) => {
    const values: number[] = [];
    for (let k = 1; k <= maxK; k++) {
      let sum = 0;
      for (const t of ts) {
        const inK = t.gold.filter((g) => {
          const r = goldRanks(t, g)?.[stage] ?? null;
          return r !== null && r <= k;
        }).length;
        sum += inK / t.gold.length;
      }
      values.push(sum / ts.length);
    }
    return { stage, values };
  });
  return { maxK, curves };
}

/** Everything the HTML pages draw beyond the report itself: funnels and curves overall and per locale, cut stages per turn. */
export interface PipelineView {
  funnel: { all: Funnel; locale: Record<string, Funnel> };
  curves: { all: { maxK: number; curves: RecallCurve[] }; locale: Record<string, { maxK: number; curves: RecallCurve[] }> };
  /** `cuts[i][gold]` = cutStage(report.turns[i], gold), for gold-bearing traced turns. */
  cuts: Record<string, string | null>[];
}

export function pipelineView(report: Report): PipelineView {
  const locales = [...new Set(report.turns.map((t) => t.locale))];
  const byLocale = (l: string) => report.turns.filter((t) => t.locale === l);
  return {
    funnel: { all: stageFunnel(report.turns), locale: Object.fromEntries(locales.map((l) => [l, stageFunnel(byLocale(l))])) },
    curves: {
      all: recallCurves(report.turns, report.run.k),
      locale: Object.fromEntries(locales.map((l) => [l, recallCurves(byLocale(l), report.run.k)])),
    },
    cuts: report.turns.map((t) => Object.fromEntries(t.gold.map((g) => [g, cutStage(t, g)]))),
  };
}
