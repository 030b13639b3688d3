/**
 * The schema versions of the report and the baseline
 * (docs/schema-versions.md), and what reading any version needs: the declared
 * version, the version error, zod issues as a DataValidationError.
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";
import { DataValidationError, type DataIssue } from "../../../errors.js";
import { parseWithSchema } from "../../../kb/schema-issues.js";

/** Current `schemaVersion` of the report JSON (docs/schema-versions.md). Version 1 (`"version": 1`), 2, 3 and 4 files are migrated on read. */
export const REPORT_VERSION = 5 as const;
/** Current `schemaVersion` of baseline files (docs/schema-versions.md). Version 1 (`"version": 1`), 2 and 3 files are migrated on read. */
export const BASELINE_VERSION = 4 as const;

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

export function versionError(
  file: string,
  what: string,
  current: number,
  found: unknown,
  older: string,
): DataValidationError {
  const hint =
    typeof found === "number" && found > current
      ? "; it was written by a newer retrace, upgrade to read it"
      : found === undefined
        ? `; is this a retrace ${what} file?`
        : "";
  return new DataValidationError([
    {
      file,
      field: "schemaVersion",
      message: `expected ${what} schemaVersion ${current} (or ${older}, migrated on read), got ${found === undefined ? "none" : JSON.stringify(found)}${hint}`,
    },
  ]);
}

export function orThrow<T>(r: { data: T; issues: [] } | { data?: undefined; issues: DataIssue[] }): T {
  if (r.data === undefined) throw new DataValidationError(r.issues);
  return r.data;
}

/**
 * Throws DataValidationError (exit 2, naming the file and each bad field)
 * unless `data` matches `schema`; the caller then keeps `data` itself, not
 * zod's output, which rebuilds every object in the schema's key order and
 * leaves out the keys the schema does not declare. Sound for schemas that
 * only check (no transform, default or coercion): the `ZodType<T, _, T>`
 * parameter asks for input type = output type.
 */
export function assertMatches<T>(
  schema: z.ZodType<T, z.ZodTypeDef, T>,
  data: unknown,
  file: string,
): asserts data is T {
  orThrow(parseWithSchema(schema, data, { file }));
}
