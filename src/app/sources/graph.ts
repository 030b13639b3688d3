/**
 * A graph module of yours as a source (`--graph FILE[#export]`;
 * docs/evaluate-your-graph.md): loaded and run in a thread of its own, its
 * retrieval captured from its retriever runs with a callback handler. Its
 * sweep is ../graph-eval.ts `graphSource` (module identity read before the
 * module loads); the checks, baseline, judge and header it shares with
 * recorded traces are ../graph-eval.ts `runModuleEval`.
 */
import { OWN_RETRIEVAL_SETTINGS, TRACES_ONLY_SETTINGS, type Source, type UnusedRule } from "./source.js";

const OWN_RETRIEVAL: UnusedRule = {
  mode: "with --graph (your graph brings its own store and retriever)",
  settings: OWN_RETRIEVAL_SETTINGS,
};
const HISTORY: UnusedRule = {
  mode: "with --graph (it sets how many earlier turns retrace's own contextualizer may use; your graph builds its query with its own steps, which retrace does not configure)",
  settings: ["history"],
};

export const graph = {
  kind: "graph",
  selectedBy: "graph",
  label: "--graph FILE[#export]",
  yours: "your graph",
  captures:
    "the retriever runs of your graph (LangChain callbacks): each call's query, documents and metadata; the scored call chosen by retrievalCall",
  unused: [
    OWN_RETRIEVAL,
    HISTORY,
    {
      mode: "with --graph (your graph module is loaded into this one thread and cannot be shared with worker threads; a graph sweep waits on I/O, so raise run.concurrency instead)",
      settings: ["workers"],
    },
    { mode: "without --traces", settings: TRACES_ONLY_SETTINGS },
  ],
  traceUnused: [OWN_RETRIEVAL, HISTORY, { mode: "without --traces", settings: TRACES_ONLY_SETTINGS }],
  trace: {
    read: async (options, given) => (await import("../trace-plan.js")).readModuleTrace(options, given),
    sweeps: "upTo",
    captured: { recorded: false, stateLimit: true },
  },
  run: async (options, hooks) => {
    const m = await import("../graph-eval.js");
    return m.runModuleEval(options, m.graphSource, hooks);
  },
  // `trace` and `label`: the graph's sweep (../graph-sweep.ts), each turn's captured retriever runs kept.
  turns: async (options, request) => {
    const { sweepGraph } = await import("../graph-eval.js");
    const { turns } = await sweepGraph(
      { ...options, k: request.k },
      request.cases,
      request.kb,
      request.concurrency,
      undefined,
      {
        ...(request.evaluators !== undefined ? { evaluators: request.evaluators } : {}),
      },
    );
    return [turns];
  },
} satisfies Source<"graph">;
