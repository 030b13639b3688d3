/**
 * Use-case: an eval sweep of retrace's own graph (`retrace eval`, `retrace
 * start`, and `runEval` for library users). Store-backed by default
 * (CHROMA_URL, else a local Chroma started and stopped here, with the KB
 * ingested idempotently); `store: "none"` is the store-less path, where
 * retrieval is reported as not measured and any retrieval floor is an error.
 *
 * Everything that can be checked without a store is checked before one is
 * started or anything is ingested (`planEval`, ./eval-plan.ts): options, the data, case ids,
 * floor scopes, and the baseline against the dataset, subset, k and
 * configuration (docs/gates-and-exit-codes.md). Errors are typed (src/errors.ts);
 * nothing is printed but log lines and progress on stderr.
 *
 * This module holds what the commands that open retrace's own system share
 * (`openEvalSystem`, `graphFor`, `graphDefaultsFor`, `counterfactualOf`);
 * the eval of retrace's own graph as a source (its sweep, `sweepEval`,
 * `runOwnGraphEval`) is ./own-graph/eval.ts, run by ./sources/own-graph.ts.
 */
import type { RetrievalConfig } from "../research/tune-config.js";
import { buildGraph } from "../graph/build.js";
import type { TunableConfig } from "../graph/configuration.js";
import { requestTimeoutMs } from "../retrieval/chroma-faults.js";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { openSystem, type LoadedData, type RetraceSystem } from "../system.js";
import { resolveDataPaths } from "./data.js";
import { EVAL_DEFAULTS, type EvalOptions } from "./eval-plan.js";

/** The options `openEvalSystem` reads. */
export type SystemSettings = Pick<
  EvalOptions,
  "store" | "kb" | "cases" | "embedder" | "rerank" | "dataDir" | "retrievalConfig" | "timeout" | "maxCardBytes"
>;

/** Opens the system (KB, cases, store, embedder, reranker: src/system.ts) the options describe; `data`: the KB and cases already loaded by `planEval`. */
export function openEvalSystem(
  o: SystemSettings,
  onIngestProgress?: (done: number, total: number) => void,
  data?: LoadedData,
): Promise<RetraceSystem> {
  const paths = resolveDataPaths(o);
  return openSystem({
    kbDir: paths.kb,
    casesFile: paths.cases,
    store: o.store ?? EVAL_DEFAULTS.store,
    embedder: o.embedder ?? EVAL_DEFAULTS.embedder,
    reranker: o.rerank ?? null,
    ...(o.dataDir !== undefined ? { dataDir: o.dataDir } : {}),
    ...(o.retrievalConfig?.bm25 !== undefined ? { bm25Params: o.retrievalConfig.bm25 } : {}),
    ...(onIngestProgress !== undefined ? { onIngestProgress } : {}),
    ...(o.maxCardBytes !== undefined ? { maxCardBytes: o.maxCardBytes } : {}),
    ...(data !== undefined ? { data } : {}),
    requestTimeoutMs: requestTimeoutMs(o.timeout),
  });
}

/** The graph-configuration keys of one config-file section (BM25 k1/b belong to the index, not to a call). */
function settingsOfConfig(c: RetrievalConfig) {
  return {
    ...(c.denseK !== undefined ? { denseK: c.denseK } : {}),
    ...(c.bm25K !== undefined ? { bm25K: c.bm25K } : {}),
    ...(c.fusion !== undefined ? { fusion: c.fusion } : {}),
    ...(c.rrfK !== undefined ? { rrfK: c.rrfK } : {}),
    ...(c.weights !== undefined ? { weights: c.weights } : {}),
  };
}

/** The options the graph's retrieval settings come from. */
export type GraphSettings = Required<Pick<EvalOptions, "k" | "mode">> &
  Pick<EvalOptions, "denseK" | "bm25K" | "retrievalConfig" | "localeConfigs" | "history">;

/** The agent graph over the system's retriever (none when store-less), with the options' retrieval settings (and, for a sweep, `checkpointer`: ./own-graph/reference-serde.ts). */
export function graphFor(system: RetraceSystem, o: GraphSettings, checkpointer?: BaseCheckpointSaver) {
  return buildGraph({
    store: system.retriever,
    cards: system.kb,
    analyzers: system.analyzers,
    defaults: graphDefaultsFor(system, o),
    ...(checkpointer !== undefined ? { checkpointer } : {}),
  });
}

/** The graph's configuration defaults for these options (plain data: a worker thread builds the same graph from them). */
export function graphDefaultsFor(system: Pick<RetraceSystem, "reranker">, o: GraphSettings): Partial<TunableConfig> {
  const c = o.retrievalConfig ?? {};
  const locales = o.localeConfigs;
  // A config file's keys win over the depths given as options (docs/fusion-and-tuning.md).
  return {
    k: o.k,
    ...((c.denseK ?? o.denseK) !== undefined ? { denseK: c.denseK ?? o.denseK } : {}),
    ...((c.bm25K ?? o.bm25K) !== undefined ? { bm25K: c.bm25K ?? o.bm25K } : {}),
    mode: o.mode,
    rerank: system.reranker !== null,
    ...(c.fusion !== undefined ? { fusion: c.fusion } : {}),
    ...(c.rrfK !== undefined ? { rrfK: c.rrfK } : {}),
    ...(c.weights !== undefined ? { weights: c.weights } : {}),
    // Per-locale sections override the keys above for their locale's turns (docs/fusion-and-tuning.md).
    ...(locales !== undefined
      ? { locales: Object.fromEntries(Object.entries(locales).map(([tag, lc]) => [tag, settingsOfConfig(lc)])) }
      : {}),
    ...(o.history !== undefined ? { historyTurns: o.history } : {}),
  };
}

/** Whether the sweep runs counterfactual retrieval, and why not (the report says it; docs/query-attribution.md). */
export function counterfactualOf(
  o: Pick<EvalOptions, "counterfactual">,
  storeBacked: boolean,
): { enabled: boolean; reason?: string } {
  if (o.counterfactual === false) return { enabled: false, reason: "turned off (--counterfactual off)" };
  if (!storeBacked) return { enabled: false, reason: "store-less run (no retrieval)" };
  return { enabled: true };
}

export type { EvalOutcome } from "./evaluate.js";
