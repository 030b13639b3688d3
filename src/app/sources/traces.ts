/**
 * Recorded traces as a source (`--traces FILE|DIR|-`; docs/recorded-traces.md):
 * OTLP spans, LangSmith runs or Langfuse exports read, joined to the cases
 * and scored as recorded (nothing re-run). Its sweep is ../traces-eval.ts
 * `recordedTracesSource` (the formats: src/eval/traces/read.ts); the checks,
 * baseline and header it shares with `--graph` are ../graph-eval.ts
 * `runModuleEval`.
 */
import { GraphInputError } from "../../errors.js";
import { OWN_RETRIEVAL_SETTINGS, type Source } from "./source.js";

export const traces = {
  kind: "traces",
  selectedBy: "traces",
  label: "--traces FILE",
  yours: "the recording",
  captures:
    "the retriever calls a recording holds (spans or runs): each call's query and documents as recorded, joined to the cases by conversation id and turn text",
  unused: [
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
    { mode: "with --traces (retrace's own retrieval does not run)", settings: OWN_RETRIEVAL_SETTINGS },
  ],
  trace: {
    read: async (options, given) => (await import("../trace-plan.js")).readModuleTrace(options, given),
    // Recorded turns are read as recorded, nothing re-run: only the case itself is joined.
    sweeps: "recorded",
    unscoredTurn: (options, caseId, turn, scored) =>
      new GraphInputError(
        `--traces ${options.traces!}: case ${caseId} turn ${turn} is not in the recording, or its recorded user text differs from the case's (not scored); turns of case ${caseId} the recording gives: ${scored.join(", ") || "none"}`,
      ),
    captured: { recorded: true, stateLimit: false },
  },
  run: async (options, hooks) => {
    const [g, t] = await Promise.all([import("../graph-eval.js"), import("../traces-eval.js")]);
    return g.runModuleEval(options, (o) => t.recordedTracesSource(o, () => g.idOptionsFor(o), "summary"), hooks);
  },
  // `trace` and `label`: the recording read, joined and scored by the source its eval sweeps, each turn's capture kept.
  turns: async (options, request) => {
    const [g, t, m] = await Promise.all([
      import("../graph-eval.js"),
      import("../traces-eval.js"),
      import("../../eval/measures/evaluators.js"),
    ]);
    const o = { ...options, k: request.k };
    const source = await t.recordedTracesSource(o, () => g.idOptionsFor(o), "keep");
    const swept = await source.sweep(
      request.cases,
      request.kb,
      [...(request.evaluators ?? m.retrievalSideEvaluators({ k: request.k }))],
      () => {},
      ...(request.selection !== undefined ? [request.selection] : []),
    );
    return [swept.turns];
  },
} satisfies Source<"traces">;
