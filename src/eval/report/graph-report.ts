/**
 * Report lines of a `--graph` run (docs/evaluate-your-graph.md): the header
 * naming the graph, the captured retrievers, the id key and the retrieval-call
 * mode, the turns that threw or made no retriever run, and the
 * `retrace trace --graph` view of a captured turn. Pure.
 */
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

/**
 * Header lines: the generic-rules locales of the built-in graph, and the
 * `--graph` facts. `compact` (the terminal's first screen): the same facts in
 * lines that fit 100 columns where they can — the join and the retriever
 * calls in short words, the catalog on the scored-ids line, the examples of
 * the full header (a mismatched turn) left to `--verbose`.
 */
export function graphHeaderLines(report: Report, { compact = false }: { compact?: boolean } = {}): string[] {
  if (compact) return compactGraphHeaderLines(report);
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
      ? `recorded traces (${t.label}): ${t.files.length} file${t.files.length === 1 ? "" : "s"}, ${t.records} ${t.recordsName}, ${t.conversations} conversations, ${t.turns} turns${t.filteredOut > 0 ? ` (${t.filteredOut} more left out by the --config filters)` : ""}; nothing re-run${g.catalog !== undefined ? `  catalog: ${g.catalog}` : ""}`
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

/** `graphHeaderLines(report, { compact: true })`. */
function compactGraphHeaderLines(report: Report): string[] {
  const full = graphHeaderLines(report);
  const g = report.run.graph;
  if (g === undefined) return full;
  const t = g.traces;
  const lines = [
    ...((report.run.genericLocales ?? []).length > 0 ? [full[0]!] : []),
    t !== undefined
      ? `recorded traces (${t.label}): ${t.files.length} file${t.files.length === 1 ? "" : "s"}, ${t.records} ${t.recordsName}, ${t.conversations} conversations, ${t.turns} turns${t.filteredOut > 0 ? ` (${t.filteredOut} filtered out)` : ""}; nothing re-run`
      : `graph: ${g.file}#${g.exportName}`,
  ];
  if (t !== undefined) {
    lines.push(
      `joined: ${t.scoredTurns} turns scored, ${t.mismatches} with other user text (not scored), ${t.turnsWithoutCaseTurn} past their case's end, ${t.caseTurnsWithoutTrace} case turns not recorded`,
    );
    // The join's lists (cases or conversations left out, unattached calls) as the full header has them; then the note, shorter.
    const join = tracesJoinLines(t);
    lines.push(...join.slice(1, -1));
    lines.push("note: holds user text recorded in production or staging traces; share it as you would the traces");
  }
  lines.push(
    `captured retriever(s): ${g.retrievers.length === 0 ? "none" : g.retrievers.join(", ")}  id key: ${g.idKey}`,
  );
  if (g.multiCallTurns !== undefined && g.retrievalTurns !== undefined)
    lines.push(
      `retriever calls: ${g.multiCallTurns} of ${g.retrievalTurns} turns made several (${g.parallelCallTurns ?? 0} parallel, ${g.multiStepTurns ?? 0} in several steps); scored: ${g.retrievalCall === "all" ? "every call" : `the ${g.retrievalCall} step`}`,
    );
  else lines.push(`retrieval call scored: ${g.retrievalCall}`);
  if (g.turnTimeoutSeconds !== undefined && g.maxStateBytes !== undefined)
    lines.push(
      `safeguards: turn deadline ${g.turnTimeoutSeconds} s, largest state ${mb(g.largestStateBytes ?? 0)} of ${mb(g.maxStateBytes)} (run.turnTimeout, run.maxStateMb)`,
    );
  const of = g.catalog !== undefined ? `the catalog ${g.catalog}` : "the KB";
  if (g.scoredIds !== undefined && g.unknownIds !== undefined)
    lines.push(
      `scored ids: ${g.scoredIds} in the top-${report.run.k} lists, ${g.unknownIds} naming no card of ${of}${g.unknownIds > 0 && (g.unknownExamples ?? []).length > 0 ? ` (e.g. ${(g.unknownExamples ?? []).map(oneLineText).join(", ")})` : ""}`,
    );
  else if (g.catalog !== undefined) lines.push(`catalog: ${g.catalog}`);
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

/** A one-line entry of the first screen: at most 50 characters (with "…"). */
const short = (s: string) => ([...s].length > 50 ? `${[...s].slice(0, 49).join("")}…` : s);

/**
 * The errored and retrieval-less turns of a `--graph` run, listed and
 * counted, then its warnings; empty otherwise. `compact` (the first screen):
 * the three counts on one line, then each listed turn on one line (its error
 * or user text cut at 50 characters).
 */
export function graphTurnNotes(report: Report, { compact = false }: { compact?: boolean } = {}): string[] {
  const g = report.run.graph;
  if (g === undefined) return [];
  if (compact && g.noRetrievalMisses !== undefined) {
    const errors = report.turns.filter((t) => t.error !== undefined);
    const none = report.turns.filter((t) => t.noRetrieval === true);
    const missed = none.filter((t) => t.gold.length > 0);
    const fine = none.filter((t) => t.gold.length === 0);
    const entry = (t: TurnReport, what: string, text: string) =>
      `  ${t.caseId}#${t.turn} ${t.locale}  ${what}: ${JSON.stringify(short(text))}`;
    const lines = [
      `turn errors (not scored): ${errors.length}; ${NO_RETRIEVAL}: ${missed.length} on gold-bearing turns (misses), ${fine.length} with empty gold`,
      ...errors.map((t) => entry(t, "error", t.error ?? "")),
      ...missed.map((t) => entry(t, `${NO_RETRIEVAL}, a miss`, t.user)),
      ...fine.map((t) => entry(t, `${NO_RETRIEVAL}, empty gold`, t.user)),
    ];
    for (const w of graphWarnings(report)) lines.push(`warning: ${w}`);
    return lines;
  }
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
