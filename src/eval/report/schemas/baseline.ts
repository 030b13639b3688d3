/**
 * The baseline JSON, schemaVersion 4 (docs/gates-and-exit-codes.md): its
 * fields, the migrations from versions 1, 2 and 3, and `parseBaselineData`.
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";
import { parseWithSchema } from "../../../kb/schema-issues.js";
import { aggregateObject } from "./aggregate.js";
import { funnelStageObject } from "./funnel.js";
import { finite, storeKind } from "./primitives.js";
import { migrateRetrievalRecord } from "./legacy-retrieval.js";
import { legacySourceOf } from "./legacy-graph-id.js";
import { BaselineSourceSchema } from "./source.js";
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
    /** sha256 of the module file; null for recorded traces (nothing ran: no module). */
    moduleHash: z.string().nullable(),
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
      /** The id of the embedder retrace ran; null when it ran none (no retrieval, a `--graph` or `--traces` run). */
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

const { created, datasetHash, kbHash, k, ...afterK } = baselineFields;

/** The baseline JSON, schemaVersion 4: `source` (what the run evaluated) was added before `config`. */
export const BaselineSchema = z
  .object({
    schemaVersion: z.literal(BASELINE_VERSION),
    created,
    datasetHash,
    kbHash,
    k,
    /** What the run evaluated: retrace's own graph, a graph of your own (its module relative to its project root, and the export) or recorded traces (baseline version 4). */
    source: BaselineSourceSchema,
    ...afterK,
  })
  .strict();
export type BaselineData = z.infer<typeof BaselineSchema>;

/** The baseline JSON as written before `schemaVersion` (0.1.0): `"version": 1`, otherwise the fields of versions 2 and 3 (its `retrieval` migrated first, `migrateRetrievalRecord`). */
export const BaselineV1Schema = z.object({ version: z.literal(1), ...baselineFields }).strict();
export type BaselineV1 = z.infer<typeof BaselineV1Schema>;

/** Baseline 1 → 3: `version: 1` becomes `schemaVersion: 3`; every other field is kept as it is (its `retrieval` already migrated; `migrateBaselineV3` then adds `source`). Pure. */
export function migrateBaselineV1(v1: BaselineV1): Omit<BaselineV1, "version"> & { schemaVersion: 3 } {
  const { version: _version, ...rest } = v1;
  return { schemaVersion: 3, ...rest };
}

/**
 * Baseline 2 → 3 (and the `retrieval` of a version 1 file): each `retrieval`
 * entry's named settings of retrace's retriever become the opaque
 * `{ fusion: { method, params }, settings }` (legacy-retrieval.ts); every
 * other field and the key order are kept. Pure; checked by the schema after.
 */
export function migrateBaselineV2(v2: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...v2 };
  if (v2.schemaVersion === 2) out.schemaVersion = 3;
  if ("retrieval" in v2) out.retrieval = migrateRetrievalRecord(v2.retrieval);
  return out;
}

/**
 * Baseline 3 → 4 (and versions 1 and 2 after their steps): what was run gets
 * its own field. `source` is read from the old `config.embedder`
 * (legacy-graph-id.ts, the one reader of the old graph: prefix) and goes just
 * before `config`, whose `embedder` becomes null for a graph or a recording;
 * every other field and the key order are kept. Pure; checked by the schema
 * after.
 */
export function migrateBaselineV3(v3: Record<string, unknown>): Record<string, unknown> {
  const config = v3.config;
  if (typeof config !== "object" || config === null || Array.isArray(config))
    return v3.schemaVersion === 3 ? { ...v3, schemaVersion: BASELINE_VERSION } : v3;
  const { source, embedder } = legacySourceOf((config as Record<string, unknown>).embedder);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(v3)) {
    if (key === "source") continue; // unknown before version 4: the migrated one stands
    if (key === "config") {
      out.source = source;
      out.config = { ...(config as Record<string, unknown>), embedder };
    } else out[key] = key === "schemaVersion" && value === 3 ? BASELINE_VERSION : value;
  }
  return out;
}

/** Validate a parsed baseline of any known version, migrating it to the current one; DataValidationError (exit 2) otherwise. */
export function parseBaselineData(data: unknown, file: string): BaselineData {
  const version = declaredVersion(data);
  if (version === BASELINE_VERSION) return orThrow(parseWithSchema(BaselineSchema, data, { file }));
  if (typeof data !== "object" || data === null || Array.isArray(data) || ![1, 2, 3].includes(version as number))
    throw versionError(file, "baseline", BASELINE_VERSION, version, "1, 2 or 3");
  const v2 = migrateBaselineV2(data as Record<string, unknown>);
  const v3 = version === 1 ? migrateBaselineV1(orThrow(parseWithSchema(BaselineV1Schema, v2, { file }))) : v2;
  return orThrow(parseWithSchema(BaselineSchema, migrateBaselineV3(v3), { file }));
}
