/**
 * The report's `queryAttribution` section (docs/query-attribution.md).
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";
import { AggregateSchema } from "./aggregate.js";
import { count } from "./primitives.js";

const attributionCountsObject = z.record(count);

const queryAttributionObject = z.object({
  /** False when counterfactual retrieval was off (`--counterfactual off`, a store-less run, or `--graph` without `--counterfactual`). */
  enabled: z.boolean(),
  /** Why it was off. */
  reason: z.string().optional(),
  /** Gold-bearing turns attributed, and of them those with a `standalone` oracle. */
  turns: count,
  withStandalone: count,
  /** Attribution → turns, in ATTRIBUTIONS order. */
  counts: attributionCountsObject,
  /** split → group → attribution counts (position, kind, locale, part). */
  splits: z.record(z.record(attributionCountsObject)),
  /** split → group → gold-bearing turns attributed in that group (the group's counts summed), so renderings print the total without adding it up. Absent in reports written before it; filled when such a report is read (src/eval/report/derived-on-read.ts). */
  splitTurns: z.record(z.record(count)).optional(),
  /** query variant (graph, raw, standalone) → metric key → aggregate over the attributed turns that have that query. */
  means: z.record(z.record(AggregateSchema)),
  /** `--graph --counterfactual`: gold-bearing turns left unattributed, by reason (`TurnReport.queriesOff`); absent when none. */
  unattributed: z.record(count).optional(),
  /** `--graph --counterfactual`: the extra retriever calls made (the sum of the turns' `counterfactualCalls`); absent on retrace's own graph. */
  retrieverCalls: count.optional(),
});
/** The report's query-attribution section (docs/query-attribution.md). */
export interface QueryAttributionReport extends z.output<typeof queryAttributionObject> {}
export const QueryAttributionSchema: z.ZodType<QueryAttributionReport> = queryAttributionObject;
