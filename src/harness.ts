/**
 * `retrace-eval/harness`: the evaluation harness's building blocks, for
 * composing your own runs: the use-cases with their plans, evaluators,
 * the sweeps, retrieval capture and its checks, aggregation, gate,
 * baseline, comparison, quarantine, GitHub and PR output, the renderers,
 * labelling, catalogs and locales. The main entry `retrace-eval` exports
 * the part of it a user composes most; everything here is stable API too.
 * See docs/architecture.md.
 */
// Use-cases (src/app/): what the `retrace` commands run, as functions of plain options that return
// their results, print nothing (log lines and the progress you ask for go to stderr) and throw typed errors.
export { runEval, runGraphEval } from "./app/sources/registry.js";
export { openEvalSystem, type EvalOutcome, type SystemSettings } from "./app/eval.js";
export { sweepEval } from "./app/own-graph/eval.js";
export { planEval, baselineFileFor, EVAL_DEFAULTS, type EvalOptions, type EvalPlan } from "./app/eval-plan.js";
export { loadGraphData, type ExternalGraphOptions, type GraphEvalOptions } from "./app/graph-eval.js";
export {
  traceCase,
  planTrace,
  type CaseTrace,
  type GraphTraceOptions,
  type TraceCaseOptions,
  type TracedTurn,
  type TracePlan,
} from "./app/trace.js";
export { runTune, type CrossValidationSettings, type TuneOptions, type TuneOutcome } from "./app/tune.js";
export { mergeShardReports, type MergeOptions } from "./app/merge.js";
export { runBeir, tuneBeir, type BeirOptions, type BeirOutcome, type ModeResult } from "./app/beir.js";
export { ingestKb, type IngestKbOptions, type IngestKbOutcome, type IngestStore } from "./app/ingest.js";
export { checkData, type DataCheck, type SplitCounts } from "./app/check.js";
export { planLabel, buildLabelData, poolSystems, type LabelOptions, type LabelPlan } from "./app/label.js";
export { mergeLabelFiles, labelAgreement, type AgreementOutcome } from "./app/label-files.js";
export {
  relevanceJudge,
  openRelevanceJudge,
  parseGrade,
  RELEVANCE_PROMPT_VERSION,
  type RelevanceJudge,
} from "./app/label-judge.js";
export { renderLabelPage } from "./eval/label/page.js";
export { mergeLabels, type MergeOutcome } from "./eval/label/merge.js";
export {
  DEFAULT_DEPTH,
  DEFAULT_POOL,
  POOL_SYSTEMS,
  type LabelCase,
  type LabelPageData,
  type LabelTurn,
  type PoolSystem,
  type PooledCard,
  type Segments,
} from "./eval/label/pool.js";
export { cohenKappa, type KappaResult } from "./eval/stats/kappa.js";
export type { DataPaths } from "./app/data.js";
export { applyGate, readReport, reportOf, type GateOptions, type ReportInput } from "./app/report.js";
export { suggestFloors, type FloorSuggestion } from "./app/baseline.js";
export type { Progress, ProgressFactory, UseCaseHooks } from "./app/progress.js";

// Evaluation: evaluators in the {key, score, comment} shape, the runner, aggregation, gate, baseline, renderers.
export {
  allEvaluators,
  citationCorrectnessEvaluator,
  citationCoverageEvaluator,
  defaultEvaluators,
  groundednessEvaluator,
  judgedEvaluator,
  refusalEvaluator,
  retrievalEvaluator,
  retrievalSideEvaluators,
  runEvaluators,
  CITATION_CORRECTNESS_KEY,
  CITATION_COVERAGE_KEY,
  GROUNDEDNESS_KEY,
  REFUSAL_CORRECTNESS_KEY,
  type AsyncEvaluator,
  type EvaluatorSpec,
  type Judge,
  type JudgeVerdict,
} from "./eval/measures/evaluators.js";
export { goldPositions, summarizeTrace } from "./eval/report/trace-summary.js";
export { DEFAULT_CONCURRENCY } from "./eval/sweep/turns.js";
export {
  aggregateTurns,
  buildReport,
  summarize,
  type AggregateOptions,
  type Aggregation,
  type BuildReportInput,
} from "./eval/report/aggregate.js";
export { gate, DEFAULT_MAX_DROP, type GateThresholds } from "./eval/gate/gate.js";
export {
  assertComparable,
  baselineFromReport,
  parseBaseline,
  readBaseline,
  writeBaseline,
  BASELINE_VERSION,
  type Baseline,
  type BaselineConfig,
} from "./eval/gate/baseline.js";
export { renderJUnit, renderMarkdown, renderTable, reportToJSON } from "./eval/report/render.js";
export {
  buildComparison,
  compareFunnels,
  compareRuns,
  comparisonMethod,
  comparisonNote,
  movedTurns,
  readRunSide,
  referenceComparison,
  runSideOf,
  turnFlips,
  SHIFT_THRESHOLD,
  type Comparison,
  type ComparisonMethod,
  type FunnelChangeRow,
  type FunnelComparison,
  type FunnelCount,
  type KeyComparison,
  type MovedTurn,
  type RunSide,
  type TurnFlip,
} from "./eval/gate/compare.js";
export { runDifferences, type RunDifference } from "./eval/gate/run-diff.js";
export { parseQuarantine, readQuarantine, type Quarantine, type QuarantineEntry } from "./eval/gate/quarantine.js";
export { annotationLines, workflowCommand, type AnnotationTarget } from "./eval/gate/github.js";
export { renderPrComment, type PrCommentOptions } from "./eval/report/render/pr-comment.js";
export { caseIndexOf, readCaseIndex, type CaseIndex } from "./kb/cases.js";
export { explainGold, type GoldExplanation } from "./eval/report/attribution.js";
export { renderHtmlReport } from "./eval/report/html/report-page.js";
export { renderHtmlComparison } from "./eval/report/html/compare-page.js";
export type { JudgmentHole, JudgmentsSection, Report } from "./eval/report/types.js";
export type { EvalResult, Evaluator, TurnArtifacts } from "./eval/measures/types.js";

// The typed errors are exported from the main entry `retrace-eval`, with `formatIssue` and `DataIssue` here.
export { formatIssue, type DataIssue } from "./errors.js";

// ---------------------------------------------------------------------------
// Evaluate your own graph (docs/evaluate-your-graph.md): the retriever-run
// capture handler and the graph sweep runner, usable from a test file
// without the CLI.
// ---------------------------------------------------------------------------
export {
  DEFAULT_ID_KEYS,
  RETRIEVAL_CALLS,
  RetrieverCapture,
  capturedGoldPositions,
  cardIdsOf,
  describeIdKeys,
  documentId,
  retrievalSteps,
  selectRetrieval,
  type CapturedRetrieval,
  type CapturedRetrieverRun,
  type CapturedStage,
  type DocumentIdOptions,
  type DocumentLike,
  type IdOptions,
  type RetrievalCall,
  type RetrieverRuns,
} from "./eval/sweep/capture.js";
export {
  DEFAULT_GRAPH_EXPORT,
  capturedRetrievers,
  defaultInput,
  graphGateFailures,
  isCompiledGraph,
  loadGraph,
  runGraphSweep,
  type EvaluableGraph,
  type GraphSweepOptions,
  type TraceSource,
  sweepGraphCases,
  type GraphSweepResult,
  type SweepPhases,
  type GraphTurn,
  type InputMapper,
  type InputTurn,
  type LoadedGraph,
} from "./eval/sweep/external-graph.js";
export { baseRetrieverOf, baseRetrieversFor, type RetrieverSearchRoots } from "./eval/sweep/retriever-instances.js";
export {
  UNKNOWN_ID_LIMIT,
  checkKnownIds,
  graphRunFacts,
  stateLimitBytes,
  type GraphGateOptions,
  type GraphRunFacts,
} from "./eval/sweep/graph-checks.js";
export { DEFAULT_MAX_STATE_MB, DEFAULT_TURN_TIMEOUT_S, stateSize } from "./eval/sweep/turn-guard.js";
export { loadCatalog, parseCatalog } from "./kb/catalog.js";

// Score recorded traces (docs/recorded-traces.md): read OTLP/JSON or LangSmith run exports into
// conversations, join them to cases by thread id and turn position, score them with the same capture
// layer as a --graph run, and build the write-back files (Phoenix span annotations, LangSmith feedback).
export { readTraces, type ReadTraces } from "./eval/traces/read.js";
export { joinTraces, type JoinedTurn, type TraceJoin } from "./eval/traces/join.js";
export {
  type RecordedConversation,
  type RecordedDocument,
  type RecordedRun,
  type RecordedTurn,
  type TraceFilters,
} from "./eval/traces/types.js";
export { TRACE_FORMATS, type TraceFormat } from "./eval/traces/formats/registry.js";
export {
  runRecordedSweep,
  type CaptureSummary,
  type RecordedGraphTurn,
  type RecordedSweepOptions,
} from "./eval/sweep/recorded.js";
export {
  langsmithFeedback,
  phoenixAnnotations,
  type LangSmithFeedback,
  type PhoenixSpanAnnotation,
} from "./app/traces-eval.js";
export { langfuseScores, type LangfuseScore } from "./app/langfuse-scores.js";
export { threadCaseId } from "./kb/conversations.js";

// Locales are BCP-47 strings (docs/languages.md): the validating constructor and helpers, and the analyzer choice per language.
export {
  BUILTIN_LOCALES,
  canonicalLocale,
  isLocale,
  languageOf,
  tableLocaleFor,
  toLocale,
  type BuiltinLocale,
} from "./kb/types.js";
export {
  analyzerProfile,
  validateAnalyzerConfig,
  type AnalyzerOverride,
  type AnalyzerProfile,
} from "./retrieval/analyzer.js";
