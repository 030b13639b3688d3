/**
 * The `traces` section of `--config` (docs/recorded-traces.md): the filters
 * of an `eval --traces` run, by service / project and time window, validated
 * with the field named (`traces.from`). Read by the CLI's `--config` merge
 * (src/cli/settings.ts) and by `readTraceFilters` (src/app/traces-eval.ts).
 */
import { z } from "zod";
import { DataValidationError } from "../../errors.js";
import { expectationOf, fieldPath, showValue, valueAt } from "../../kb/schema-issues.js";
import type { TraceFilters } from "./types.js";

const TracesConfigSchema = z
  .object({
    /** Only turns of these services (OTLP `service.name`) or projects (LangSmith `session_name`). */
    services: z.array(z.string().min(1)).min(1).optional(),
    /** Only turns whose root started at or after `from` and before `to` (ISO 8601 instants). */
    from: z.string().datetime({ offset: true }).optional(),
    to: z.string().datetime({ offset: true }).optional(),
  })
  .strict();

/** A `traces` section's value, validated (exit 2 naming `where` and the field `traces.…`). */
export function parseTraceFilters(value: unknown, where: string): TraceFilters {
  const r = TracesConfigSchema.safeParse(value);
  if (!r.success)
    throw new DataValidationError(
      r.error.issues.map((issue) => ({
        file: where,
        field: `traces${issue.path.length > 0 ? `.${fieldPath(issue.path)}` : ""}`,
        message: `expected ${expectationOf(issue, value)}, got ${showValue(valueAt(value, issue.path))}`,
      })),
    );
  return r.data as TraceFilters;
}
