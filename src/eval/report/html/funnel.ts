/**
 * Where gold goes through the retrieval, derived from the report's per-turn
 * trace summaries (goldPositions + retrievedIds, read by ../gold-ranks.ts) for
 * the HTML report (docs/html-report.md): the stage that lost each gold card
 * (the one rule of ../attribution.ts); the recall@k curves per stage are the
 * report's `recallCurves` (../recall-curves.ts, computed at build). The stage
 * funnel is not here: the page draws the report's `funnel`
 * (../funnel-stats.ts). A turn of retrace's
 * graph is read through the stage registry (dense, BM25, fused, ...); a turn
 * captured from a user's graph's retriever runs (`--graph`) through its
 * captured lists, grouped as child runs, scored calls and the final top-k
 * (CAPTURED_STAGES). Pure; nothing here reads a file or the clock.
 */
import { capturedChains, lostAt, lostAtText, NOT_RETRIEVED, pipelineChain } from "../attribution.js";
import { NO_RETRIEVAL, retrievalCallText } from "../graph-report.js";
import { capturedLists } from "../gold-ranks.js";
import type { Report, TurnReport } from "../types.js";

/**
 * The stage that lost `gold` on turn `t`, by the one rule (lostAt,
 * ../attribution.ts): null when it reached the top-k (or the turn has no
 * trace); `"retrieval"` when no list held it (and for a gold-bearing turn
 * with no retrieval); `"final"` when a scored list held it below k (cut at
 * k); otherwise the stage that dropped it (`"fused"` when fusion lost a
 * branch's card; a captured call's key when only its child runs listed it).
 */
export function cutStage(t: TurnReport, gold: string): string | null {
  if (t.noRetrieval === true) return NOT_RETRIEVED;
  const tr = t.trace;
  if (tr === undefined) return null;
  const inTopK = tr.retrievedIds.includes(gold);
  const lists = capturedLists(t);
  return lostAt(lists === null ? [pipelineChain(tr.goldPositions[gold] ?? {})] : capturedChains(lists, gold), inTopK);
}

/** A missed gold card's cut stage and its "lost at" words. */
export interface LostAt {
  at: string;
  text: string;
}

/** cutStage with its words: "cut at k", "not retrieved (…)", "no retrieval" for a turn that made no retriever run. */
export function lostAtOf(t: TurnReport, gold: string): LostAt | null {
  const at = cutStage(t, gold);
  if (at === null) return null;
  return { at, text: t.noRetrieval === true ? NO_RETRIEVAL : lostAtText(at, capturedLists(t) !== null) };
}

/** What the HTML pages draw beyond the report itself: cut stages per turn (the funnel is the report's `funnel`, the recall curves its `recallCurves`). */
export interface PipelineView {
  /** `pipeline`: retrace's stages; `captured`: a `--graph` run's retriever calls (its funnel text names no branch the graph may not have). */
  kind: "pipeline" | "captured";
  /** The notes under the funnel and under the curves. */
  text: { funnel: string; curves: string };
  /** `cuts[i][gold]` = lostAtOf(report.turns[i], gold): null when the card reached the top-k or the turn has no trace. */
  cuts: Record<string, LostAt | null>[];
}

/**
 * The funnel and curve notes of a report, naming only the rows its funnel
 * table has (`report.funnel.stages`): retrace's pipeline keeps its words; a
 * `--graph` run's name only what was captured.
 */
function viewText(report: Report, kind: PipelineView["kind"]): PipelineView["text"] {
  const k = report.run.k;
  const rows = new Set((report.funnel?.stages ?? []).map((s) => s.stage));
  if (kind === "pipeline")
    return {
      funnel: `${rows.has("dense") && rows.has("bm25") ? "dense and BM25 are parallel branches; fused onwards is sequential. " : ""}A drop between two stages is the gold lost there. final top-k is what hit@${k} scores.`,
      curves:
        "Ranks at chunk stages (dense, BM25, fused, reranked) are the rank of the card's best chunk, so k counts chunks there and cards at parents and final. The dashed line is the run's k.",
    };
  const call = report.run.graph?.retrievalCall ?? "last";
  return {
    funnel: `Rows are the lists captured from your graph's retriever runs: ${capturedRowsText(rows, call, k)}. A drop between two rows is the gold lost there. Gold-bearing turns that made no retriever run count in n and in no row.`,
    curves: `Ranks are card positions: at scored calls in the joined list (past the dashed line, what a larger k would have scored), at child runs the best rank in any child run's list. The dashed line is the run's k.`,
  };
}

/** The captured funnel's rows present, each worded (child runs only when some scored call had them). */
function capturedRowsText(
  rows: ReadonlySet<string>,
  call: NonNullable<Report["run"]["graph"]>["retrievalCall"],
  k: number,
): string {
  const parts = [
    rows.has("child") ? "child runs (lists of retrievers nested in a scored call)" : null,
    rows.has("scored")
      ? `scored calls (the scored calls' own lists joined in start order, first occurrence wins: the list the top-k is cut from; scored per turn: ${retrievalCallText(call ?? "last")})`
      : null,
    rows.has("final") ? `final top-k, what hit@${k} scores` : null,
  ].filter((x): x is string => x !== null);
  return parts.length <= 1 ? (parts[0] ?? "none") : `${parts.slice(0, -1).join(", ")} and ${parts[parts.length - 1]}`;
}

export function pipelineView(report: Report): PipelineView {
  // A --graph run is read through its captured calls unless its graph ran retrace's own retrieve node (whose trace has retrace's stages).
  const kind =
    report.run.graph !== undefined && !report.turns.some((t) => t.captured?.source === "retrace")
      ? "captured"
      : "pipeline";
  return {
    kind,
    text: viewText(report, kind),
    cuts: report.turns.map((t) => Object.fromEntries(t.gold.map((g) => [g, lostAtOf(t, g)]))),
  };
}
