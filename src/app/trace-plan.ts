/**
 * What `retrace trace` reads before anything runs, for each source
 * (./sources/*.ts `trace.read`): the options' settings as the CLI reads them
 * (./settings/read.ts) and the data the case ids are checked against. The
 * trace's options types live here so that the source modules can name them
 * without importing ./trace.ts (which asks the registry).
 */
import type { EvalCase, KnowledgeBase } from "../kb/types.js";
import { loadData, resolveStoreChoice, type LoadedData } from "../system.js";
import { resolveDataPaths } from "./data.js";
import { EVAL_DEFAULTS, type EvalOptions } from "./eval-plan.js";
import type { ExternalGraphOptions } from "./graph-options.js";
import { resolveSettings } from "./settings/read.js";
import type { RecordedTracesOptions } from "./traces-eval.js";

/** What a trace retrieves with: the retrieval options of an eval. */
export type TraceCaseOptions = Pick<
  EvalOptions,
  | "store"
  | "kb"
  | "cases"
  | "k"
  | "denseK"
  | "bm25K"
  | "mode"
  | "embedder"
  | "rerank"
  | "dataDir"
  | "config"
  | "retrievalConfig"
  | "localeConfigs"
  | "timeout"
  | "maxCardBytes"
  | "history"
  | "replay"
> & {
  /** Only this turn (0-based; earlier turns still run for context); unset: every turn. */
  turn?: number;
};

/** The options of a trace of a graph of your own (`--graph`): how it is loaded, driven and read. */
export type GraphTraceOptions = ExternalGraphOptions & Pick<EvalOptions, "kb" | "cases" | "k"> & { turn?: number };

/** The options `traceCase` takes: retrace's own graph's, a graph's of yours (`graph`) or a recording's (`traces`). */
export type AnyTraceOptions = TraceCaseOptions & Partial<GraphTraceOptions> & RecordedTracesOptions;

/** What `planTrace` read: the options with their config file applied, the KB and cases. */
export interface TracePlan {
  options: TraceCaseOptions;
  data: LoadedData;
  casesFile: string;
}

/** The KB (or catalog) and cases a graph's or a recording's trace reads (`loadGraphData`). */
export interface LoadedCases {
  kb: KnowledgeBase;
  cases: EvalCase[];
  casesFile: string;
}

/** What a trace read before anything runs, whatever its source: the options as read, the KB (or catalog) and cases. */
export interface TraceRead<O extends AnyTraceOptions = AnyTraceOptions> extends LoadedCases {
  options: O;
  /** retrace's own graph: the data its store is opened over. */
  data?: LoadedData;
}

/** What a trace checks before a store starts: the store word, the config file, and the data (its case ids are what `traceCase` accepts). */
export async function planTrace(options: TraceCaseOptions): Promise<TracePlan> {
  resolveStoreChoice(options.store ?? EVAL_DEFAULTS.store); // a bad store is a usage error before anything is read
  const o = await resolveSettings("trace", options, "traceCase options"); // as the CLI reads them (src/app/settings/read.ts)
  const paths = resolveDataPaths(o);
  const data = await loadData(
    paths.kb,
    paths.cases,
    o.maxCardBytes !== undefined ? { maxCardBytes: o.maxCardBytes } : {},
  );
  return { options: o, data, casesFile: paths.cases };
}

/** What the caller read, as a trace reads it: a `planTrace` plan, or the KB (or catalog) and cases (a `TraceRead` too). */
function loadedOf(given: TracePlan | LoadedCases): LoadedCases & { data?: LoadedData; options?: TraceCaseOptions } {
  if ("kb" in given) return given;
  const { data, casesFile, options } = given;
  return { kb: data.kb, cases: data.cases, casesFile, data, options };
}

/**
 * retrace's own graph's trace read (./sources/own-graph.ts): `planTrace`,
 * or the plan the caller read (its options, with their config file
 * applied, win over `options`).
 */
export async function readOwnTrace<O extends AnyTraceOptions>(
  options: O,
  given?: TracePlan | LoadedCases,
): Promise<TraceRead<O>> {
  const { options: read, ...loaded } = loadedOf(given ?? (await planTrace(options)));
  return { ...loaded, options: read !== undefined ? { ...options, ...read } : options };
}

/**
 * A graph module's or a recording's trace read (./sources/graph.ts,
 * ./sources/traces.ts): the options' settings read as `retrace trace` reads
 * them, then the KB (or catalog) and cases as their eval reads them
 * (`loadGraphData`), unless the caller read them.
 */
export async function readModuleTrace<O extends AnyTraceOptions>(
  options: O,
  given?: TracePlan | LoadedCases,
): Promise<TraceRead<O>> {
  const o = await resolveSettings("trace", options, "traceCase options"); // as the CLI reads them (src/app/settings/read.ts)
  if (given !== undefined) {
    const { options: _read, ...loaded } = loadedOf(given);
    return { ...loaded, options: o };
  }
  const { loadGraphData } = await import("./graph-eval.js");
  const { kb, cases, casesFile } = await loadGraphData(o);
  return { options: o, kb, cases, casesFile };
}
