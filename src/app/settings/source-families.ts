/**
 * The families of settings the sources' rules refuse by
 * (../sources/source.ts `UnusedRule`; docs/architecture.md, "…a source"),
 * and the option types' settings each source leaves out (src/app/eval-plan.ts
 * `EvalOptions`, src/app/graph-options.ts `GraphEvalOptions`). No imports:
 * the option types and the source modules both read it, without a cycle.
 */

/** retrace's own retriever's settings: a graph of yours, or a recording, brings its own. */
export const OWN_RETRIEVAL_SETTINGS = [
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
export const GRAPH_ONLY_SETTINGS = [
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

/** The schema's settings (./schema.ts) retrace's own graph does not use: a graph module's (`EvalOptions` leaves them out). */
export type GraphOnlySetting = (typeof GRAPH_ONLY_SETTINGS)[number];

/**
 * The settings a graph of yours or a recording does not use (`GraphEvalOptions`
 * and `ExternalGraphOptions` leave them out): retrace's own retriever's, the
 * earlier turns its contextualizer may use, and its worker threads (../sources/graph.ts says why).
 */
export type OwnGraphOnlySetting = (typeof OWN_RETRIEVAL_SETTINGS)[number] | "history" | "workers";

/** What only recorded traces use. */
export const TRACES_ONLY_SETTINGS = ["tracesFormat", "traceFilters"] as const;
