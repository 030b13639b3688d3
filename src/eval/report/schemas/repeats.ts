/**
 * The report's `repeats` section: a `--repeat N` run's statistics
 * (docs/ci.md, "Repeats and flaky turns").
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";
import { count, finite, interval } from "./primitives.js";

export const repeatsObject = z.object({
  /** Repeats per case (`--repeat N`), each on a fresh thread. */
  n: z.number().int().min(2),
  /** Every turn scored the same in every repeat (a deterministic graph): the aggregates are a single run's. */
  identical: z.boolean(),
  /** Gold-bearing turns hit in some repeats and missed in others, in dataset order, with their hit rate over the repeats. */
  flaky: z.array(z.object({ caseId: z.string(), turn: count, hits: count, n: count, rate: finite })),
  /** Turns that errored in at least one repeat (reported as error turns). */
  errorTurns: count,
  /**
   * Per key: the mean over turns of each turn's mean over repeats, its 95%
   * two-stage bootstrap interval (cases, then repeats within each case;
   * src/eval/stats/repeats.ts) — the interval the key's overall aggregate
   * carries — and the within-case (repeat) and between-case shares of the
   * variance of the turn × repeat values.
   */
  metrics: z.record(
    z.object({
      mean: finite,
      n: count,
      ci95: interval.optional(),
      withinShare: finite,
      betweenShare: finite,
    }),
  ),
});
/** A `--repeat N` run's repeat statistics (docs/ci.md, "Repeats and flaky turns"). */
export interface RepeatsSection extends z.output<typeof repeatsObject> {}
