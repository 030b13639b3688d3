/**
 * Report lines of a `--graph` run (docs/evaluate-your-graph.md): the header
 * naming the graph, the captured retrievers, the id key and the retrieval-call
 * mode, the turns that threw or made no retriever run, and the
 * `retrace trace --graph` view of a captured turn. Pure.
 */
import { HIT_KEY } from "../measures/metrics.js";
import { ordinal } from "./attribution.js";
import type { Report, TurnReport } from "./types.js";

/** Header lines: the generic-rules locales of the built-in graph, and the `--graph` facts. */
export function graphHeaderLines(report: Report): string[] {
  const generic = report.run.genericLocales ?? [];
  const genericLine = generic.length > 0 ? [`generic rules (no built-in follow-up, policy or refusal tables) for: ${generic.join(", ")}`] : [];
  const g = report.run.graph;
  if (g === undefined) return genericLine;
  return [
    ...genericLine,
    `graph: ${g.file}#${g.exportName}${g.catalog !== undefined ? `  catalog: ${g.catalog}` : ""}`,
    `captured retriever(s): ${g.retrievers.length === 0 ? "none" : g.retrievers.join(", ")}  id key: ${g.idKey}  retrieval call scored: ${g.retrievalCall}`,
  ];
}

/** The errored and retrieval-less turns of a `--graph` run, listed and counted; empty otherwise. */
export function graphTurnNotes(report: Report): string[] {
  if (report.run.graph === undefined) return [];
  const lines: string[] = [];
  const errors = report.turns.filter((t) => t.error !== undefined);
  lines.push(`turn errors (the graph run threw; not scored, not counted as misses): ${errors.length}`);
  for (const t of errors) lines.push(`  ${t.caseId}#${t.turn} ${t.locale}  ${JSON.stringify(t.error)}`);
  const none = report.turns.filter((t) => t.noRetrieval === true);
  lines.push(`no retrieval captured (left out of retrieval means): ${none.length}`);
  for (const t of none) lines.push(`  ${t.caseId}#${t.turn} ${t.locale}  ${JSON.stringify(t.user)}`);
  return lines;
}

/** A captured stage as rendered: nested child run or scored run. */
export interface StageView {
  key: string;
  role: "child" | "final";
  ids: string[];
  error: string | null;
}

/**
 * Where one gold card stood at each captured stage, in words:
 * "gold: 2nd in the BM25Retriever child, absent from the VectorStoreRetriever
 * child (4 listed), 7th after EnsembleRetriever: cut at k=5". `noChildRuns`
 * names scored runs whose children emitted no runs ("no child runs").
 */
export function explainCapturedGold(stages: readonly StageView[], noChildRuns: readonly string[], retrievedIds: readonly string[], gold: string, k: number): string {
  const parts = stages.map((s) => {
    const rank = s.ids.indexOf(gold);
    if (s.error !== null) return `${s.role === "child" ? `the ${s.key} child` : s.key} failed (${s.error})`;
    if (s.role === "child") return rank < 0 ? `absent from the ${s.key} child (${s.ids.length} listed)` : `${ordinal(rank + 1)} in the ${s.key} child`;
    const children = noChildRuns.includes(s.key) ? " (no child runs)" : "";
    return rank < 0 ? `absent after ${s.key}${children} (${s.ids.length} listed)` : `${ordinal(rank + 1)} after ${s.key}${children}`;
  });
  const pos = retrievedIds.slice(0, k).indexOf(gold);
  const inFinal = stages.some((s) => s.role === "final" && s.ids.includes(gold));
  const tail = pos >= 0 ? `retrieved at rank ${pos + 1} of the top-${k}` : inFinal ? `cut at k=${k}` : "not retrieved";
  return `${gold}: ${[...parts, tail].join(", ")}`;
}

/** `retrace trace --graph` rendering of one turn captured from retriever callbacks. */
export function renderCapturedTurn(t: TurnReport, total: number, k: number, top: number): string {
  const lines: string[] = [];
  lines.push(`=== ${t.caseId} turn ${t.turn} of ${total} (0-based; ${t.locale}, ${t.kind}, expect ${t.expect})`);
  lines.push(`user:  ${JSON.stringify(t.user)}`);
  const c = t.captured;
  if (t.error !== undefined) lines.push(`error: the graph run threw: ${t.error}`);
  else if (c === undefined) lines.push("retrieval: no retrieval captured (the turn made no retriever run)");
  else {
    lines.push(`retrieval: captured from retriever callbacks: ${c.retrievers.join(", ")} (${c.topLevelRuns} top-level call${c.topLevelRuns === 1 ? "" : "s"} in the turn)`);
    if (c.noChildRuns.length > 0) lines.push(`  no child runs: ${c.noChildRuns.join(", ")} (its inner searches emit no retriever runs; no stages to show)`);
    lines.push(`query: ${JSON.stringify(t.trace?.query ?? "")}`);
    lines.push(`gold:  ${t.gold.length === 0 ? "none (no-match turn: not scored)" : t.gold.join(", ")}`);
    const retrieved = t.retrievedIds ?? [];
    for (const g of t.gold) lines.push(`  ${retrieved.slice(0, k).includes(g) ? "HIT " : "MISS"} ${explainCapturedGold(c.stages, c.noChildRuns, retrieved, g, k)}`);
    const gold = new Set(t.gold);
    for (const s of c.stages) {
      const shown = s.ids.slice(0, top);
      lines.push(`  ${s.role === "child" ? "child" : "scored"} ${s.key} (${s.ids.length} cards${s.ids.length > shown.length ? `, top ${shown.length} shown` : ""})${s.error !== null ? ` failed: ${s.error}` : ""}:`);
      s.ids.forEach((id, i) => {
        if (i < top || gold.has(id)) lines.push(`    ${String(i + 1).padStart(3)}  ${id}${gold.has(id) ? `   <- gold${i >= top ? ` (below the shown top ${top})` : ""}` : ""}`);
      });
    }
    lines.push(`final top-${k}: [${retrieved.slice(0, k).join(", ")}]`);
  }
  const metrics = t.results.map((x) => `${x.key}=${Number.isInteger(x.score) ? x.score : x.score.toFixed(3)}`).join(" ");
  lines.push(`metrics: ${metrics === "" ? "none" : metrics}`);
  const comment = t.results.find((x) => x.key === HIT_KEY)?.comment;
  if (comment !== undefined) lines.push(`  ${comment}`);
  lines.push(`answer: ${JSON.stringify(t.answer)}`);
  return lines.join("\n");
}
