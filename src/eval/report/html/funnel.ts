/**
 * The words of the HTML report's stage funnel and recall curves
 * (docs/html-report.md): which rows the notes under them name. Nothing here
 * computes a figure: the stage funnel is the report's `funnel`
 * (../funnel-stats.ts), the recall@k curves per stage its `recallCurves`
 * (../recall-curves.ts, computed at build), and the stage that lost each
 * missed gold card its turns' `goldLostAt` (../lost-at.ts, computed when the
 * turn is scored). A run of retrace's graph is worded by its stages (dense,
 * BM25, fused, ...); a run captured from a user's graph's retriever runs
 * (`--graph`) by its captured lists: child runs, scored calls and the final
 * top-k (CAPTURED_STAGES). Pure; nothing here reads a file or the clock.
 */
import { retrievalCallText } from "../graph-report.js";
import type { Report } from "../types.js";

/** What the HTML pages word beyond the report itself: the funnel's and curves' notes (the funnel is the report's `funnel`, the recall curves its `recallCurves`, each missed gold card's "lost at" its turn's `goldLostAt`). */
export interface PipelineView {
  /** `pipeline`: retrace's stages; `captured`: a `--graph` run's retriever calls (its funnel text names no branch the graph may not have). */
  kind: "pipeline" | "captured";
  /** The notes under the funnel and under the curves. */
  text: { funnel: string; curves: string };
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
  };
}
