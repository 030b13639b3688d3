/**
 * The report's `answerSide` section: where the answer-side headline figures
 * come from (docs/holdout.md).
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";
import { count } from "./primitives.js";

const answerSideObject = z.object({
  /** "holdout": headline answer-side figures are on held-out turns only; "all": no split, every turn. */
  scope: z.enum(["holdout", "all"]),
  /** The answer-side keys of the run (keys outside the retrieval metric registry), in key order. */
  keys: z.array(z.string()),
  /** Turns of each part in this run (0 and 0 without a split). */
  turns: z.object({ tune: count, holdout: count }),
});
/** Where the answer-side headline figures come from (src/eval/report/parts.ts, docs/holdout.md). */
export interface AnswerSide extends z.output<typeof answerSideObject> {}
export const AnswerSideSchema: z.ZodType<AnswerSide> = answerSideObject;
