/**
 * Which settings each source of an eval uses (docs/configuration.md, "One
 * rule per setting"): retrace's own graph, your graph (`graph`), or recorded
 * traces (`traces`). Each source declares the settings it does not use, with
 * the true reason; `unusedSettings` is the one check, for the CLI (a setting
 * given on the command line or in `--config`) and the API (`runEval`,
 * `runGraphEval`: a setting given a value other than its default) alike.
 */
import { InvalidArgumentError } from "../errors.js";
import { DEFAULT_CONCURRENCY } from "../eval/sweep/turns.js";
import {
  DEFAULT_GRAPH_MEMORY_MB,
  DEFAULT_LOAD_TIMEOUT_S,
  DEFAULT_MAX_STATE_MB,
  DEFAULT_TURN_TIMEOUT_S,
} from "../eval/sweep/turn-guard.js";

/** What an eval scores: retrace's own graph, your graph module, or recorded traces. */
export type SourceKind = "own" | "graph" | "traces";

/** The kind of source options select: `traces` wins over `graph`, which wins over retrace's own graph. */
export function sourceKindOf(o: { graph?: string | undefined; traces?: string | undefined }): SourceKind {
  if (o.traces !== undefined) return "traces";
  return o.graph !== undefined ? "graph" : "own";
}

/** A group of settings a source does not use, and why. */
export interface UnusedRule {
  /** The mode in the message: "with --graph (your graph brings its own store and retriever)". */
  mode: string;
  /** The settings (option attributes, e.g. `denseK`), in the order they are checked. */
  settings: readonly string[];
}

/** A setting that is not an option of its own (a section of `--config`), and its name in messages. */
export const SETTING_NAMES: Readonly<Record<string, string>> = {
  retrievalConfig: "the retrieval section of --config",
  localeConfigs: "the locales section of --config",
  traceFilters: "the traces section of --config",
};

/** retrace's own retriever's settings: a graph of yours, or a recording, brings its own. */
const OWN_RETRIEVAL = [
  "store",
  "denseK",
  "bm25K",
  "mode",
  "embedder",
  "rerank",
  "dataDir",
  "timeout",
  "retrievalConfig",
  "localeConfigs",
] as const;

/** What only a graph module of yours uses (how it is loaded, driven and read). */
const GRAPH_ONLY = [
  "input",
  "idKey",
  "idMap",
  "retrievalCall",
  "configurable",
  "allowNoRetrieval",
  "catalog",
  "maxStateMb",
  "loadTimeout",
  "graphMemoryMb",
] as const;

/** What only recorded traces use. */
const TRACES_ONLY = ["tracesFormat", "traceFilters"] as const;

const HISTORY_WITH_GRAPH: UnusedRule = {
  mode: "with --graph (it sets how many earlier turns retrace's own contextualizer may use; your graph builds its query with its own steps, which retrace does not configure)",
  settings: ["history"],
};

/** Each source's unused settings, checked in this order (the first one found is the message). */
export const UNUSED_SETTINGS: Readonly<Record<SourceKind, readonly UnusedRule[]>> = {
  own: [
    { mode: "without --graph or --traces", settings: GRAPH_ONLY },
    { mode: "without --traces", settings: TRACES_ONLY },
  ],
  graph: [
    { mode: "with --graph (your graph brings its own store and retriever)", settings: OWN_RETRIEVAL },
    HISTORY_WITH_GRAPH,
    {
      mode: "with --graph (your graph module is loaded into this one thread and cannot be shared with worker threads; a graph sweep waits on I/O, so raise run.concurrency instead)",
      settings: ["workers"],
    },
    { mode: "without --traces", settings: TRACES_ONLY },
  ],
  traces: [
    {
      mode: "with --traces (the traces are scored as recorded: no graph runs)",
      settings: [
        "graph",
        "input",
        "configurable",
        "turnTimeout",
        "maxStateMb",
        "loadTimeout",
        "graphMemoryMb",
        "counterfactual",
        "repeat",
        "maxFlaky",
        "concurrency",
        "workers",
        "history",
        "replay",
        "judge",
        "judgeCache",
      ],
    },
    { mode: "with --traces (retrace's own retrieval does not run)", settings: OWN_RETRIEVAL },
  ],
};

/** `retrace trace`'s own rules: its sources are retrace's graph, yours, and recorded traces (as `eval --traces`). */
export const TRACE_UNUSED_SETTINGS: Readonly<Record<SourceKind, readonly UnusedRule[]>> = {
  own: [
    { mode: "without --graph or --traces", settings: GRAPH_ONLY },
    {
      mode: "without --graph (retrace's own trace always shows the three queries)",
      settings: ["counterfactual"],
    },
    { mode: "without --traces", settings: TRACES_ONLY },
  ],
  graph: [UNUSED_SETTINGS.graph[0]!, HISTORY_WITH_GRAPH, { mode: "without --traces", settings: TRACES_ONLY }],
  traces: UNUSED_SETTINGS.traces,
};

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
 * The API's check (`runEval`, `runGraphEval`): a setting the options' source
 * does not use, given a value (other than its unset one), is an
 * InvalidArgumentError (exit 2) naming the setting and why.
 */
export function checkSourceSettings(o: object, kind: SourceKind = sourceKindOf(o as { graph?: string })): void {
  const values = o as Record<string, unknown>;
  const found = firstUnusedSetting(UNUSED_SETTINGS[kind], (s) => {
    const v = values[s];
    return v !== undefined && !(UNSET_VALUES[s] ?? []).includes(v);
  });
  if (found !== null)
    throw new InvalidArgumentError(found.setting, `unset ${found.mode}`, values[found.setting] as unknown);
}
