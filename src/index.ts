/**
 * retrace's public API (`retrace-eval`): what a user composes. The use-cases
 * the `retrace` commands run (an eval of retrace's graph or of yours, a
 * trace, a tune, a merge, BEIR, ingest, check, labelling), the contracts they
 * return (the report, the baseline, a captured turn), the instrumented
 * retrieve node and the graph factory, retrieval capture for any LangGraph.js
 * graph, the evaluators and renderers, the metrics, and the typed errors.
 *
 * Everything else is on a subpath (docs/architecture.md, "Entry points"):
 * `retrace-eval/harness` (every building block of the harness),
 * `retrace-eval/agent` (retrace's own agent, node by node),
 * `retrace-eval/metrics`, `retrace-eval/retrieval`, `retrace-eval/langchain`,
 * `retrace-eval/testing` and `retrace-eval/studio`. CHANGELOG.md lists where
 * each name that left this entry went.
 */

// Use-cases (src/app/): functions of plain options that return their results, print nothing
// (log lines and the progress you ask for go to stderr) and throw typed errors.
export { runEval, runGraphEval } from "./app/sources/registry.js";
export type { EvalOutcome } from "./app/eval.js";
export type { EvalOptions } from "./app/eval-plan.js";
export type { ExternalGraphOptions, GraphEvalOptions } from "./app/graph-eval.js";
export { traceCase, type CaseTrace, type GraphTraceOptions, type TraceCaseOptions } from "./app/trace.js";
export { runTune, type TuneOptions, type TuneOutcome } from "./app/tune.js";
export { mergeShardReports, type MergeOptions } from "./app/merge.js";
export { runBeir, type BeirOptions, type BeirOutcome } from "./app/beir.js";
export { ingestKb, type IngestKbOptions, type IngestKbOutcome } from "./app/ingest.js";
export { checkData, type DataCheck } from "./app/check.js";
export { planLabel, type LabelOptions } from "./app/label.js";
export { applyGate, readReport, type GateOptions } from "./app/report.js";
export type { UseCaseHooks } from "./app/progress.js";

// The graph and its instrumented retrieve node (the rest of the agent: retrace-eval/agent).
export { buildGraph, type BuildGraphOptions, type RetraceGraph } from "./graph/build.js";
export { RetraceState, RetrievalAnnotation } from "./graph/state.js";
export {
  RETRIEVAL_TRACE_EVENT,
  isRetrievalTraceEvent,
  retrieveNode,
  type RetrievalTraceEvent,
} from "./nodes/retrieve.js";
export { openSystem, type RetraceSystem, type SystemOptions } from "./system.js";

// Retrieval capture for any LangGraph.js graph (docs/evaluate-your-graph.md).
export {
  RetrieverCapture,
  documentId,
  selectRetrieval,
  type CapturedRetrieval,
  type CapturedStage,
  type IdOptions,
  type RetrievalCall,
} from "./eval/sweep/capture.js";
export { loadGraph, runGraphSweep, type GraphSweepOptions, type GraphTurn } from "./eval/sweep/external-graph.js";

// Evaluation: evaluators in the {key, score, comment} shape, aggregation, gate, baseline, renderers.
export {
  defaultEvaluators,
  retrievalEvaluator,
  runEvaluators,
  type EvaluatorSpec,
  type Judge,
  type JudgeVerdict,
} from "./eval/measures/evaluators.js";
export type { EvalResult, Evaluator, TurnArtifacts } from "./eval/measures/types.js";
export { buildReport } from "./eval/report/aggregate.js";
export { gate, type GateThresholds } from "./eval/gate/gate.js";
export { baselineFromReport, readBaseline, writeBaseline, type Baseline } from "./eval/gate/baseline.js";
export { compareRuns } from "./eval/gate/compare.js";
export { renderJUnit, renderMarkdown, renderTable, reportToJSON } from "./eval/report/render.js";
export { renderHtmlReport } from "./eval/report/html/report-page.js";
export { renderPrComment } from "./eval/report/render/pr-comment.js";
export type { Report } from "./eval/report/types.js";

// The metrics (all of them, and trec_eval's scorer: retrace-eval/metrics).
export { hitAtK, ndcgAtK, recallAtK, reciprocalRankAtK, scoreTrec } from "./metrics.js";

// Data.
export { loadData } from "./kb/load.js";
export type { EvalCase, EvalTurn, KnowledgeBase } from "./kb/types.js";

// Typed errors: each has a `code` and an `exitCode`.
export {
  BaselineMismatchError,
  DataValidationError,
  DimensionMismatchError,
  InvalidArgumentError,
  MissingPeerError,
  ModelUnavailableError,
  NotMeasuredError,
  RetraceError,
  ServiceUnavailableError,
  GraphInputError,
  InternalError,
  exitCodeOf,
  isRetraceError,
  type RetraceErrorCode,
} from "./errors.js";
