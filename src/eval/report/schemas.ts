/**
 * The output formats of the evaluation, each defined once as a zod schema:
 * the report JSON (`retrace eval --json` / `--report-json`) and the
 * regression baseline (`--update-baseline`). The report's TypeScript types
 * (`Report`, `TurnReport`, `RunInfo`, …; re-exported by ./types.ts) are
 * inferred from these schemas, so the documentation of a field, its type and
 * its validation are written once, here. Both formats carry `schemaVersion`;
 * files of an older version are migrated on read, files of an unknown
 * version are refused with exit 2, naming the version needed and the one
 * found. Versions and migrations are listed in docs/schema-versions.md.
 * The schemas are split by section, one file each under ./schemas/ (the
 * report's `run`, `turns[]`, `gate`, `funnel`, …, the baseline, the versions
 * and migrations); this file is their one index: import from here.
 *
 * The report schema describes every field retrace writes (a test parses a
 * full report and gets every field back) and lets unknown fields through, so
 * a report that gained a section still reads; the baseline is strict at the
 * top level.
 *
 * Each object type is named by an interface that extends the schema's
 * inferred type (nothing is declared twice), and the schema is exported
 * typed by that interface, so the types that contain it (and the API
 * report) name it instead of spelling it out.
 */
export { REPORT_VERSION, BASELINE_VERSION, declaredVersion } from "./schemas/versions.js";
export { type Aggregate, AggregateSchema } from "./schemas/aggregate.js";
export {
  ATTRIBUTIONS,
  UNATTRIBUTED_REASONS,
  type GoldPositions,
  type TraceSummary,
  type TurnQueriesReport,
  type TurnReport,
  TurnReportSchema,
} from "./schemas/turn.js";
export {
  GRAPH_IDENTITY_KEYS,
  type GraphRunInfo,
  type RetrievalRunConfig,
  type RunInfo,
  RunInfoSchema,
} from "./schemas/run.js";
export { type Timings } from "./schemas/timings.js";
export { type GateFailure, type GateCheck, type GateFlip, type GateResult, GateResultSchema } from "./schemas/gate.js";
export { type GroupDelta } from "./schemas/deltas.js";
export { type AnswerSide } from "./schemas/answer-side.js";
export { type ShardInfo, ShardSchema } from "./schemas/shard.js";
export { type QueryAttributionReport } from "./schemas/query-attribution.js";
export { type FunnelStage, type FunnelReport, FunnelSchema } from "./schemas/funnel.js";
export { type JudgmentHole, type JudgmentsSection } from "./schemas/judgments.js";
export { type RepeatsSection } from "./schemas/repeats.js";
export {
  type Report,
  ReportSchema,
  migrateReportV1,
  migrateReportV2,
  migrateReportV4,
  parseReport,
} from "./schemas/report.js";
export { SOURCE_KINDS, type SourceKind, type BaselineSource, BaselineSourceSchema } from "./schemas/source.js";
export {
  BaselineGraphSchema,
  type BaselineGraph,
  BaselineSchema,
  type BaselineData,
  BaselineV1Schema,
  type BaselineV1,
  migrateBaselineV1,
  migrateBaselineV3,
  parseBaselineData,
} from "./schemas/baseline.js";
