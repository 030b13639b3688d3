/**
 * Report lines of a `--graph` run (docs/evaluate-your-graph.md): the header
 * naming the graph, the captured retrievers, the id key and the retrieval-call
 * mode, the turns that threw or made no retriever run, and the
 * `retrace trace --graph` view of a captured turn. Pure.
 */
import { HIT_KEY } from "../measures/metrics.js";
import { capturedChains, CUT_AT_K, lostAt, lostAtText, NOT_RETRIEVED, ordinal } from "./attribution.js";
import type { Report, TurnReport } from "./types.js";

/** The label of a `--graph` turn that made no retriever run, in every view (text, markdown, JSON comments, JUnit, HTML). */
export const NO_RETRIEVAL = "no retrieval";

/** What `--retrieval-call` scores, in words (src/eval/sweep/capture.ts). */
export function retrievalCallText(call: "last" | "first" | "all"): string {
  return call === "all" ? "every call" : `the ${call} step (all its calls; calls overlapping in time are one step)`;
}

/** Header lines: the generic-rules locales of the built-in graph, and the `--graph` facts. */
export function graphHeaderLines(report: Report): string[] {
  const generic = report.run.genericLocales ?? [];
  const genericLine = generic.length > 0 ? [`generic rules (no built-in follow-up, policy or refusal tables) for: ${generic.join(", ")}`] : [];
  const g = report.run.graph;
  if (g === undefined) return genericLine;
  const lines = [
    ...genericLine,
    `graph: ${g.file}#${g.exportName}${g.catalog !== undefined ? `  catalog: ${g.catalog}` : ""}`,
    `captured retriever(s): ${g.retrievers.length === 0 ? "none" : g.retrievers.join(", ")}  id key: ${g.idKey}  retrieval call scored: ${g.retrievalCall}`,
  ];
  // Reports written before the step and unknown-id rules lack these facts.
  if (g.multiCallTurns !== undefined && g.retrievalTurns !== undefined)
    lines.push(
      `retriever calls: ${g.multiCallTurns} of ${g.retrievalTurns} turn${g.retrievalTurns === 1 ? "" : "s"} with a retrieval made several (${g.parallelCallTurns ?? 0} with calls in parallel, ${g.multiStepTurns ?? 0} with several steps); scored per turn: ${retrievalCallText(g.retrievalCall)}`,
    );
  if (g.scoredIds !== undefined && g.unknownIds !== undefined)
    lines.push(
      `scored ids: ${g.scoredIds} in the top-${report.run.k} lists, ${g.unknownIds} naming no card of the ${g.catalog !== undefined ? "catalog" : "KB"}${g.unknownIds > 0 && (g.unknownExamples ?? []).length > 0 ? ` (e.g. ${(g.unknownExamples ?? []).join(", ")})` : ""}`,
    );
  return lines;
}

/**
 * Warnings of a `--graph` run: every retrieval empty, ids naming no card
 * (fewer than the refusal threshold), locales whose turns retrieved none of
 * their cards (left out when every retrieval was empty). Empty otherwise.
 */
export function graphWarnings(report: Report): string[] {
  const g = report.run.graph;
  if (g === undefined) return [];
  const out: string[] = [];
  const allEmpty = (g.retrievalTurns ?? 0) > 0 && g.emptyRetrievalTurns === g.retrievalTurns;
  if (allEmpty)
    out.push(
      `every retrieval returned nothing: all ${g.retrievalTurns} turn${g.retrievalTurns === 1 ? "" : "s"} that called a retriever got an empty list, so every gold-bearing turn scores 0 (is the store empty, or filtered by a wrong user or tenant id in the graph's configuration?)`,
    );
  if ((g.unknownIds ?? 0) > 0)
    out.push(
      `${g.unknownIds} of the ${g.scoredIds ?? 0} scored ids name no card of the ${g.catalog !== undefined ? "catalog" : "KB"} (e.g. ${(g.unknownExamples ?? []).join(", ")}); they count as misses. If they are your cards under another id, use --id-key or --id-map; if your store holds documents the KB does not list, list them in a --catalog file.`,
    );
  if (!allEmpty)
    for (const locale of g.localesWithoutCards ?? [])
    out.push(`locale ${locale}: its turns called a retriever but retrieved no card of ${locale} (does the store hold that locale's documents?)`);
  return out;
}

/** The retrieval facts of one turn of a `--graph` run, for its turn lines: "no retrieval", unknown ids, several calls. "" otherwise. */
export function graphTurnTag(report: Report, t: TurnReport): string {
  if (report.run.graph === undefined) return "";
  const parts: string[] = [];
  if (t.noRetrieval === true) parts.push(`${NO_RETRIEVAL} (the turn made no retriever run)`);
  const c = t.captured;
  if (c !== undefined) {
    if ((c.unknownIds ?? []).length > 0) parts.push(`unknown ids: ${c.unknownIds!.length} [${c.unknownIds!.join(", ")}]`);
    if (c.topLevelRuns > 1) {
      const steps = c.steps ?? c.topLevelRuns;
      parts.push(`retriever calls: ${c.topLevelRuns} in ${steps} step${steps === 1 ? "" : "s"}, ${c.retrievers.length} scored`);
    }
  }
  return parts.join("; ");
}

/** The errored and retrieval-less turns of a `--graph` run, listed and counted, then its warnings; empty otherwise. */
export function graphTurnNotes(report: Report): string[] {
  const g = report.run.graph;
  if (g === undefined) return [];
  const lines: string[] = [];
  const errors = report.turns.filter((t) => t.error !== undefined);
  lines.push(`turn errors (the graph run threw; not scored, not counted as misses): ${errors.length}`);
  for (const t of errors) lines.push(`  ${t.caseId}#${t.turn} ${t.locale}  ${JSON.stringify(t.error)}`);
  const none = report.turns.filter((t) => t.noRetrieval === true);
  const list = (ts: readonly TurnReport[]) => ts.map((t) => `  ${t.caseId}#${t.turn} ${t.locale}  ${JSON.stringify(t.user)}`);
  if (g.noRetrievalMisses === undefined) {
    // A report written before no-retrieval turns were judged by their gold.
    lines.push(`no retrieval captured (left out of retrieval means): ${none.length}`, ...list(none));
  } else {
    const missed = none.filter((t) => t.gold.length > 0);
    const fine = none.filter((t) => t.gold.length === 0);
    lines.push(`${NO_RETRIEVAL} on a gold-bearing turn (scored as a miss: hit, recall, nDCG 0): ${missed.length}`, ...list(missed));
    lines.push(`${NO_RETRIEVAL}, none needed (empty gold): ${fine.length}`, ...list(fine));
  }
  for (const w of graphWarnings(report)) lines.push(`warning: ${w}`);
  return lines;
}

/** A captured stage as rendered: nested child run or scored run. */
export interface StageView {
  key: string;
  role: "child" | "final";
  ids: string[];
  error: string | null;
  /** The 1-based retrieval step of the call the list belongs to; absent in reports written before steps were recorded per list. */
  step?: number;
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
  const cut = lostAt(capturedChains(stages, gold), pos >= 0);
  const tail = cut === null ? `retrieved at rank ${pos + 1} of the top-${k}` : cut === CUT_AT_K ? `cut at k=${k}` : cut === NOT_RETRIEVED ? "not retrieved" : lostAtText(cut, true);
  return `${gold}: ${[...parts, tail].join(", ")}`;
}

/** `retrace trace --graph` rendering of one turn captured from retriever callbacks. */
export function renderCapturedTurn(t: TurnReport, total: number, k: number, top: number): string {
  const lines: string[] = [];
  lines.push(`=== ${t.caseId} turn ${t.turn} of ${total} (0-based; ${t.locale}, ${t.kind}, expect ${t.expect})`);
  lines.push(`user:  ${JSON.stringify(t.user)}`);
  const c = t.captured;
  if (t.error !== undefined) lines.push(`error: the graph run threw: ${t.error}`);
  else if (c === undefined)
    lines.push(
      `retrieval: ${NO_RETRIEVAL} (the turn made no retriever run)${t.noRetrieval !== true ? "" : t.gold.length > 0 ? "; a gold-bearing turn: scored as a miss" : "; empty gold: none needed"}`,
    );
  else {
    const steps = c.steps ?? c.topLevelRuns;
    const calls = `${c.topLevelRuns} top-level call${c.topLevelRuns === 1 ? "" : "s"} in the turn${c.steps !== undefined && c.topLevelRuns > 1 ? `, in ${steps} step${steps === 1 ? "" : "s"} (calls overlapping in time are one step); ${c.retrievers.length} scored` : ""}`;
    lines.push(`retrieval: captured from retriever callbacks: ${c.retrievers.join(", ")} (${calls})`);
    if ((c.unknownIds ?? []).length > 0) lines.push(`  unknown ids (no card of the KB or catalog; misses): ${c.unknownIds!.join(", ")}`);
    if (c.noChildRuns.length > 0) lines.push(`  no child runs: ${c.noChildRuns.join(", ")} (its inner searches emit no retriever runs; no stages to show)`);
    lines.push(`query: ${JSON.stringify(t.trace?.query ?? "")}`);
    lines.push(`gold:  ${t.gold.length === 0 ? "none (no-match turn: not scored)" : t.gold.join(", ")}`);
    const retrieved = t.retrievedIds ?? [];
    for (const g of t.gold) lines.push(`  ${retrieved.slice(0, k).includes(g) ? "HIT " : "MISS"} ${explainCapturedGold(c.stages, c.noChildRuns, retrieved, g, k)}`);
    const gold = new Set(t.gold);
    for (const s of c.stages) {
      const shown = s.ids.slice(0, top);
      const step = s.step !== undefined && steps > 1 ? `step ${s.step} of ${steps}, ` : "";
      lines.push(`  ${s.role === "child" ? "child" : "scored"} ${s.key} (${step}${s.ids.length} cards${s.ids.length > shown.length ? `, top ${shown.length} shown` : ""})${s.error !== null ? ` failed: ${s.error}` : ""}:`);
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
