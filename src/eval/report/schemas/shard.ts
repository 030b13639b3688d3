/**
 * The report's `shard` section: the partial report of one shard
 * (docs/reliability.md).
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";
import { count } from "./primitives.js";

const shardObject = z
  .object({
    /** This shard, 1..count. */
    index: z.number().int().positive(),
    count: z.number().int().positive(),
    /** The assignment rule (SHARD_RULE). */
    rule: z.string().min(1),
    /** This shard's case ids, in dataset order, and its number of turns. */
    caseIds: z.array(z.string()),
    turns: count,
    /**
     * The whole selection the shards split: the datasetHash an unsharded run
     * reports, its case ids in dataset order, its turns; for a `--traces` run
     * also each case's turns in the cases file (`caseTurns`, in `caseIds`
     * order), since its report holds only the recorded turns that joined
     * (docs/recorded-traces.md#shards); absent otherwise.
     */
    dataset: z
      .object({
        datasetHash: z.string().min(1),
        caseIds: z.array(z.string()),
        turns: count,
        caseTurns: z.array(count).optional(),
      })
      .strict(),
  })
  .strict()
  .refine((s) => s.index <= s.count, { message: "the shard index must not exceed the shard count", path: ["index"] });
/**
 * Marks a partial report written by `retrace eval --shard i/n` (src/eval/gate/shard.ts,
 * docs/reliability.md "Sharded sweeps"). Its aggregates cover this shard's
 * turns only and its gate is not evaluated; `retrace merge` turns all n
 * shards into the full report.
 */
export interface ShardInfo extends z.output<typeof shardObject> {}
export const ShardSchema: z.ZodType<ShardInfo> = shardObject;
