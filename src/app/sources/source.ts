/**
 * What a source of an eval's turns is (docs/architecture.md, "Adding a
 * source"): retrace's own graph (./own-graph.ts), a graph module of yours
 * (`--graph`, ./graph.ts) or recorded traces (`--traces`, ./traces.ts). Each
 * is one module declaring the option that selects it, what it captures, the
 * settings it does not use (each group with the true reason, for the
 * refusal message) and how it runs: its run checks what it can before
 * anything starts, builds its sweep (`SweepSource`, ../sweep-source.ts) and
 * hands it to the one body after the sweep (../evaluate.ts). The registry
 * (./registry.ts) lists them, one line each.
 *
 * This module and the source modules are light (no LangChain, no store): the
 * CLI reads the settings rules when it parses options; a source's machinery
 * is imported when it runs.
 */
import { InvalidArgumentError } from "../../errors.js";
import { DEFAULT_CONCURRENCY } from "../../eval/sweep/turns.js";
import {
  DEFAULT_GRAPH_MEMORY_MB,
  DEFAULT_LOAD_TIMEOUT_S,
  DEFAULT_MAX_STATE_MB,
  DEFAULT_TURN_TIMEOUT_S,
} from "../../eval/sweep/turn-guard.js";
import type { EvalOptions } from "../eval-plan.js";
import type { EvaluatorSpec } from "../../eval/measures/evaluators.js";
import type { GraphTurn } from "../../eval/sweep/external-graph.js";
import type { EvalCase, KnowledgeBase } from "../../kb/types.js";
import type { RetrievalMode } from "../../retrieval/types.js";
import type { LoadedData } from "../../system.js";
import type { EvalOutcome } from "../evaluate.js";
import type { SettingAttribute } from "../settings/keys.js";
import type { SettingValues } from "../settings/schema.js";
import type { GraphEvalOptions } from "../graph-options.js";
import type { UseCaseHooks } from "../progress.js";
import type { AnyTraceOptions, LoadedCases, TracePlan, TraceRead } from "../trace-plan.js";

/** What an eval scores: retrace's own graph, your graph module, or recorded traces. */
export type SourceKind = "own" | "graph" | "traces";

/** The options of an eval of any source: retrace's own graph, yours (`graph`) or recorded traces (`traces`). */
export type RunEvalOptions = EvalOptions & GraphEvalOptions;

/**
 * An options type with its settings taken from the settings schema: the
 * attributes of `--config`'s `run` and `retrieval.{embedder,mode,rerank}`
 * settings come from the schema's rows (`SettingValues<"eval">`, ../settings/schema.ts),
 * the rest (data, case selection, gate, baseline, shard, how a graph is
 * loaded) from `O`. A setting added to the schema reaches every source's
 * options by being there.
 */
export type WithSchemaSettings<O> = Omit<O, SettingAttribute> & SettingValues<"eval">;

/**
 * The options as each source reads them, discriminated by the option that
 * selects the source (`traces` wins over `graph`, which wins over retrace's
 * own graph): `sourceOptions` (./registry.ts) gives this view of any options.
 */
export type SourceOptions =
  | { kind: "own"; options: WithSchemaSettings<EvalOptions> & { graph?: undefined; traces?: undefined } }
  | { kind: "graph"; options: WithSchemaSettings<GraphEvalOptions> & { graph: string; traces?: undefined } }
  | { kind: "traces"; options: WithSchemaSettings<GraphEvalOptions> & { traces: string } };

/**
 * What `retrace trace` and `retrace label` ask a source for: its turns of
 * some cases, each turn's capture kept (the KB or catalog and cases are
 * loaded and the case selection checked before; nothing is scored beyond
 * `evaluators`).
 */
export interface TurnsRequest {
  /** The cases swept. */
  cases: readonly EvalCase[];
  /** Every case of the run (recorded traces leave the others' conversations alone); default `cases`. */
  selection?: readonly EvalCase[];
  kb: KnowledgeBase;
  /** retrace's own graph: the data already read (the store is opened over it, not re-read). */
  data?: LoadedData;
  /** Cards scored (and, for `label`, pooled) per turn. */
  k: number;
  /** Default: the source's eval scoring (retrace's own graph: every evaluator; a graph or a recording: the retrieval-side ones). */
  evaluators?: readonly EvaluatorSpec[];
  /** Cases in flight of a graph's sweep. */
  concurrency: number;
  /** retrace's own graph: one sweep per mode over one opened store (`label`'s bm25, dense and hybrid lists); default the options' mode. */
  modes?: readonly RetrievalMode[];
  /** retrace's own graph: the raw message and the standalone question retrieved too (`trace` shows the three queries). */
  counterfactual?: boolean;
}

/**
 * What `retrace trace` does with a source (../trace.ts is the one body:
 * it asks the source, never which source it is).
 */
export interface SourceTrace {
  /**
   * What a trace reads before anything runs: the options' settings as
   * `retrace trace` reads them (../settings/read.ts) and the KB (or catalog)
   * and cases the case id is checked against; `given`: what the caller
   * already read (`planTrace`, `loadGraphData`).
   */
  read<O extends AnyTraceOptions>(options: O, given?: TracePlan | LoadedCases): Promise<TraceRead<O>>;
  /**
   * Which of the case's turns are swept to trace turn N: `upTo` the turns up
   * to N (the earlier ones run too: a follow-up is contextualized from
   * them); `recorded` the case as recorded (nothing re-run: the recording
   * gives each turn as it was).
   */
  sweeps: "upTo" | "recorded";
  /**
   * A `--turn` the source's turns do not score (absent: a sweep scores every
   * turn it runs, an error turn included): the error to throw, naming the
   * turns that are scored.
   */
  unscoredTurn?: (options: AnyTraceOptions, caseId: string, turn: number, scored: readonly number[]) => Error;
  /**
   * How `retrace trace` shows a turn with no retrace trace (the retriever
   * runs captured): `recorded` (a recording: no graph ran), `stateLimit`
   * (the graph's state size limit, `run.maxStateMb`, is checked); null: the
   * turn is shown as retrace's own trace is (a store-less turn included).
   */
  captured: { recorded: boolean; stateLimit: boolean } | null;
}

/** A group of settings a source does not use, and why. */
export interface UnusedRule {
  /** The mode in the message: "with --graph (your graph brings its own store and retriever)". */
  mode: string;
  /** The settings (option attributes, e.g. `denseK`), in the order they are checked. */
  settings: readonly string[];
}

/** One source of an eval's turns. */
export interface Source<K extends SourceKind = SourceKind> {
  kind: K;
  /** The option whose value selects this source (`graph`, `traces`); null for the default, retrace's own graph. */
  selectedBy: "graph" | "traces" | null;
  /** The source in messages and docs ("--graph FILE[#export]"). */
  label: string;
  /** The source as a next-step line names it to the user ("your graph", "the recording"). */
  yours: string;
  /** What it captures of each turn, in one sentence (docs/architecture.md). */
  captures: string;
  /** The settings `retrace eval` refuses with this source, checked in this order (the first one given is the message). */
  unused: readonly UnusedRule[];
  /** The settings `retrace trace` refuses with this source; absent: `retrace trace` does not read this source. */
  traceUnused?: readonly UnusedRule[];
  /** What `retrace trace` does with this source (../trace.ts). */
  trace: SourceTrace;
  /**
   * Runs the eval of this source: its own checks before anything starts, its
   * sweep, then the one body after it (../evaluate.ts). The settings rules
   * are checked before (./registry.ts `checkSourceSettings`).
   */
  run(options: Extract<SourceOptions, { kind: K }>["options"], hooks: UseCaseHooks): Promise<EvalOutcome>;
  /**
   * The same source's turns for `retrace trace` and `retrace label`: one
   * list per `request.modes` entry for retrace's own graph, else one list
   * (the graph's sweep, or the recording read and joined as its eval reads it).
   */
  turns(options: Extract<SourceOptions, { kind: K }>["options"], request: TurnsRequest): Promise<GraphTurn[][]>;
}

/** A setting that is not an option of its own (a section of `--config`), and its name in messages. */
export const SETTING_NAMES: Readonly<Record<string, string>> = {
  retrievalConfig: "the retrieval section of --config",
  localeConfigs: "the locales section of --config",
  traceFilters: "the traces section of --config",
};

export {
  GRAPH_ONLY_SETTINGS,
  OWN_RETRIEVAL_SETTINGS,
  TRACES_ONLY_SETTINGS,
  type GraphOnlySetting,
  type OwnGraphOnlySetting,
} from "../settings/source-families.js";

/** The first setting `given` that `rules` do not use, with its rule's mode; null when every given setting is used. */
export function firstUnusedSetting(
  rules: readonly UnusedRule[],
  given: (setting: string) => boolean,
): { setting: string; mode: string } | null {
  for (const rule of rules)
    for (const setting of rule.settings) if (given(setting)) return { setting, mode: rule.mode };
  return null;
}

/**
 * The value a setting has when nobody sets it (the CLI's defaults; the
 * use-cases read an unset one the same way): the API check leaves a setting
 * at this value alone, as it leaves an unset one.
 */
const UNSET_VALUES: Readonly<Record<string, readonly unknown[]>> = {
  store: ["auto"],
  mode: ["hybrid"],
  embedder: ["auto"],
  retrievalCall: ["last"],
  repeat: [1],
  workers: [1],
  concurrency: [DEFAULT_CONCURRENCY],
  turnTimeout: [DEFAULT_TURN_TIMEOUT_S],
  maxStateMb: [DEFAULT_MAX_STATE_MB],
  loadTimeout: [DEFAULT_LOAD_TIMEOUT_S],
  graphMemoryMb: [DEFAULT_GRAPH_MEMORY_MB],
  counterfactual: [false],
  replay: ["own"],
  allowNoRetrieval: [false],
  judgeCache: [".retrace/judge-cache"],
};

/**
 * The API's check of one source's rules: a setting the source does not use,
 * given a value (other than its unset one), is an InvalidArgumentError
 * (exit 2) naming the setting and why.
 */
export function refuseUnused(o: object, rules: readonly UnusedRule[]): void {
  const values = o as Record<string, unknown>;
  const found = firstUnusedSetting(rules, (s) => {
    const v = values[s];
    return v !== undefined && !(UNSET_VALUES[s] ?? []).includes(v);
  });
  if (found !== null)
    throw new InvalidArgumentError(found.setting, `unset ${found.mode}`, values[found.setting] as unknown);
}
