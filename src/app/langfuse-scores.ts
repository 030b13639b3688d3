/**
 * `--out langfuse:FILE` (docs/recorded-traces.md, "Writing the scores
 * back"): Langfuse scores, one JSON object a line, each the body Langfuse's
 * score API takes (`ScoreBody` of its JS SDK, `langfuse.score.create(body)`;
 * `POST /api/public/scores`): `id`, `traceId`, `observationId`, `name`,
 * `value`, `dataType`, `comment`, `metadata`. One per scored turn and
 * retrieval metric, on the turn's trace and its root observation (a
 * Langfuse trace's root observation, or the root span of an OTLP recording
 * Langfuse ingested: Langfuse keeps OTel's trace and span ids). hit@k is a
 * BOOLEAN score (1 / 0), the others NUMERIC; the comment is the evaluator's
 * (`hit=1 recall=0.50 …`).
 */
import type { Report } from "../eval/report/types.js";
import type { RecordedGraphTurn } from "../eval/sweep/recorded.js";
import { scoredResults, uuidV5 } from "./traces-eval.js";

/** One Langfuse score body (`ScoreBody` of `@langfuse/core`; test/eval/langfuse-scores.test.ts checks the type against it). */
export interface LangfuseScore {
  /** A UUID (version 5) of the trace, the observation and the name: the same recording gives the same ids, and Langfuse updates a score sent again with its id. */
  id: string;
  traceId: string;
  /** The turn's root observation (absent when the export holds no observation of the trace). */
  observationId?: string;
  name: string;
  value: number;
  dataType: "NUMERIC" | "BOOLEAN";
  comment: string;
  metadata: { evaluator: "retrace"; case: string; turn: number };
}

/** The namespace of retrace's Langfuse score ids (a fixed random UUID). */
const SCORE_NAMESPACE = "0f6f1d9a-3c2e-4b8f-8a61-7d94e2b5c0a4";

/** Langfuse score bodies of a finished traces report (`--out langfuse:`). */
export function langfuseScores(report: Report, recorded: readonly RecordedGraphTurn[]): LangfuseScore[] {
  return scoredResults(report, recorded).map(({ rec, key, score, comment }) => {
    const boolean = key.startsWith("retrieval_hit");
    return {
      id: uuidV5(SCORE_NAMESPACE, `${rec.recorded.traceId}\n${rec.recorded.rootId}\n${key}`),
      traceId: rec.recorded.traceId,
      ...(rec.recorded.rootId !== rec.recorded.traceId ? { observationId: rec.recorded.rootId } : {}),
      name: key,
      value: boolean ? (score >= 1 ? 1 : 0) : score,
      dataType: boolean ? "BOOLEAN" : "NUMERIC",
      comment: comment ?? "",
      metadata: { evaluator: "retrace", case: rec.report.caseId, turn: rec.report.turn },
    };
  });
}
