/**
 * The report's `funnel` section: the stage funnel with intervals
 * (docs/metrics.md, "Stage funnel").
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";
import { count, finite, interval } from "./primitives.js";

export const funnelStageObject = z.object({
  /** A stage id of the stage registry (`query`, `dense`, `bm25`, `fused`, `reranked`, `parents`, `final`). */
  stage: z.string(),
  label: z.string(),
  /** Gold-bearing turns where the stage was measured, and of them those with a gold card still present. */
  n: count,
  present: count,
  nCases: count,
  /** present / n. */
  share: finite,
  /** 95% percentile-bootstrap interval of the share, resampling `Report.bootstrap.unit` (cases by default). */
  ci95: interval.optional(),
});
/** One stage of the funnel as a statistic (docs/metrics.md, "Stage funnel"). */
export interface FunnelStage extends z.output<typeof funnelStageObject> {}
const FunnelStageSchema: z.ZodType<FunnelStage> = funnelStageObject;

const funnelObject = z.object({
  /** Every stage this run measured, in pipeline order. */
  stages: z.array(FunnelStageSchema),
  /** split → group → stages (position, kind, locale, part). */
  splits: z.record(z.record(z.array(FunnelStageSchema))),
});
/** The stage funnel with intervals (src/eval/report/funnel-stats.ts). */
export interface FunnelReport extends z.output<typeof funnelObject> {}
export const FunnelSchema: z.ZodType<FunnelReport> = funnelObject;

const recallCurveObject = z.object({
  /** A stage id of the stage registry (src/eval/report/stages.ts). */
  stage: z.string(),
  /** `values[i]` is the mean recall at k = i + 1. */
  values: z.array(finite),
});
const recallCurvesObject = z.object({
  /** The largest k drawn (the longest stage list seen, at least the run's k, at most 50); 0 when no gold-bearing turn had a trace. */
  maxK: count,
  curves: z.array(recallCurveObject),
});
const recallCurvesReportObject = z.object({
  all: recallCurvesObject,
  /** locale → its turns' curves, in the turns' first-seen order. */
  locale: z.record(recallCurvesObject),
});
/** One stage's recall@k curve. */
export interface RecallCurve extends z.output<typeof recallCurveObject> {}
/** The curves of a group of turns. */
export interface RecallCurves extends z.output<typeof recallCurvesObject> {}
/** The report's `recallCurves` (src/eval/report/recall-curves.ts): recall@k per stage, overall and per locale. */
export interface RecallCurvesReport extends z.output<typeof recallCurvesReportObject> {}
export const RecallCurvesSchema: z.ZodType<RecallCurvesReport> = recallCurvesReportObject;
