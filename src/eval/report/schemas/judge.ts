/**
 * The groundedness judge as the report records it: who judged (the `judge`
 * section) and what it cost (`timings.judge`).
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";
import type { JudgeInfo, JudgeUsage } from "../../measures/types.js";
import { count } from "./primitives.js";

export const JudgeInfoSchema: z.ZodType<JudgeInfo> = z.object({
  model: z.string(),
  prompt: z.string(),
  unparsable: count,
});

/** The run-dependent counters of the judge (`timings.judge`; in the `judge` section up to schemaVersion 2). */
export const JudgeUsageSchema: z.ZodType<JudgeUsage> = z.object({
  calls: count,
  cached: count,
  inputTokens: count.nullable(),
  outputTokens: count.nullable(),
});
