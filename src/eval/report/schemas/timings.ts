/**
 * The report's `timings` section: wall-clock figures only, never compared
 * (docs/determinism.md).
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";
import { JudgeUsageSchema } from "./judge.js";

const timingsObject = z.object({
  /** ISO time the sweep started. */
  started: z.string(),
  /** Wall time of the sweep, ms. */
  durationMs: z.number(),
  /** Per-stage retrieval timings (ms) of each turn, keyed `caseId#turn`. */
  turns: z.record(z.record(z.number())),
  /**
   * Where the sweep's wall time went, ms: `graph` = Σ graph invocations,
   * `evaluate` = Σ evaluator runs, `report` = statistics and gate after the
   * sweep. At concurrency > 1 the sums overlap and can exceed `durationMs`.
   */
  phases: z.object({ graph: z.number(), evaluate: z.number(), report: z.number() }).optional(),
  /** What the groundedness judge cost in this run (calls, cache hits, tokens): depends on the cache, so it lives here (present only when `--judge` ran one). */
  judge: JudgeUsageSchema.optional(),
  /**
   * Before the sweep, ms (retrace's own graph; absent for `--graph`, whose
   * retriever is the user's): `embedder` = making the embedder ready
   * (`lsa-fit`: the corpus-fit LSA fitted; `lsa-load`: its saved state read;
   * `model-load`; `none`: built-in; `chanceMs`: the part of an `lsa-fit`
   * the chance baseline took), `store` = the ingest into Chroma
   * (embedding the chunks and writing them; `up-to-date`: only the check),
   * null for the memory store.
   */
  setup: z
    .object({
      embedder: z.object({
        kind: z.enum(["lsa-fit", "lsa-load", "model-load", "none"]),
        ms: z.number(),
        chanceMs: z.number().optional(),
      }),
      store: z.object({ status: z.enum(["ingested", "up-to-date"]), writeMs: z.number() }).nullable(),
    })
    .optional(),
});
/**
 * Every run-dependent figure of a run — wall-clock times, and the judge's
 * calls, cache hits and tokens — kept in one section so that everything else
 * in the report is a pure function of data, configuration and seed
 * (docs/determinism.md). Comparisons and `retrace merge` ignore it by name.
 */
export interface Timings extends z.output<typeof timingsObject> {}
export const TimingsSchema: z.ZodType<Timings> = timingsObject;
