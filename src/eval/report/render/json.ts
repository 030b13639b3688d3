/** The JSON rendering of a Report (docs/architecture.md §7). */
import type { Report } from "../types.js";

/** The report as JSON text (carries `version`), pretty-printed, newline-terminated. */
export function reportToJSON(report: Report): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
