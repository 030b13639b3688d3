/**
 * Where a finished report goes, the same for `retrace eval` (with or without
 * `--graph`) and `retrace merge`: stdout as JSON (`--json`) or the table, and
 * each file option given, written atomically.
 */
import path from "node:path";
import { writeFileAtomic } from "../atomic.js";
import { renderHtmlReport } from "../eval/report/html/report-page.js";
import { renderJUnit, renderMarkdown, renderTable, reportToJSON } from "../eval/report/render.js";
import type { Report } from "../eval/report/types.js";
import { out, outputWidth, outText, useColor } from "./io.js";

/** The output options: `--json`, `--out` (markdown), `--junit`, `--report-json`, `--html`. */
export interface ReportOutputs {
  json?: boolean;
  /** Markdown. */
  out?: string;
  junit?: string;
  reportJson?: string;
  html?: string;
}

/**
 * Prints the report and writes every requested file. Called only once the
 * report is complete: a failed run writes none of them (docs/reliability.md).
 */
export async function emitReport(report: Report, o: ReportOutputs): Promise<void> {
  if (o.json === true) out(reportToJSON(report));
  else outText(renderTable(report, { color: useColor(), width: outputWidth() }));
  if (o.out !== undefined) await writeFileAtomic(o.out, renderMarkdown(report));
  if (o.junit !== undefined) await writeFileAtomic(o.junit, renderJUnit(report));
  if (o.reportJson !== undefined) await writeFileAtomic(o.reportJson, reportToJSON(report));
  if (o.html !== undefined) await writeFileAtomic(o.html, renderHtmlReport(report, { name: path.basename(o.html) }));
}
