/**
 * What a `--graph` run scored, and what it refuses (docs/evaluate-your-graph.md,
 * "What is scored and reported"). Pure functions of the turn reports:
 *
 * - `graphRunFacts`: the run-level counts the report records in `run.graph`:
 *   no-retrieval turns split by gold, turns with several retriever calls
 *   (in parallel, in several steps), ids of the scored lists and those that
 *   name no KB card or catalog entry, empty retrievals, locales whose turns
 *   retrieved no card of their locale; the largest state of a turn and the
 *   turns whose state exceeded `--max-state-mb` (reported, never failed);
 * - `checkKnownIds`: the refusal (exit 2) of a run most of whose scored ids
 *   name no card — the documents' ids are not card ids, so every number
 *   would be a miss for the wrong reason;
 * - `graphGateChecks` / `graphGateFailures`: the gate checks of a graph sweep
 *   (errored turns, gold-bearing turns with no retrieval) and their failures.
 */
import { GraphInputError } from "../../errors.js";
import { GRAPH_IDENTITY_KEYS } from "../report/schemas.js";
import type { GateCheck, GateFailure, GraphRunInfo, TurnReport } from "../report/types.js";
import { DEFAULT_MAX_STATE_MB } from "./turn-guard.js";

/** A run stops (exit 2) when more than this share of the ids in its scored top-k lists name no KB card or catalog entry. */
export const UNKNOWN_ID_LIMIT = 0.5;
/** How many unknown ids the report and the refusal quote. */
export const UNKNOWN_EXAMPLES = 5;

/** The run-level facts of a graph sweep (recorded in `run.graph`). */
export type GraphRunFacts = Required<
  Pick<
    GraphRunInfo,
    | "noRetrievalMisses"
    | "noRetrievalNoneNeeded"
    | "multiCallTurns"
    | "parallelCallTurns"
    | "multiStepTurns"
    | "retrievalTurns"
    | "emptyRetrievalTurns"
    | "scoredIds"
    | "unknownIds"
    | "unknownExamples"
    | "localesWithoutCards"
    | "maxStateBytes"
    | "largestStateBytes"
    | "largeStateTurns"
  >
>;

/** `--max-state-mb` in bytes (1 MB = 2^20 bytes). */
export function stateLimitBytes(maxStateMb: number = DEFAULT_MAX_STATE_MB): number {
  return Math.round(maxStateMb * 2 ** 20);
}

/** Turns whose state exceeded `maxStateBytes` (`stateBytes`, measured per turn by the sweep), in dataset order. */
export function largeStateTurns(turns: readonly TurnReport[], maxStateBytes: number): TurnReport[] {
  return turns.filter((t) => (t.stateBytes ?? 0) > maxStateBytes);
}

/**
 * Run-level facts of a graph sweep. `localeOf(id)` is the locale of a KB card
 * or catalog entry (undefined for an id of neither): a locale is listed in
 * `localesWithoutCards` when its turns made retriever calls and none of the
 * ids they scored is a card of that locale (e.g. a store that holds only the
 * `en` documents). Unknown ids are those the sweep recorded per turn
 * (`captured.unknownIds`), counted with repetition across turns; the
 * examples are the first distinct ones in turn order. `maxStateBytes`: the
 * state size above which a turn is counted in `largeStateTurns` (default
 * DEFAULT_MAX_STATE_MB).
 */
export function graphRunFacts(
  turns: readonly TurnReport[],
  localeOf: (id: string) => string | undefined,
  maxStateBytes: number = stateLimitBytes(),
): GraphRunFacts {
  const withRetrieval = turns.filter((t) => t.captured !== undefined);
  const none = turns.filter((t) => t.noRetrieval === true);
  const multi = withRetrieval.filter((t) => t.captured!.topLevelRuns > 1);
  const examples: string[] = [];
  let scoredIds = 0;
  let unknownIds = 0;
  const ownCards = new Map<string, number>();
  for (const t of withRetrieval) {
    const ids = t.retrievedIds ?? [];
    scoredIds += ids.length;
    const unknown = t.captured!.unknownIds ?? [];
    unknownIds += unknown.length;
    for (const id of unknown) if (examples.length < UNKNOWN_EXAMPLES && !examples.includes(id)) examples.push(id);
    ownCards.set(t.locale, (ownCards.get(t.locale) ?? 0) + ids.filter((id) => localeOf(id) === t.locale).length);
  }
  return {
    noRetrievalMisses: none.filter((t) => t.gold.length > 0).length,
    noRetrievalNoneNeeded: none.filter((t) => t.gold.length === 0).length,
    multiCallTurns: multi.length,
    parallelCallTurns: multi.filter((t) => (t.captured!.steps ?? t.captured!.topLevelRuns) < t.captured!.topLevelRuns)
      .length,
    multiStepTurns: multi.filter((t) => (t.captured!.steps ?? t.captured!.topLevelRuns) > 1).length,
    retrievalTurns: withRetrieval.length,
    emptyRetrievalTurns: withRetrieval.filter((t) => (t.retrievedIds ?? []).length === 0).length,
    scoredIds,
    unknownIds,
    unknownExamples: examples,
    localesWithoutCards: [...ownCards].filter(([, n]) => n === 0).map(([locale]) => locale),
    maxStateBytes,
    largestStateBytes: turns.reduce((m, t) => Math.max(m, t.stateBytes ?? 0), 0),
    largeStateTurns: largeStateTurns(turns, maxStateBytes).length,
  };
}

/** True when an id looks like a file path or a URL (what LangChain's document loaders put in `metadata.source`). */
function looksLikePath(id: string): boolean {
  return /[\\/]/.test(id) || /\.[A-Za-z0-9]{1,5}$/.test(id);
}

/**
 * Refuses a run most of whose scored ids name no card: throws GraphInputError
 * (exit 2) when unknown ids are more than UNKNOWN_ID_LIMIT of the ids in the
 * scored top-k lists over the run, naming up to UNKNOWN_EXAMPLES of them, the
 * id keys that were read (`idKeys`, e.g. `describeIdKeys(...)`), where the
 * card ids come from (`ids`: the KB folder or the catalog file), and the
 * `--id-key` / `--id-map` that would fix them.
 */
export function checkKnownIds(
  facts: Pick<GraphRunFacts, "scoredIds" | "unknownIds" | "unknownExamples">,
  where: { graph: string; idKeys: string; ids: string; metadataKeys?: readonly string[] },
): void {
  if (facts.scoredIds === 0 || facts.unknownIds / facts.scoredIds <= UNKNOWN_ID_LIMIT) return;
  const pct = Math.round((100 * facts.unknownIds) / facts.scoredIds);
  const paths = facts.unknownExamples.some(looksLikePath)
    ? " They look like file paths or URLs: LangChain's document loaders set metadata.source to the file the document came from, which is not a card id."
    : "";
  throw new GraphInputError(
    `${where.graph}: ${facts.unknownIds} of the ${facts.scoredIds} ids retrieved in the scored top-k lists (${pct}%, more than ${UNKNOWN_ID_LIMIT * 100}%) name no card of ${where.ids}, so every score would be a miss for the wrong reason; ` +
      `e.g. ${facts.unknownExamples.map((id) => JSON.stringify(id)).join(", ")}. The ids were read from ${where.idKeys}` +
      `${where.metadataKeys !== undefined ? `; metadata keys present: ${where.metadataKeys.length === 0 ? "none" : where.metadataKeys.join(", ")}` : ""}.${paths} ` +
      "Name the metadata field that holds the card id with --id-key FIELD, or map each document to its card id with --id-map MODULE (a function (document) => id, e.g. the file name without its extension); " +
      "or, when your store holds documents the KB does not list, list them all in a --catalog file.",
  );
}

/** The warning `--allow-no-retrieval` prints (it is accepted, deprecated, and has no effect). */
export const ALLOW_NO_RETRIEVAL_DEPRECATED =
  "--allow-no-retrieval is deprecated and has no effect: a turn with empty gold and no retrieval passes (no retrieval, none needed), and a gold-bearing turn with no retrieval is scored as a miss; gate their number with --gate max-no-retrieval=N";

export interface GraphGateOptions {
  /** Errored turns the gate tolerates (default 0, `--max-errors`). */
  maxErrors?: number;
  /** Gold-bearing turns with no retrieval the gate tolerates (`--max-no-retrieval`; unset: not gated, they count as misses). */
  maxNoRetrieval?: number;
  /** Flaky turns (`--repeat`: hit in some repeats, missed in others) tolerated; with `flaky`, the run's flaky turns (quarantined ones left out). */
  maxFlaky?: number;
  flaky?: readonly { caseId: string; turn: number; hits: number; n: number; rate: number }[];
  /**
   * @deprecated No effect: a turn with empty gold and no retrieval passes, and a
   * gold-bearing one is scored as a miss (gate their number with `maxNoRetrieval`).
   */
  allowNoRetrieval?: boolean;
}

/**
 * The gate checks of a graph sweep, each with its verdict (they are listed in
 * the report's `gate.checks` like floors and drops, so a run gated only by
 * them does not read as "no check was set"): errored turns at most
 * `maxErrors` (default 0: always checked); gold-bearing turns with no
 * retrieval at most `maxNoRetrieval`, when set; flaky turns (`flaky`, with
 * `--repeat`) at most `maxFlaky`, when set. A turn with empty gold and no
 * retrieval never fails the gate (no retrieval, none needed). Pure.
 */
export function graphGateChecks(
  turns: readonly TurnReport[],
  opts: GraphGateOptions,
): { checks: GateCheck[]; failures: GateFailure[] } {
  const checks: GateCheck[] = [];
  const failures: GateFailure[] = [];
  const errors = turns.filter((t) => t.error !== undefined);
  const maxErrors = opts.maxErrors ?? 0;
  const errorsPassed = errors.length <= maxErrors;
  const errorsReason = errorsPassed
    ? `${errors.length} turn${errors.length === 1 ? "" : "s"} threw (allowed: ${maxErrors}, --gate max-errors)`
    : `${errors.length} turn${errors.length === 1 ? "" : "s"} ${errors.some((t) => t.givenUp !== undefined) ? `threw or ${errors.length === 1 ? "was" : "were"} given up (deadline or stall)` : "threw"} (allowed: ${maxErrors}, --gate max-errors): ${errors.map((t) => `${t.caseId}#${t.turn}`).join(", ")}`;
  checks.push({
    kind: "turn_errors",
    key: "turn_errors",
    scope: "all",
    option: `--gate max-errors=${maxErrors}`,
    threshold: maxErrors,
    observed: errors.length,
    n: turns.length,
    verdict: errorsPassed ? "pass" : "fail",
    reason: errorsReason,
  });
  if (!errorsPassed) failures.push({ kind: "turn_errors", key: "turn_errors", reason: errorsReason });
  if (opts.maxNoRetrieval !== undefined) {
    const missed = turns.filter((t) => t.noRetrieval === true && t.gold.length > 0);
    const gold = turns.filter((t) => t.gold.length > 0 && t.error === undefined).length;
    const passed = missed.length <= opts.maxNoRetrieval;
    const head = `${missed.length} gold-bearing turn${missed.length === 1 ? "" : "s"} made no retriever run (no retrieval; scored as misses; allowed: ${opts.maxNoRetrieval}, --gate max-no-retrieval)`;
    const reason = missed.length === 0 ? head : `${head}: ${missed.map((t) => `${t.caseId}#${t.turn}`).join(", ")}`;
    checks.push({
      kind: "no_retrieval",
      key: "no_retrieval",
      scope: "all",
      option: `--gate max-no-retrieval=${opts.maxNoRetrieval}`,
      threshold: opts.maxNoRetrieval,
      observed: missed.length,
      n: gold,
      verdict: passed ? "pass" : "fail",
      reason,
    });
    if (!passed) failures.push({ kind: "no_retrieval", key: "no_retrieval", reason });
  }
  if (opts.maxFlaky !== undefined) {
    const flaky = opts.flaky ?? [];
    const passed = flaky.length <= opts.maxFlaky;
    const head = `${flaky.length} flaky turn${flaky.length === 1 ? "" : "s"} (hit in some repeats, missed in others; allowed: ${opts.maxFlaky}, --gate max-flaky)`;
    const reason =
      flaky.length === 0 ? head : `${head}: ${flaky.map((f) => `${f.caseId}#${f.turn} ${f.hits}/${f.n}`).join(", ")}`;
    const gold = turns.filter((t) => t.gold.length > 0 && t.error === undefined).length;
    checks.push({
      kind: "flaky",
      key: "flaky",
      scope: "all",
      option: `--gate max-flaky=${opts.maxFlaky}`,
      threshold: opts.maxFlaky,
      observed: flaky.length,
      n: gold,
      verdict: passed ? "pass" : "fail",
      reason,
    });
    if (!passed) failures.push({ kind: "flaky", key: "flaky", reason });
  }
  return { checks, failures };
}

/** The failures of graphGateChecks (errored turns beyond `maxErrors`, gold-bearing turns with no retrieval beyond `maxNoRetrieval`). Pure. */
export function graphGateFailures(turns: readonly TurnReport[], opts: GraphGateOptions): GateFailure[] {
  return graphGateChecks(turns, opts).failures;
}

/** What identifies a `--graph` run and how it was scored: the run-level part of `run.graph` that every shard of a run shares. */
export type GraphRunIdentity = Pick<GraphRunInfo, (typeof GRAPH_IDENTITY_KEYS)[number]>;

/** The GraphRunIdentity part of a `run.graph` header (GRAPH_IDENTITY_KEYS). */
export function graphRunIdentityOf(g: GraphRunInfo): GraphRunIdentity {
  const out: Record<string, unknown> = {};
  for (const k of GRAPH_IDENTITY_KEYS) if (g[k] !== undefined) out[k] = g[k];
  return out as unknown as GraphRunIdentity;
}

/**
 * The `run.graph` header of a graph run: its identity, the scored retrievers
 * (sorted), the error and no-retrieval counts and the run facts. One key order
 * for `retrace eval --graph` and `retrace merge` of its shards, so both write
 * the same bytes. Pure.
 */
export function graphRunInfo(
  identity: GraphRunIdentity,
  turns: readonly TurnReport[],
  retrievers: readonly string[],
  facts: GraphRunFacts,
): GraphRunInfo {
  return {
    file: identity.file,
    exportName: identity.exportName,
    ...(identity.moduleHash !== undefined ? { moduleHash: identity.moduleHash } : {}),
    retrievers: [...retrievers].sort(),
    idKey: identity.idKey,
    retrievalCall: identity.retrievalCall,
    errors: turns.filter((t) => t.error !== undefined).length,
    noRetrieval: turns.filter((t) => t.noRetrieval === true).length,
    ...(identity.catalog !== undefined ? { catalog: identity.catalog } : {}),
    ...(identity.idMapHash !== undefined ? { idMapHash: identity.idMapHash } : {}),
    ...(identity.configurable !== undefined ? { configurable: identity.configurable } : {}),
    ...(identity.turnTimeoutSeconds !== undefined ? { turnTimeoutSeconds: identity.turnTimeoutSeconds } : {}),
    ...facts,
  };
}
