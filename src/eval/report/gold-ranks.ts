/**
 * The rank of each gold card at each stage of one turn, read from the turn's
 * trace summary (retrace's stages) or, for a turn captured from a user's
 * graph's retriever runs (`--graph`), from its captured lists grouped as
 * child runs, scored calls and the final top-k (CAPTURED_STAGES, ./stages.ts).
 * The one reading of "where was the gold" behind the report's stage funnel
 * (./funnel-stats.ts) and the HTML page's recall curves and "lost at" column
 * (./html/funnel.ts). Pure.
 */
import type { TurnReport } from "./types.js";

/** A turn whose lists were captured from a user's graph's retriever runs (not retrace's own trace). */
export function capturedLists(t: TurnReport): NonNullable<TurnReport["captured"]>["stages"] | null {
  return t.captured !== undefined && t.captured.source === "callbacks" ? t.captured.stages : null;
}

/** The scored calls' own lists joined in start order, first occurrence wins: what the top-k of a captured turn is cut from. */
export function scoredCandidates(stages: NonNullable<TurnReport["captured"]>["stages"]): string[] {
  const seen = new Set<string>();
  for (const s of stages) if (s.role === "final") for (const id of s.ids) seen.add(id);
  return [...seen];
}

const rankIn = (ids: readonly string[], id: string) => (ids.includes(id) ? ids.indexOf(id) + 1 : null);

/**
 * Rank of one gold card at each stage of one turn (1-based; null = absent),
 * `final` included. A captured turn gives `child` (its best rank in any child
 * run's list, when the turn has child runs), `scored` (in the joined scored
 * lists) and `final`; a gold-bearing turn with no retrieval gives `scored` and
 * `final` null. null when the turn has no trace (not measured, or an error).
 */
export function goldRanks(t: TurnReport, gold: string): Record<string, number | null> | null {
  if (t.noRetrieval === true) return { scored: null, final: null };
  const tr = t.trace;
  if (tr === undefined) return null;
  const idx = tr.retrievedIds.indexOf(gold);
  const final = idx >= 0 ? idx + 1 : null;
  const lists = capturedLists(t);
  if (lists === null) return { ...(tr.goldPositions[gold] ?? {}), final };
  const kids = lists.filter((s) => s.role === "child").map((s) => rankIn(s.ids, gold));
  const ranks: Record<string, number | null> = {};
  if (kids.length > 0)
    ranks.child = kids.reduce<number | null>((best, r) => (r !== null && (best === null || r < best) ? r : best), null);
  return { ...ranks, scored: rankIn(scoredCandidates(lists), gold), final };
}
