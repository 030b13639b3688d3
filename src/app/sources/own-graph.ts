/**
 * retrace's own graph as a source (the default: neither `--graph` nor
 * `--traces`): the agent graph over the KB's store, run turn by turn, its
 * retrieval read from the trace the graph writes to its state. Its sweep and
 * header are ../own-graph/eval.ts `ownGraphSource`; the eval's checks before a store
 * starts are ../eval-plan.ts `planEval`; its turns for `trace` and `label`
 * are ../own-graph/turns.ts `ownGraphTurns`.
 */
import { GRAPH_ONLY_SETTINGS, TRACES_ONLY_SETTINGS, type Source } from "./source.js";

export const ownGraph = {
  kind: "own",
  selectedBy: null,
  label: "retrace's own graph",
  yours: "retrace's own graph",
  captures:
    "the retrieval trace retrace's graph writes to its state: each stage's ranked ids (query, dense, BM25, fused, parents, reranked, final), the queries and the settings each locale ran with",
  unused: [
    { mode: "without --graph or --traces", settings: GRAPH_ONLY_SETTINGS },
    { mode: "without --traces", settings: TRACES_ONLY_SETTINGS },
  ],
  traceUnused: [
    { mode: "without --graph or --traces", settings: GRAPH_ONLY_SETTINGS },
    {
      mode: "without --graph (retrace's own trace always shows the three queries)",
      settings: ["counterfactual"],
    },
    { mode: "without --traces", settings: TRACES_ONLY_SETTINGS },
  ],
  trace: {
    // planTrace: the store word, the config file and the KB's chunks (the store is opened over them).
    read: async (options, given) => (await import("../trace-plan.js")).readOwnTrace(options, given),
    sweeps: "upTo",
    captured: null,
  },
  run: async (options, hooks) => (await import("../own-graph/eval.js")).runOwnGraphEval(options, hooks),
  turns: async (options, request) => (await import("../own-graph/turns.js")).ownGraphTurns(options, request),
} satisfies Source<"own">;
