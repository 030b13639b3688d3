/**
 * A report JSON read back from disk (`retrace eval --report-json` / `--json`)
 * before `retrace compare`, the gate or `retrace baseline floors` use it:
 * validated by ReportSchema (src/eval/report/schemas.ts, older schemaVersions
 * migrated), so a missing or malformed field is a DataValidationError naming
 * the file and the field (e.g. `turns[3].results`), exit 2 — never a
 * TypeError deep inside a statistic (docs/gates-and-exit-codes.md).
 */
import { parseReportData } from "./schemas.js";
import type { Report } from "./types.js";

export function parseReport(data: unknown, file: string): Report {
  // The schema lets unknown sections through (typed `unknown`); the declared fields agree with `Report` (compile-time check in schemas.ts).
  return parseReportData(data, file) as unknown as Report;
}
