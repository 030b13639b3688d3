/**
 * The report's `judgments` section: graded relevance and judged@k
 * (docs/metrics.md).
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";
import { count, finite } from "./primitives.js";

const judgmentHoleObject = z.object({
  caseId: z.string(),
  turn: count,
  /** The turn's judged@k. */
  judged: finite,
  /** Its top-k cards without a judgment, in rank order. */
  unjudged: z.array(z.string()),
});
/** A turn whose top-k holds cards nobody judged (docs/metrics.md, "judged@k"). */
export interface JudgmentHole extends z.output<typeof judgmentHoleObject> {}

const judgmentsObject = z.object({
  /** Turns whose nDCG@k was scored with graded gains (the case turn's `relevant`); every other turn's nDCG@k is binary over `must_cite_one_of`. */
  gradedTurns: count,
  /** Of the graded turns, those without a citation contract: scored for nDCG@k only. */
  relevanceOnlyTurns: count,
  /** Turns that carry judgments (`judged` or `relevant`): the turns judged@k is measured on. */
  judgedTurns: count,
  /** The judged@k below which a run is warned about (docs/metrics.md). */
  warnBelow: finite,
  /** Turns with unjudged cards in their top-k, in report order. */
  holes: z.array(judgmentHoleObject),
});
/** Which nDCG a run used and how complete its judgments are (docs/metrics.md); present when a turn carries `relevant` or `judged`. */
export interface JudgmentsSection extends z.output<typeof judgmentsObject> {}
export const JudgmentsSchema: z.ZodType<JudgmentsSection> = judgmentsObject;
