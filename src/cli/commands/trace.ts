/**
 * `retrace trace CASE_ID [--turn N]`: the per-turn debugger (src/app/trace.ts)
 * printed: for each turn, the user's text and the contextualized query, every
 * stage's ranked list (dense, BM25, fused, reranked, parents) with scores and
 * the gold cards marked, where each gold card stood at each stage and why it
 * was or was not retrieved, the final top-k, the metrics, and the answer with
 * its citations. `run.history` (a key of `--config`) bounds the contextualizer's window as in
 * `eval`. `--graph FILE` shows the same for your own graph, `--traces FILE|DIR|-`
 * for a recorded turn (read and scored as `eval --traces` does; a project
 * file's `traces` too).
 */
import type { Command } from "commander";
import { EVAL_DEFAULTS } from "../../app/eval-defaults.js";
import type { ExternalGraphOptions } from "../../app/graph-eval.js";
import { traceCase, traceData, type TraceCaseOptions, type TracedTurn } from "../../app/trace.js";
import { InvalidArgumentError } from "../../errors.js";
import { renderCapturedTurn } from "../../eval/report/captured-turn.js";
import { stateLimitBytes } from "../../eval/sweep/graph-checks.js";
import { fusionText, paramPairs, traceJudgmentLines, traceMetricsText } from "../../eval/report/render/shared.js";
import { queriesLines } from "../../eval/report/render/conversation.js";
import { TRACE_STAGES } from "../../eval/report/stages.js";
import { cardIdOf } from "../../retrieval/parents.js";
import type { Ranked } from "../../retrieval/types.js";
import { addGraphOptions, addRetrievalOptions, addTracesOptions } from "../eval-options.js";
import type { RecordedTracesOptions } from "../../app/traces-eval.js";
import { addRetired } from "../old-spellings.js";
import { action, out, outText } from "../io.js";
import { parseIntIn, positiveIntOption, rangeText, refuseUnusedSettings } from "../options.js";
import { SETTING_NAMES, sourceKindOf, sourceTrace, TRACE_UNUSED_SETTINGS } from "../../app/sources/registry.js";
import { oneLineText } from "../../control-chars.js";

/** The use-case's options (src/app/trace.ts), with `--turn` as typed and the printing options. */
interface TraceOptions extends Omit<TraceCaseOptions, "turn"> {
  /** `--turn` as typed; checked against the case's turn count once the case is known (caseAndTurn). */
  turn?: string;
  top: number;
  json?: boolean;
}

/** "   = dense #3 0.0159 + bm25 #1 0.0164": each list's rank and share of a fused score (fused entries only). */
export function contributionText(r: Ranked): string {
  const c = r.contributions;
  if (c === undefined || c.length === 0) return "";
  return `   = ${c.map((x) => `${x.list} #${x.rank} ${x.value.toFixed(4)}`).join(" + ")}`;
}

/** "rrf(k=60; dense 1, bm25 1)" or "minmax(dense 0.3, bm25 0.7)". */

function stageList(name: string, ranked: readonly Ranked[], gold: ReadonlySet<string>, top: number): string[] {
  const shown = ranked.slice(0, top);
  const lines = [
    `  ${name} (${ranked.length} listed${ranked.length > shown.length ? `, top ${shown.length} shown` : ""}):`,
  ];
  for (const r of shown) {
    const card = cardIdOf(r);
    lines.push(
      `    ${String(r.rank).padStart(3)}  ${r.score.toFixed(4).padStart(9)}  ${r.id}${gold.has(card) ? "   <- gold" : ""}${contributionText(r)}`,
    );
  }
  const hidden = ranked.slice(top).filter((r) => gold.has(cardIdOf(r)));
  for (const r of hidden)
    lines.push(
      `    ${String(r.rank).padStart(3)}  ${r.score.toFixed(4).padStart(9)}  ${r.id}   <- gold (below the shown top ${top})${contributionText(r)}`,
    );
  return lines;
}

export function renderTracedTurn(t: TracedTurn, total: number, top: number): string {
  const r = t.report;
  const lines: string[] = [];
  lines.push(`=== ${r.caseId} turn ${r.turn} of ${total} (0-based; ${r.locale}, ${r.kind}, expect ${r.expect})`);
  lines.push(`user:  ${JSON.stringify(r.user)}`);
  if (t.trace === null) {
    lines.push("retrieval: not run (store-less graph)");
  } else {
    const c = t.trace.config;
    lines.push(`query: ${JSON.stringify(t.trace.query)}${t.trace.query !== r.user ? "  (contextualized)" : ""}`);
    lines.push(...queriesLines(r, t.trace.k));
    lines.push(
      `config: embedder=${c.embedder} mode=${c.mode} k=${t.trace.k} denseK=${c.denseK} bm25K=${c.bm25K} fusion=${fusionText(c)}${c.settings !== undefined ? ` ${paramPairs(c.settings).join(" ")}` : ""} rerank=${c.rerank ?? "off"}${t.trace.locale !== undefined ? ` locale=${t.trace.locale}` : ""}`,
    );
    lines.push(
      `timings: ${Object.entries(t.trace.timingsMs)
        .map(([k, v]) => `${k} ${v.toFixed(1)} ms`)
        .join(", ")}`,
    );
    lines.push(...traceJudgmentLines(r));
    for (const e of t.explanations) lines.push(`  ${e.verdict === "retrieved" ? "HIT " : "MISS"} ${e.text}`);
    const gold = new Set(r.gold);
    for (const stage of TRACE_STAGES) {
      const ranked = t.trace.stages[stage];
      if (ranked !== undefined) lines.push(...stageList(stage, ranked, gold, top));
    }
    lines.push(`final top-${t.trace.k}: [${t.trace.retrievedIds.map(oneLineText).join(", ")}]`); // one id on one line (src/control-chars.ts)
  }
  lines.push(`metrics: ${traceMetricsText(r)}`); // each metric once: the retrieval evaluator's comment, then the answer side
  lines.push(`answer${r.refused ? " (refused)" : ""}: ${JSON.stringify(r.answer)}`);
  lines.push(`cited: [${r.citedIds.map(oneLineText).join(", ")}]`);
  return lines.join("\n");
}

/**
 * The case `caseId` of `cases`, and `--turn` (as typed) parsed against its
 * turn count: an integer from 0 to turns − 1. Exit 2 otherwise, echoing the
 * text given and the true range.
 */
export function caseAndTurn<C extends { id: string; turns: readonly unknown[] }>(
  cases: readonly C[],
  caseId: string,
  turnText: string | undefined,
  casesFile: string,
): { c: C; turn: number | undefined } {
  const c = cases.find((x) => x.id === caseId);
  if (c === undefined) throw new InvalidArgumentError("CASE_ID", `the id of a case in ${casesFile}`, caseId);
  if (turnText === undefined) return { c, turn: undefined };
  const range = {
    min: 0,
    max: c.turns.length - 1,
    note: `0-based; case ${c.id} has ${c.turns.length} turn${c.turns.length === 1 ? "" : "s"}`,
  };
  const turn = parseIntIn(turnText, range);
  if (turn === undefined) throw new InvalidArgumentError("--turn", rangeText("integer", range), turnText);
  return { c, turn };
}

/** `retrace trace CASE [--graph FILE | --traces PATH]`: one case through retrace's own graph or yours, or as recorded, by the one trace use-case (src/app/trace.ts). */
async function traceCommand(
  caseId: string,
  o: TraceOptions & ExternalGraphOptions & RecordedTracesOptions,
): Promise<number> {
  // The store word, the config file, the case id and --turn are checked before any store starts, graph loads, a recording is read or anything is ingested.
  const { turn: turnText, ...options } = o;
  const { captured } = sourceTrace(o); // how the source's turns without a retrace trace are shown
  const plan = await traceData(options); // by the source the options select (src/app/trace.ts)
  const { turn } = caseAndTurn(plan.cases, caseId, turnText, plan.casesFile);
  const traced = await traceCase(caseId, { ...options, ...(turn !== undefined ? { turn } : {}) }, plan);
  const total = traced.case.turns;
  const notRecorded = traced.notRecorded ?? [];
  if (o.json) {
    const turns = traced.turns.map(({ retrieval: _r, ...t }) => t);
    out(
      JSON.stringify(
        { version: 1, case: traced.case, turns, ...(notRecorded.length > 0 ? { notRecorded } : {}) },
        null,
        2,
      ),
    );
    return 0;
  }
  const text = traced.turns.map((t) =>
    // A turn of your graph or of a recording without a retrace trace: what was captured of its retriever runs (or that it made none).
    t.trace === null && captured !== null
      ? renderCapturedTurn(
          t.report,
          total,
          o.k ?? EVAL_DEFAULTS.k,
          o.top,
          captured.stateLimit ? stateLimitBytes(o.maxStateMb) : undefined,
          { recorded: captured.recorded },
        )
      : renderTracedTurn(t, total, o.top),
  );
  if (notRecorded.length > 0)
    text.push(
      `not in the recording (or recorded with other user text; not traced): turn${notRecorded.length === 1 ? "" : "s"} ${notRecorded.join(", ")} of ${total}`,
    );
  outText(text.join("\n\n"));
  return 0;
}

export function register(program: Command): void {
  const cmd = program
    .command("trace")
    .description(
      "The per-turn debugger: every retrieval stage of every turn of one case, with where each gold card stood",
    )
    .argument("<case-id>", "id of an eval case")
    // Kept as typed: its range (0 to the case's turns − 1) is known once the case is (caseAndTurn).
    .option("--turn <n>", "only this turn (0-based; earlier turns still run for context)")
    .option(
      "--top <n>",
      "entries shown per stage (gold entries below it are always shown)",
      positiveIntOption("--top"),
      10,
    )
    .option("--json", "print the traced turns as JSON (with a version field)");
  // Only the options trace uses: retrieval settings, not the sweep's gate, outputs or case selection.
  addRetired(addTracesOptions(addGraphOptions(addRetrievalOptions(cmd), { gate: false }))).action(
    action((caseId: string, o: TraceOptions & ExternalGraphOptions & RecordedTracesOptions) => traceCommand(caseId, o)),
  );
  refuseUnusedSettings<ExternalGraphOptions & RecordedTracesOptions>(
    cmd,
    (o) => TRACE_UNUSED_SETTINGS[sourceKindOf(o)],
    SETTING_NAMES,
  );
}
