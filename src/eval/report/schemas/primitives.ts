/**
 * The zod building blocks every section of the report and baseline schemas
 * shares: finite numbers, counts, intervals, store kinds.
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";

export const finite = z.number().finite();
export const count = z.number().int().nonnegative();
export const interval = z.tuple([finite, finite]);
/** What a store choice resolved to (docs/decisions/0006-one-composition-root-and-store-vocabulary.md); `graph`: a `--graph` run, whose graph brings its own store. */
export const storeKind = z.enum(["local", "remote", "memory", "none", "graph"]);
