/**
 * The output formats of the evaluation, each defined once as a zod schema:
 * the report JSON (`retrace eval --json` / `--report-json`) and the
 * regression baseline (`--update-baseline`). Both carry `schemaVersion`;
 * files of an older version are migrated on read, files of an unknown
 * version are refused with exit 2, naming the version needed and the one
 * found. Versions and migrations are listed in docs/schema-versions.md.
 *
 * The report schema checks the fields every reader relies on and lets other
 * fields through (`.passthrough()`), so a report that gained a section still
 * reads; the baseline is strict at the top level.
 */
import { z } from "zod";
import { DataValidationError, type DataIssue } from "../../errors.js";
import { parseWithSchema } from "../../kb/schema-issues.js";
import { CASE_KINDS, EXPECTS } from "../../kb/schemas.js";
import type { Report } from "./types.js";

/** Current `schemaVersion` of the report JSON. Version 1 files (`"version": 1`) are migrated on read. */
export const REPORT_SCHEMA_VERSION = 2 as const;
/** Current `schemaVersion` of the baseline JSON. Version 1 files (`"version": 1`) are migrated on read. */
export const BASELINE_SCHEMA_VERSION = 2 as const;

const finite = z.number().finite();

/** One aggregated key: mean over n turns, optional 95% bootstrap interval, case count and chance level (docs/statistics.md). */
export const AggregateSchema = z
  .object({
    mean: finite,
    n: z.number().int().positive(),
    ci95: z.tuple([finite, finite]).optional(),
    nCases: z.number().int().positive().optional(),
    chance: finite.optional(),
  })
  .strict();

const EvalResultSchema = z.object({ key: z.string(), score: finite, comment: z.string().optional() }).passthrough();

const TraceSummarySchema = z
  .object({
    query: z.string(),
    k: z.number().int(),
    retrievedIds: z.array(z.string()),
    goldPositions: z.record(z.record(z.number().nullable())),
  })
  .passthrough();

export const TurnReportSchema = z
  .object({
    caseId: z.string(),
    turn: z.number().int().nonnegative(),
    locale: z.string(),
    kind: z.enum(CASE_KINDS),
    user: z.string(),
    gold: z.array(z.string()),
    expect: z.enum(EXPECTS),
    retrievedIds: z.array(z.string()).nullable(),
    citedIds: z.array(z.string()),
    refused: z.boolean(),
    answer: z.string(),
    results: z.array(EvalResultSchema, { required_error: "the turn's evaluator results (an array, [] when nothing was scored)" }),
    trace: TraceSummarySchema.optional(),
  })
  .passthrough();

export const RunInfoSchema = z
  .object({
    datasetHash: z.string().min(1),
    kbHash: z.string(),
    embedder: z.string().nullable(),
    embedderDescription: z.string().optional(),
    k: z.number().int().positive(),
    store: z.string(),
    storeKind: z.enum(["local", "remote", "memory", "none"]).optional(),
    mode: z.string().optional(),
    rerank: z.string().nullable().optional(),
  })
  .passthrough();

export const GateResultSchema = z
  .object({
    passed: z.boolean(),
    failures: z.array(
      z
        .object({
          kind: z.enum(["floor", "regression", "flips", "not_measured", "baseline_mismatch", "turn_errors", "no_retrieval"]),
          key: z.string(),
          reason: z.string(),
        })
        .passthrough(),
    ),
  })
  .passthrough();

const GroupDeltaSchema = z
  .object({
    key: z.string(),
    split: z.string(),
    group: z.string(),
    reference: z.string(),
    nGroup: z.number().int(),
    nReference: z.number().int(),
    meanGroup: finite,
    meanReference: finite,
    diff: finite,
    ci95: z.tuple([finite, finite]).optional(),
    pValue: finite,
  })
  .passthrough();

/** The `shard` section of a partial report (`retrace eval --shard i/n`; src/eval/gate/shard.ts). */
export const ShardSchema = z
  .object({
    index: z.number().int().positive(),
    count: z.number().int().positive(),
    rule: z.string().min(1),
    caseIds: z.array(z.string()),
    turns: z.number().int().nonnegative(),
    dataset: z.object({ datasetHash: z.string().min(1), caseIds: z.array(z.string()), turns: z.number().int().nonnegative() }).strict(),
  })
  .strict()
  .refine((s) => s.index <= s.count, { message: "the shard index must not exceed the shard count", path: ["index"] });

const splitGroups = z.record(z.record(AggregateSchema));

/** The report JSON, schemaVersion 2. */
export const ReportSchema = z
  .object({
    schemaVersion: z.literal(REPORT_SCHEMA_VERSION),
    run: RunInfoSchema,
    aggregates: z.record(AggregateSchema),
    splits: z.object({ kind: splitGroups, locale: splitGroups }).passthrough(),
    vacuous: z.array(z.string()),
    vacuousReasons: z.record(z.string()),
    turns: z.array(TurnReportSchema),
    gate: GateResultSchema.nullable(),
    deltas: z.array(GroupDeltaSchema).optional(),
    bootstrap: z.object({ seed: z.number().int(), samples: z.number().int().positive() }).passthrough().optional(),
    /** Present only on the partial report of one shard (docs/reliability.md). */
    shard: ShardSchema.optional(),
    /** Wall-clock figures only, never compared (docs/determinism.md). */
    timings: z.object({ started: z.string(), durationMs: z.number(), turns: z.record(z.record(z.number())) }).passthrough().optional(),
  })
  .passthrough();
export type ReportData = z.infer<typeof ReportSchema>;

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
  storeKind: z.enum(["local", "remote", "memory", "none"]).optional(),
  aggregates: z.record(AggregateSchema),
  /** The report's split aggregates: split → group → key → aggregate (absent in older baselines). */
  splits: z.record(z.record(z.record(AggregateSchema))).optional(),
  /** `caseId#turn` → key → score. */
  perTurn: z.record(z.record(finite)),
};

/** The baseline JSON, schemaVersion 2. */
export const BaselineSchema = z.object({ schemaVersion: z.literal(BASELINE_SCHEMA_VERSION), ...baselineFields }).strict();
export type BaselineData = z.infer<typeof BaselineSchema>;

/** The baseline JSON as written before `schemaVersion` (0.1.0): `"version": 1`, otherwise the same fields. */
export const BaselineV1Schema = z.object({ version: z.literal(1), ...baselineFields }).strict();
export type BaselineV1 = z.infer<typeof BaselineV1Schema>;

/** Baseline 1 → 2: `version: 1` becomes `schemaVersion: 2`; every other field is kept as it is. Pure. */
export function migrateBaselineV1(v1: BaselineV1): BaselineData {
  const { version: _version, ...rest } = v1;
  return { schemaVersion: 2, ...rest };
}

/**
 * Report 1 → 2: `version: 1` becomes `schemaVersion: 2` (first key, as
 * written by retrace); every other field is kept as it is. Pure; the result
 * is then checked by ReportSchema.
 */
export function migrateReportV1(v1: Record<string, unknown>): Record<string, unknown> {
  const { version: _version, ...rest } = v1;
  // Version 1 kept its wall-clock figures in `run`; version 2 has them in `timings` (docs/determinism.md).
  const run = (typeof rest.run === "object" && rest.run !== null ? rest.run : {}) as Record<string, unknown>;
  const { started, durationMs, ...runRest } = run;
  const timings = typeof started === "string" && typeof durationMs === "number" ? { timings: { started, durationMs, turns: {} } } : {};
  return { schemaVersion: 2, ...rest, run: runRest, ...timings };
}

/**
 * The schema version a parsed JSON file declares: `schemaVersion`, or 1 for
 * the files of 0.1.0, which carried `"version": 1` instead; undefined when it
 * declares neither.
 */
export function declaredVersion(data: unknown): unknown {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  const o = data as Record<string, unknown>;
  if ("schemaVersion" in o) return o.schemaVersion;
  if (o.version === 1) return 1;
  return o.version;
}

function versionError(file: string, what: string, current: number, found: unknown): DataValidationError {
  const hint =
    typeof found === "number" && found > current
      ? "; it was written by a newer retrace, upgrade to read it"
      : found === undefined
        ? `; is this a retrace ${what} file?`
        : "";
  return new DataValidationError([
    { file, field: "schemaVersion", message: `expected ${what} schemaVersion ${current} (or 1, migrated on read), got ${found === undefined ? "none" : JSON.stringify(found)}${hint}` },
  ]);
}

function orThrow<T>(r: { data: T; issues: [] } | { data?: undefined; issues: DataIssue[] }): T {
  if (r.data === undefined) throw new DataValidationError(r.issues);
  return r.data;
}

/** Validate a parsed baseline of any known version, migrating it to the current one; DataValidationError (exit 2) otherwise. */
export function parseBaselineData(data: unknown, file: string): BaselineData {
  const version = declaredVersion(data);
  if (version === BASELINE_SCHEMA_VERSION) return orThrow(parseWithSchema(BaselineSchema, data, { file }));
  if (version === 1) return migrateBaselineV1(orThrow(parseWithSchema(BaselineV1Schema, data, { file })));
  throw versionError(file, "baseline", BASELINE_SCHEMA_VERSION, version);
}

/** Validate a parsed report of any known version, migrating it to the current one; DataValidationError (exit 2) otherwise. */
export function parseReportData(data: unknown, file: string): ReportData {
  const version = declaredVersion(data);
  if (version === REPORT_SCHEMA_VERSION) return orThrow(parseWithSchema(ReportSchema, data, { file }));
  if (version === 1) {
    const migrated = migrateReportV1(data as Record<string, unknown>);
    return orThrow(parseWithSchema(ReportSchema, migrated, { file }));
  }
  throw versionError(file, "report", REPORT_SCHEMA_VERSION, version);
}

// Compile-time check that the hand-declared Report interface (src/eval/report/types.ts,
// extended by several features) and the schema agree both ways: a report
// built by retrace passes the schema's type, and a parsed report is a Report.
// `Known` drops the passthrough index signatures, keeping the declared fields.
type Known<T> = T extends readonly unknown[]
  ? { [K in keyof T]: Known<T[K]> }
  : T extends object
    ? { [K in keyof T as string extends K ? never : K]: Known<T[K]> }
    : T;
const reportFitsSchema = (r: Report): Known<ReportData> => r;
const schemaFitsReport = (r: Known<ReportData>): Report => r;
void reportFitsSchema;
void schemaFitsReport;
