/**
 * An aggregated key (mean, n, interval, chance) and the split groups built of
 * them (docs/statistics.md).
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";
import { finite, interval } from "./primitives.js";

export const aggregateObject = z
  .object({
    /** Turn-weighted mean (over the turns that have the key). */
    mean: finite,
    /** Number of turns. */
    n: z.number().int().positive(),
    /** 95% percentile-bootstrap interval of the mean (seeded), resampling the unit of `Report.bootstrap.unit`. Absent when fewer than 2 units. */
    ci95: interval.optional(),
    /** Number of distinct cases among those turns (docs/statistics.md). */
    nCases: z.number().int().positive().optional(),
    /** Exact expected value under a uniformly random ranking of the locale's cards, averaged over the same turns (retrieval metrics only; docs/statistics.md). */
    chance: finite.optional(),
  })
  .strict();
/** One aggregated key: mean over n turns, optional 95% bootstrap interval, case count and chance level (docs/statistics.md). */
export interface Aggregate extends z.output<typeof aggregateObject> {}
export const AggregateSchema: z.ZodType<Aggregate> = aggregateObject;

/** Split groups: group → key → aggregate. */
export const splitGroups = z.record(z.record(AggregateSchema));
