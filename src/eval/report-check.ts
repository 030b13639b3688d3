/**
 * Validation of a report JSON read back from disk (`retrace eval
 * --report-json` / `--json`), before `retrace compare`, the gate or
 * `retrace baseline floors` use it: every field those consumers read is
 * checked, and a missing or malformed one is a DataValidationError naming
 * the file and the field (e.g. `turns[3].results`), exit 2 — never a
 * TypeError deep inside a statistic (docs/gates-and-exit-codes.md).
 * Fields this module does not read are let through unchecked.
 */
import { z } from "zod";
import { DataValidationError, type DataIssue } from "../errors.js";
import { REPORT_VERSION, type Report } from "./types.js";

const finite = z.number().finite();
const aggregate = z.object({ mean: finite, n: z.number().int().nonnegative(), ci95: z.tuple([finite, finite]).optional() }).passthrough();
const group = z.record(aggregate);

const turnSchema = z
  .object({
    caseId: z.string().min(1),
    turn: z.number().int().nonnegative(),
    locale: z.string().min(1),
    kind: z.string().min(1),
    gold: z.array(z.string()),
    retrievedIds: z.array(z.string()).nullable(),
    results: z.array(z.object({ key: z.string().min(1), score: finite, comment: z.string().optional() }).passthrough(), {
      required_error: "missing: the turn's evaluator results (an array, [] when nothing was scored)",
    }),
    part: z.string().optional(),
    trace: z.object({ goldPositions: z.record(z.record(z.number().nullable())) }).passthrough().optional(),
  })
  .passthrough();

const reportSchema = z
  .object({
    version: z.literal(REPORT_VERSION),
    run: z.object({ datasetHash: z.string().min(1), kbHash: z.string(), k: z.number().int().positive(), store: z.string() }).passthrough(),
    aggregates: group,
    splits: z.record(z.record(group)),
    vacuous: z.array(z.string()),
    vacuousReasons: z.record(z.string()),
    turns: z.array(turnSchema),
  })
  .passthrough();

function fieldPath(path: readonly (string | number)[]): string | undefined {
  if (path.length === 0) return undefined;
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out === "" ? p : `.${p}`;
  return out;
}

/** Parse `data` (already JSON-parsed, read from `file`) as a report; DataValidationError naming file and field otherwise. */
export function parseReport(data: unknown, file: string): Report {
  const parsed = reportSchema.safeParse(data);
  if (parsed.success) return parsed.data as unknown as Report;
  const issues: DataIssue[] = parsed.error.issues.slice(0, 50).map((i) => {
    const issue: DataIssue = { file, message: i.message === "Required" ? "missing" : i.message };
    const field = fieldPath(i.path);
    if (field !== undefined) issue.field = field;
    if (i.path[0] === "version" && i.code === "invalid_literal") issue.message = `expected report version ${REPORT_VERSION}, got ${JSON.stringify(i.received)}`;
    if (i.path.length === 3 && i.path[0] === "turns" && i.path[2] === "results" && i.message === "Required") issue.message = "missing: the turn's evaluator results (an array, [] when nothing was scored)";
    return issue;
  });
  throw new DataValidationError(issues);
}
