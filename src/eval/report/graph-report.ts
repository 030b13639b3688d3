/**
 * Report lines of a `--graph` run (docs/evaluate-your-graph.md): the header
 * naming the graph, the captured retrievers, the id key and the retrieval-call
 * mode, the turns that threw or made no retriever run, and the
 * `retrace trace --graph` view of a captured turn. Pure.
 */
import { queriesLines } from "./render/conversation.js";
import { traceMetricsText, traceJudgmentLines } from "./render/shared.js";
import { capturedChains, CUT_AT_K, lostAt, lostAtText, NOT_RETRIEVED, ordinal } from "./attribution.js";
import type { Report, TurnReport } from "./types.js";
import { oneLineText } from "../../control-chars.js";

/** The label of a `--graph` turn that made no retriever run, in every view (text, markdown, JSON comments, JUnit, HTML). */
export const NO_RETRIEVAL = "no retrieval";

/** What `--retrieval-call` scores, in words (src/eval/sweep/capture.ts). */
export function retrievalCallText(call: "last" | "first" | "all"): string {
  return call === "all" ? "every call" : `the ${call} step (all its calls; calls overlapping in time are one step)`;
}

/** An errored turn's error in words: a given-up turn's message says what happened; any other is the graph's own error. */
export function turnErrorText(t: Pick<TurnReport, "error" | "givenUp">): string {
  return t.givenUp !== undefined ? (t.error ?? "") : `the graph run threw: ${t.error ?? ""}`;
}

/** Bytes as MB (2^20 bytes), one decimal: `5.2 MB`. */
export function mb(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MB`;
}

/** Turns whose state exceeded the report's `--max-state-mb` limit. */
function largeStateTurnsOf(report: Report): TurnReport[] {
  const limit = report.run.graph?.maxStateBytes;
  return limit === undefined ? [] : report.turns.filter((t) => (t.stateBytes ?? 0) > limit);
}

/** How many turns a warning names before "and N more". */
const LISTED = 10;

/** Header lines: the generic-rules locales of the built-in graph, and the `--graph` facts. */
export function graphHeaderLines(report: Report): string[] {
  const generic = report.run.genericLocales ?? [];
  const genericLine =
    generic.length > 0
      ? [`generic rules (no built-in follow-up, policy or refusal tables) for: ${generic.join(", ")}`]
      : [];
  const g = report.run.graph;
  if (g === undefined) return genericLine;
  const t = g.traces;
  const lines = [
    ...genericLine,
    t !== undefined
      ? `recorded traces (${t.format === "otlp" ? "OTLP/JSON" : "LangSmith runs"}): ${t.files.length} file${t.files.length === 1 ? "" : "s"}, ${t.records} ${t.format === "otlp" ? "spans" : "runs"}, ${t.conversations} conversations, ${t.turns} turns${t.filteredOut > 0 ? ` (${t.filteredOut} more left out by the --config filters)` : ""}; nothing re-run${g.catalog !== undefined ? `  catalog: ${g.catalog}` : ""}`
      : `graph: ${g.file}#${g.exportName}${g.catalog !== undefined ? `  catalog: ${g.catalog}` : ""}`,
    ...(t !== undefined ? tracesJoinLines(t) : []),
    `captured retriever(s): ${g.retrievers.length === 0 ? "none" : g.retrievers.join(", ")}  id key: ${g.idKey}  retrieval call scored: ${g.retrievalCall}`,
  ];
  // Reports written before the step and unknown-id rules lack these facts.
  if (g.multiCallTurns !== undefined && g.retrievalTurns !== undefined)
    lines.push(
      `retriever calls: ${g.multiCallTurns} of ${g.retrievalTurns} turn${g.retrievalTurns === 1 ? "" : "s"} with a retrieval made several (${g.parallelCallTurns ?? 0} with calls in parallel, ${g.multiStepTurns ?? 0} with several steps); scored per turn: ${retrievalCallText(g.retrievalCall)}`,
    );
  if (g.turnTimeoutSeconds !== undefined && g.maxStateBytes !== undefined)
    lines.push(
      `safeguards: turn deadline ${g.turnTimeoutSeconds} s (run.turnTimeout); largest state of a turn ${mb(g.largestStateBytes ?? 0)}, limit ${mb(g.maxStateBytes)} (run.maxStateMb)`,
    );
  if (g.scoredIds !== undefined && g.unknownIds !== undefined)
    lines.push(
      `scored ids: ${g.scoredIds} in the top-${report.run.k} lists, ${g.unknownIds} naming no card of the ${g.catalog !== undefined ? "catalog" : "KB"}${g.unknownIds > 0 && (g.unknownExamples ?? []).length > 0 ? ` (e.g. ${(g.unknownExamples ?? []).map(oneLineText).join(", ")})` : ""}`,
    );
  return lines;
}

type TracesSection = NonNullable<NonNullable<Report["run"]["graph"]>["traces"]>;

/** How a recording joined the cases, and the note that the report holds recorded user text (docs/recorded-traces.md). */
function tracesJoinLines(t: TracesSection): string[] {
  const more = (n: number, shown: number) => (n > shown ? ", …" : "");
  const lines = [
    `joined: ${t.scoredTurns} turns scored; ${t.mismatches} with user text other than the case's (not scored)${t.mismatchExamples.length > 0 ? `, e.g. ${t.mismatchExamples[0]!.case}#${t.mismatchExamples[0]!.turn} recorded ${oneLineText(t.mismatchExamples[0]!.recorded)} (${t.mismatchExamples[0]!.where})` : ""}; ` +
      `${t.turnsWithoutCaseTurn} recorded turns past their case's end; ${t.caseTurnsWithoutTrace} case turns past the recording's`,
  ];
  if (t.conversationsWithoutCase > 0)
    lines.push(
      `conversations with no case (not scored): ${t.conversationsWithoutCase}: ${t.conversationsWithoutCaseExamples.join(", ")}${more(t.conversationsWithoutCase, t.conversationsWithoutCaseExamples.length)}`,
    );
  if (t.casesWithoutTrace > 0)
    lines.push(
      `cases with no recorded conversation (not scored): ${t.casesWithoutTrace}: ${t.casesWithoutTraceExamples.join(", ")}${more(t.casesWithoutTrace, t.casesWithoutTraceExamples.length)}`,
    );
  if (t.anonymousConversations > 0)
    lines.push(
      `traces naming no conversation (each a one-turn conversation, named by its root): ${t.anonymousConversations}: ${t.anonymousExamples.join(", ")}${more(t.anonymousConversations, t.anonymousExamples.length)}`,
    );
  if ((t.unattachedTurns ?? 0) + (t.unattachedCalls ?? 0) > 0)
    lines.push(
      `unattached (not scored): ${t.unattachedTurns ?? 0} turns whose retriever calls have no parent link in the export, ${t.unattachedCalls ?? 0} retriever calls with no turn: ${(t.unattachedExamples ?? []).join("; ")}${more((t.unattachedTurns ?? 0) + (t.unattachedCalls ?? 0), (t.unattachedExamples ?? []).length)}; export the runs with their parent links (parent_run_id or dotted_order)`,
    );
  lines.push(
    "note: this report holds user text recorded in production or staging traces (the turns, queries and documents shown); share it as you would share the traces",
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
      `${g.unknownIds} of the ${g.scoredIds ?? 0} scored ids name no card of the ${g.catalog !== undefined ? "catalog" : "KB"} (e.g. ${(g.unknownExamples ?? []).map(oneLineText).join(", ")}); they count as misses. If they are your cards under another id, use --id-key or --id-map; if your store holds documents the KB does not list, list them in a --catalog file.`,
    );
  const large = largeStateTurnsOf(report);
  if (large.length > 0) {
    const named = large.slice(0, LISTED).map((t) => `${t.caseId}#${t.turn} ${mb(t.stateBytes ?? 0)}`);
    out.push(
      `${large.length} turn${large.length === 1 ? "" : "s"} carried a state above the ${mb(g.maxStateBytes ?? 0)} limit (run.maxStateMb): ${named.join(", ")}${large.length > LISTED ? `, and ${large.length - LISTED} more` : ""}. Each case in flight holds its thread's checkpoints until the case ends, so memory grows with state size × --concurrency.`,
    );
  }
  if (!allEmpty)
    for (const locale of g.localesWithoutCards ?? [])
      out.push(
        `locale ${locale}: its turns called a retriever but retrieved no card of ${locale} (does the store hold that locale's documents?)`,
      );
  return out;
}

/** The retrieval facts of one turn of a `--graph` run, for its turn lines: "no retrieval", unknown ids, several calls. "" otherwise. */
export function graphTurnTag(report: Report, t: TurnReport): string {
  if (report.run.graph === undefined) return "";
  const parts: string[] = [];
  if (t.noRetrieval === true) parts.push(`${NO_RETRIEVAL} (the turn made no retriever run)`);
  const c = t.captured;
  if (c !== undefined) {
    if ((c.unknownIds ?? []).length > 0)
      parts.push(`unknown ids: ${c.unknownIds!.length} [${c.unknownIds!.map(oneLineText).join(", ")}]`);
    if (c.topLevelRuns > 1) {
      const steps = c.steps ?? c.topLevelRuns;
      parts.push(
        `retriever calls: ${c.topLevelRuns} in ${steps} step${steps === 1 ? "" : "s"}${steps < c.topLevelRuns ? " (some in parallel)" : ""}, ${c.retrievers.length} scored`,
      );
    }
  }
  const limit = report.run.graph.maxStateBytes;
  if (limit !== undefined && (t.stateBytes ?? 0) > limit)
    parts.push(`state ${mb(t.stateBytes!)} above the ${mb(limit)} limit (run.maxStateMb)`);
  return parts.join("; ");
}

/** The errored and retrieval-less turns of a `--graph` run, listed and counted, then its warnings; empty otherwise. */
export function graphTurnNotes(report: Report): string[] {
  const g = report.run.graph;
  if (g === undefined) return [];
  const lines: string[] = [];
  const errors = report.turns.filter((t) => t.error !== undefined);
  lines.push(
    `turn errors (the graph run threw, or was given up at the run.turnTimeout deadline or stalled; not scored, not counted as misses): ${errors.length}`,
  );
  for (const t of errors) lines.push(`  ${t.caseId}#${t.turn} ${t.locale}  ${JSON.stringify(t.error)}`);
  const none = report.turns.filter((t) => t.noRetrieval === true);
  const list = (ts: readonly TurnReport[]) =>
    ts.map((t) => `  ${t.caseId}#${t.turn} ${t.locale}  ${JSON.stringify(t.user)}`);
  if (g.noRetrievalMisses === undefined) {
    // A report written before no-retrieval turns were judged by their gold.
    lines.push(`no retrieval captured (left out of retrieval means): ${none.length}`, ...list(none));
  } else {
    const missed = none.filter((t) => t.gold.length > 0);
    const fine = none.filter((t) => t.gold.length === 0);
    lines.push(
      `${NO_RETRIEVAL} on a gold-bearing turn (scored as a miss: hit, recall, nDCG 0): ${missed.length}`,
      ...list(missed),
    );
    lines.push(`${NO_RETRIEVAL}, none needed (empty gold): ${fine.length}`, ...list(fine));
  }
  for (const w of graphWarnings(report)) lines.push(`warning: ${w}`);
  return lines;
}

/** A captured stage as rendered: nested child run or scored run, and the retrieval step of its scored call (1-based). */
export interface StageView {
  key: string;
  role: "child" | "final";
  ids: string[];
  error: string | null;
  /** The 1-based retrieval step of the call the list belongs to; absent in reports written before steps were recorded per list. */
  step?: number;
}

/**
 * The stages grouped by retrieval step, in order; stages without a step
 * (reports written before steps were recorded) are one group per scored run,
 * as then written.
 */
function stepGroups(stages: readonly StageView[]): { step: number | null; stages: StageView[] }[] {
  const groups: { step: number | null; stages: StageView[] }[] = [];
  let open: StageView[] = [];
  for (const s of stages) {
    if (s.step !== undefined) {
      const last = groups[groups.length - 1];
      if (last !== undefined && last.step === s.step) last.stages.push(s);
      else groups.push({ step: s.step, stages: [s] });
      continue;
    }
    open.push(s);
    if (s.role === "final") {
      groups.push({ step: null, stages: open });
      open = [];
    }
  }
  if (open.length > 0) groups.push({ step: null, stages: open });
  return groups;
}

/** Scored calls of each step (its `final` stages), by step. */
function callsPerStep(stages: readonly StageView[]): Map<number, number> {
  const n = new Map<number, number>();
  for (const s of stages) if (s.role === "final" && s.step !== undefined) n.set(s.step, (n.get(s.step) ?? 0) + 1);
  return n;
}

/**
 * Every retriever call of a turn, scored or not, by retrieval step (a
 * fallback search of another step shows too, with where the gold stood in
 * it): a header per step (scored or not, its calls), then each call's lists
 * (its child runs, then the call), the calls numbered #1..#n within their
 * step. A stage without a step (reports written before steps) is listed
 * under "scored calls".
 */
function stepLines(
  c: { stages: readonly StageView[]; unscored?: readonly StageView[]; steps?: number },
  gold: ReadonlySet<string>,
  top: number,
  steps: number,
): string[] {
  const all = [...c.stages.map((s) => ({ s, scored: true })), ...(c.unscored ?? []).map((s) => ({ s, scored: false }))];
  const stepOf = (s: StageView) => s.step ?? 0;
  const order = [...new Set(all.map((x) => stepOf(x.s)))].sort((a, b) => a - b);
  const lines: string[] = [];
  for (const n of order) {
    const inStep = all.filter((x) => stepOf(x.s) === n);
    const scored = inStep.some((x) => x.scored);
    const calls = inStep.filter((x) => x.s.role === "final").length;
    const what = `${calls} call${calls === 1 ? "" : "s"}${calls > 1 ? " overlapping in time" : ""}`;
    lines.push(
      n === 0 ? `  scored calls (${what}):` : `  step ${n} of ${steps}, ${scored ? "scored" : "not scored"} (${what}):`,
    );
    // A child list comes before its call: both carry the call's number within the step.
    let call = 1;
    for (const { s } of inStep) {
      const shown = s.ids.slice(0, top);
      const name = oneLineText(s.key.replace(/#\d+$/u, "")); // the key's suffix counts calls over the whole turn; the number here is the step's
      lines.push(
        `    #${call} ${s.role === "child" ? `child ${name}` : name} (${s.ids.length} cards${s.ids.length > shown.length ? `, top ${shown.length} shown` : ""})${s.error !== null ? ` failed: ${s.error}` : ""}:`,
      );
      s.ids.forEach((id, i) => {
        if (i < top || gold.has(id))
          lines.push(
            `      ${String(i + 1).padStart(3)}  ${oneLineText(id)}${gold.has(id) ? `   <- gold${i >= top ? ` (below the shown top ${top})` : ""}` : ""}`,
          );
      });
      if (s.role === "final") call++;
    }
  }
  return lines;
}

/**
 * Where one gold card stood at each captured stage, in words:
 * "gold: 2nd in the BM25Retriever child, absent from the VectorStoreRetriever
 * child (4 listed), 7th after EnsembleRetriever: cut at k=5". `noChildRuns`
 * names (by stage key) scored runs whose children emitted no runs ("no child
 * runs"). Calls that ran in parallel (one retrieval step) are worded as the
 * calls of one step, not as a sequence: "step 1, 3 parallel calls: 1st from
 * KeywordRetriever, absent from KeywordRetriever#2 (1 listed), …"; with
 * several steps each is named ("step 2: …").
 */
export function explainCapturedGold(
  stages: readonly StageView[],
  noChildRuns: readonly string[],
  retrievedIds: readonly string[],
  gold: string,
  k: number,
): string {
  const groups = stepGroups(stages);
  const steps = groups.filter((g) => g.step !== null).length;
  const child = (s: StageView) => {
    const rank = s.ids.indexOf(gold);
    if (s.error !== null) return `the ${s.key} child failed (${s.error})`;
    return rank < 0
      ? `absent from the ${s.key} child (${s.ids.length} listed)`
      : `${ordinal(rank + 1)} in the ${s.key} child`;
  };
  const parts = groups.map(({ step, stages: group }) => {
    const finals = group.filter((s) => s.role === "final");
    if (step !== null && finals.length > 1) {
      // Parallel calls of one step: each call's list, none "after" another.
      const allBare = finals.every((s) => noChildRuns.includes(s.key));
      const words = group.map((s) => {
        if (s.role === "child") return child(s);
        if (s.error !== null) return `${s.key} failed (${s.error})`;
        const rank = s.ids.indexOf(gold);
        const bare = !allBare && noChildRuns.includes(s.key) ? " (no child runs)" : "";
        return rank < 0
          ? `absent from ${s.key}${bare} (${s.ids.length} listed)`
          : `${ordinal(rank + 1)} from ${s.key}${bare}`;
      });
      return `step ${step}, ${finals.length} parallel calls${allBare ? " (no child runs)" : ""}: ${words.join(", ")};`;
    }
    const words = group.map((s) => {
      if (s.role === "child") return child(s);
      if (s.error !== null) return `${s.key} failed (${s.error})`;
      const rank = s.ids.indexOf(gold);
      const children = noChildRuns.includes(s.key) ? " (no child runs)" : "";
      return rank < 0
        ? `absent after ${s.key}${children} (${s.ids.length} listed)`
        : `${ordinal(rank + 1)} after ${s.key}${children}`;
    });
    return `${step !== null && steps > 1 ? `step ${step}: ` : ""}${words.join(", ")}${step !== null && steps > 1 ? ";" : ","}`;
  });
  const pos = retrievedIds.slice(0, k).indexOf(gold);
  const cut = lostAt(capturedChains(stages, gold), pos >= 0);
  const tail =
    cut === null
      ? `retrieved at rank ${pos + 1} of the top-${k}`
      : cut === CUT_AT_K
        ? `cut at k=${k}`
        : cut === NOT_RETRIEVED
          ? "not retrieved"
          : lostAtText(cut, true);
  return `${gold}: ${[...parts, tail].join(" ")}`;
}

/** `retrace trace --graph` rendering of one turn captured from retriever callbacks. */
export function renderCapturedTurn(
  t: TurnReport,
  total: number,
  k: number,
  top: number,
  maxStateBytes?: number,
): string {
  const lines: string[] = [];
  lines.push(`=== ${t.caseId} turn ${t.turn} of ${total} (0-based; ${t.locale}, ${t.kind}, expect ${t.expect})`);
  lines.push(`user:  ${JSON.stringify(t.user)}`);
  const c = t.captured;
  if (t.error !== undefined) lines.push(`error: ${turnErrorText(t)}`);
  else if (c === undefined)
    lines.push(
      `retrieval: ${NO_RETRIEVAL} (the turn made no retriever run)${t.noRetrieval !== true ? "" : t.gold.length > 0 ? "; a gold-bearing turn: scored as a miss" : "; empty gold: none needed"}`,
    );
  if (c === undefined) lines.push(...queriesLines(t, k));
  else {
    const steps = c.steps ?? c.topLevelRuns;
    const perStep = callsPerStep(c.stages);
    const finals = c.stages.filter((s) => s.role === "final");
    if (c.steps !== undefined && c.topLevelRuns > 1 && finals.length > 0 && finals.every((s) => s.step !== undefined)) {
      // The scored calls by step, by their stage keys: the calls of one step ran in parallel, not one after another.
      const byStep = [...perStep.keys()].map((step) => {
        const keys = finals.filter((s) => s.step === step).map((s) => s.key);
        return `step ${step}: ${keys.join(", ")}${keys.length > 1 ? ` (${keys.length} calls in parallel)` : ""}`;
      });
      lines.push(
        `retrieval: captured from retriever callbacks: ${c.topLevelRuns} top-level calls in the turn, in ${steps} step${steps === 1 ? "" : "s"} (calls overlapping in time are one step); scored: ${byStep.join("; ")}`,
      );
    } else {
      const calls = `${c.topLevelRuns} top-level call${c.topLevelRuns === 1 ? "" : "s"} in the turn${c.steps !== undefined && c.topLevelRuns > 1 ? `, in ${steps} step${steps === 1 ? "" : "s"} (calls overlapping in time are one step); ${c.retrievers.length} scored` : ""}`;
      lines.push(`retrieval: captured from retriever callbacks: ${c.retrievers.join(", ")} (${calls})`);
    }
    if ((c.unknownIds ?? []).length > 0)
      lines.push(`  unknown ids (no card of the KB or catalog; misses): ${c.unknownIds!.map(oneLineText).join(", ")}`);
    if (c.noChildRuns.length > 0)
      lines.push(
        `  no child runs: ${c.noChildRuns.join(", ")} (${c.noChildRuns.length === 1 ? "its" : "their"} inner searches emit no retriever runs; no stages to show)`,
      );
    lines.push(`query: ${JSON.stringify(t.trace?.query ?? "")}`);
    lines.push(...queriesLines(t, k)); // --counterfactual: the three queries side by side, or why not
    lines.push(...traceJudgmentLines(t));
    const retrieved = t.retrievedIds ?? [];
    for (const g of t.gold)
      lines.push(
        `  ${retrieved.slice(0, k).includes(g) ? "HIT " : "MISS"} ${explainCapturedGold(c.stages, c.noChildRuns, retrieved, g, k)}`,
      );
    lines.push(...stepLines(c, new Set(t.gold), top, steps));
    lines.push(`final top-${k}: [${retrieved.slice(0, k).map(oneLineText).join(", ")}]`);
  }
  lines.push(`metrics: ${traceMetricsText(t)}`); // each metric once
  lines.push(`answer: ${JSON.stringify(t.answer)}`);
  if (maxStateBytes !== undefined && (t.stateBytes ?? 0) > maxStateBytes)
    lines.push(`state: ${mb(t.stateBytes!)}, above the ${mb(maxStateBytes)} limit (run.maxStateMb)`);
  return lines.join("\n");
}
