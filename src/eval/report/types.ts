/**
 * Data contracts of the report (docs/architecture.md §7): the types, each
 * inferred from its zod schema in ./schemas.ts (where the fields are
 * documented), and the one report version constant defined there. The
 * evaluator contract (EvalResult, TurnArtifacts, Evaluator) and the judge's
 * cost (JudgeCost = JudgeInfo, the report's `judge`, + JudgeUsage, its
 * `timings.judge`) is in
 * ../measures/types.ts.
 */
export { REPORT_VERSION } from "./schemas.js";
export type {
  Aggregate,
  AnswerSide,
  FunnelReport,
  FunnelStage,
  GateCheck,
  GateFailure,
  GateFlip,
  GateResult,
  GoldPositions,
  GraphRunInfo,
  GroupDelta,
  JudgmentHole,
  JudgmentsSection,
  QueryAttributionReport,
  RepeatsSection,
  Report,
  RetrievalRunConfig,
  RunInfo,
  ShardInfo,
  Timings,
  TraceSummary,
  TurnQueriesReport,
  TurnReport,
} from "./schemas.js";
export type { JudgeCost, JudgeInfo, JudgeUsage } from "../measures/types.js";
