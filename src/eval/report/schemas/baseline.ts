/**
 * The baseline JSON, schemaVersion 3 (docs/gates-and-exit-codes.md): its
 * fields, the migrations from versions 1 and 2, and `parseBaselineData`.
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";
import { parseWithSchema } from "../../../kb/schema-issues.js";
import { aggregateObject } from "./aggregate.js";
import { funnelStageObject } from "./funnel.js";
import { finite, storeKind } from "./primitives.js";
import { migrateRetrievalRecord } from "./legacy-retrieval.js";
import { RetrievalRunConfigSchema } from "./run.js";
import { BASELINE_VERSION, declaredVersion, orThrow, versionError } from "./versions.js";

/**
 * How a `--graph` baseline was scored (a comparison across a different
 * `retrievalCall` or `idKey` / `idMapHash` is refused: it would measure the
 * scoring change, not the graph) and what ran (a different `moduleHash` or
 * `configurableHash` is reported as a note: that is what a regression check is for).
 */
export const BaselineGraphSchema = z
  .object({
    /** The module relative to the project root, and the export. */
    module: z.string(),
    exportName: z.string(),
    /** sha256 of the module file. */
    moduleHash: z.string(),
    retrievalCall: z.enum(["last", "first", "all"]),
    /** The id keys tried (`describeIdKeys`), or `idMap (--id-map)`. */
    idKey: z.string(),
    /** sha256 of the `--id-map` module file, or null. */
    idMapHash: z.string().nullable(),
    /** sha256 of the canonical JSON of `--configurable`, or null. */
    configurableHash: z.string().nullable(),
  })
  .strict();
export type BaselineGraph = z.infer<typeof BaselineGraphSchema>;

const baselineFields = {
  created: z.string().min(1),
  datasetHash: z.string().min(1),
  kbHash: z.string(),
  k: z.number().int().positive(),
  config: z
    .object({
      embedder: z.string().nullable(),
      mode: z.string().nullable(),
      rerank: z.string().nullable(),
    })
    .strict(),
  /** Store kind of the run the baseline was made from (absent in baselines written before it was recorded). */
  storeKind: storeKind.optional(),
  /** `--graph` runs: how the run was scored and what ran (absent in baselines of retrace's own graph and in those written before it was recorded). */
  graph: BaselineGraphSchema.optional(),
  /** The run's retrieval settings per locale (the report's `run.retrieval`: depths, the opaque fusion `{ method, params }` and settings); absent for runs without retrieval and in baselines written before it was recorded. */
  retrieval: z.record(RetrievalRunConfigSchema).optional(),
  aggregates: z.record(aggregateObject),
  /** The report's split aggregates: split → group → key → aggregate (absent in older baselines). */
  splits: z.record(z.record(z.record(aggregateObject))).optional(),
  /** `caseId#turn` → key → score. */
  perTurn: z.record(z.record(finite)),
  /** The report's stage funnel, for `--max-stage-drop` (absent in older baselines). */
  funnel: z.array(funnelStageObject).optional(),
  /**
   * Written from a `--repeat N` run (absent otherwise and in older
   * baselines): the repeats per turn, whether they were identical, and, when
   * they differed, each turn's score per repeat (`caseId#turn` → key →
   * scores, repeat 1 first) — what the gate's interval-aware test resamples
   * (docs/statistics.md, "Baseline gates with repeats").
   */
  repeats: z
    .object({
      n: z.number().int().min(2),
      identical: z.boolean(),
      perTurn: z.record(z.record(z.array(finite).min(1))).optional(),
    })
    .strict()
    .optional(),
};

/** The baseline JSON, schemaVersion 2. */
export const BaselineSchema = z.object({ schemaVersion: z.literal(BASELINE_VERSION), ...baselineFields }).strict();
export type BaselineData = z.infer<typeof BaselineSchema>;

/** The baseline JSON as written before `schemaVersion` (0.1.0): `"version": 1`, otherwise the fields of version 2 (its `retrieval` migrated first, `migrateRetrievalRecord`). */
export const BaselineV1Schema = z.object({ version: z.literal(1), ...baselineFields }).strict();
export type BaselineV1 = z.infer<typeof BaselineV1Schema>;

/** Baseline 1 → 3: `version: 1` becomes `schemaVersion: 3`; every other field is kept as it is (its `retrieval` already migrated). Pure. */
export function migrateBaselineV1(v1: BaselineV1): BaselineData {
  const { version: _version, ...rest } = v1;
  return { schemaVersion: BASELINE_VERSION, ...rest };
}

/**
 * Baseline 2 → 3 (and the `retrieval` of a version 1 file): each `retrieval`
 * entry's named settings of retrace's retriever become the opaque
 * `{ fusion: { method, params }, settings }` (legacy-retrieval.ts); every
 * other field and the key order are kept. Pure; checked by the schema after.
 */
export function migrateBaselineV2(v2: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...v2 };
  if (v2.schemaVersion === 2) out.schemaVersion = BASELINE_VERSION;
  if ("retrieval" in v2) out.retrieval = migrateRetrievalRecord(v2.retrieval);
  return out;
}

/** Validate a parsed baseline of any known version, migrating it to the current one; DataValidationError (exit 2) otherwise. */
export function parseBaselineData(data: unknown, file: string): BaselineData {
  const version = declaredVersion(data);
  if (version === BASELINE_VERSION) return orThrow(parseWithSchema(BaselineSchema, data, { file }));
  const migrated =
    typeof data === "object" && data !== null ? migrateBaselineV2(data as Record<string, unknown>) : data;
  if (version === 2) return orThrow(parseWithSchema(BaselineSchema, migrated, { file }));
  if (version === 1) return migrateBaselineV1(orThrow(parseWithSchema(BaselineV1Schema, migrated, { file })));
  throw versionError(file, "baseline", BASELINE_VERSION, version, "1 or 2");
}
