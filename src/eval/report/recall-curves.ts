/**
 * The report's `recallCurves` section (docs/html-report.md, "Stage funnel"):
 * recall@k per stage for k = 1..maxK, overall and per locale, computed once
 * when the report is built (./aggregate.ts `buildReport`); the HTML page only
 * draws them. Ranks come from ./gold-ranks.ts (the trace's goldPositions, or
 * a `--graph` turn's captured lists), stages from the one declaration in
 * ./stages.ts. Pure.
 */
import { capturedLists, goldRanks, scoredCandidates } from "./gold-ranks.js";
import { FUNNEL_STAGES, STAGES } from "./stages.js";
import type { TurnReport } from "./types.js";
import type { RecallCurve, RecallCurves, RecallCurvesReport } from "./schemas/funnel.js";

/** Pipeline order (the stage registry's). `final` is the scored top-k (the turn's `retrievedIds`). */
export const PIPELINE_STAGES: readonly string[] = Object.freeze(STAGES.map((s) => s.id));
/** Every curve in order: retrace's stages, then a captured turn's groups, then `final` (the funnel's rows without the query). */
const ROW_ORDER: readonly string[] = Object.freeze(FUNNEL_STAGES.filter((s) => s.id !== "query").map((s) => s.id));

/** Largest k drawn on the recall curves (stage lists are usually 20–40 long). */
export const MAX_CURVE_K = 50;

export type { RecallCurve, RecallCurves, RecallCurvesReport };

/** The full length of each stage's list of a turn (what the recall curves extend to). */
function stageSizesOf(t: TurnReport): Record<string, number> {
  const lists = capturedLists(t);
  if (lists === null) return t.trace?.stageSizes ?? {};
  const kids = lists.filter((s) => s.role === "child").map((s) => s.ids.length);
  return { ...(kids.length > 0 ? { child: Math.max(...kids) } : {}), scored: scoredCandidates(lists).length };
}

function traced(turns: readonly TurnReport[]): TurnReport[] {
  return turns.filter((t) => t.gold.length > 0 && (t.trace !== undefined || t.noRetrieval === true));
}

/**
 * recall@k per stage for k = 1..maxK: the mean over gold-bearing traced turns
 * of |{gold card whose rank at the stage ≤ k}| / |gold|. Ranks at chunk
 * stages are the rank of the card's best chunk, so k counts list positions of
 * that stage (chunks before parent dedup, cards after). maxK is the longest
 * stage list seen (from `stageSizes`, else the run's k), capped at MAX_CURVE_K.
 * At `final`, k = run k gives the report's recall@k mean.
 */
export function recallCurves(turns: readonly TurnReport[], runK: number): RecallCurves {
  const ts = traced(turns);
  if (ts.length === 0) return { maxK: 0, curves: [] };
  let maxK = runK;
  for (const t of ts) for (const n of Object.values(stageSizesOf(t))) maxK = Math.max(maxK, n);
  maxK = Math.min(maxK, MAX_CURVE_K);
  // Each gold card's ranks, read once per turn (not once per k).
  const ranks = ts.map((t) => t.gold.map((g) => goldRanks(t, g) ?? {}));
  const seen = new Set<string>(["final"]);
  for (const perGold of ranks) for (const r of perGold) for (const s of Object.keys(r)) seen.add(s);
  const n = ts.length;
  const goldCount = new Float64Array(n);
  for (let i = 0; i < n; i++) goldCount[i] = ts[i]!.gold.length;
  // Per stage, each turn's gold ranks ascending (flat: turn i's at start[i] … start[i+1]-1) and how many of them are
  // ≤ k so far (`inK`, advanced as k grows): the same counts, divided and summed in the same order, as counting each
  // turn's ranks afresh for every k, without an array a turn and k (200,000 turns × 50 k × 4 stages).
  const start = new Int32Array(n + 1);
  const inK = new Int32Array(n);
  const curves = ROW_ORDER.filter((s) => seen.has(s)).map((stage) => {
    const sorted: number[] = [];
    for (let i = 0; i < n; i++) {
      start[i] = sorted.length;
      const from = sorted.length;
      for (const r of ranks[i]!) {
        const rank = r[stage];
        if (rank !== undefined && rank !== null) sorted.push(rank);
      }
      if (sorted.length - from > 1) {
        const mine = sorted.slice(from).sort((a, b) => a - b);
        for (let j = 0; j < mine.length; j++) sorted[from + j] = mine[j]!;
      }
    }
    start[n] = sorted.length;
    inK.fill(0);
    const values: number[] = [];
    for (let k = 1; k <= maxK; k++) {
      let sum = 0;
      for (let i = 0; i < n; i++) {
        let c = inK[i]!;
        while (start[i]! + c < start[i + 1]! && sorted[start[i]! + c]! <= k) c++;
        inK[i] = c;
        sum += c / goldCount[i]!;
      }
      values.push(sum / n);
    }
    return { stage, values };
  });
  return { maxK, curves };
}

/** The curves of a report's turns: overall and per locale (the report's `recallCurves`). */
export function recallCurvesOf(turns: readonly TurnReport[], runK: number): RecallCurvesReport {
  const locales = [...new Set(turns.map((t) => t.locale))];
  return {
    all: recallCurves(turns, runK),
    locale: Object.fromEntries(
      locales.map((l) => [
        l,
        recallCurves(
          turns.filter((t) => t.locale === l),
          runK,
        ),
      ]),
    ),
  };
}
