/**
 * `retrace report RUN.json --html OUT.html`: render a saved report JSON
 * (`retrace eval --report-json`) again, without re-running anything
 * (docs/html-report.md). Writes only the files asked for; stdout stays empty
 * unless `--table` asks for the text table. Exit 0, or 2 when the file is not
 * a retrace report.
 */
import path from "node:path";
import type { Command } from "commander";
import { InvalidArgumentError } from "../../errors.js";
import { renderHtmlReport } from "../../eval/report/html/report-page.js";
import { renderMarkdown, renderTable } from "../../eval/report/render.js";
import type { Report } from "../../eval/report/types.js";
import { checkOutputs, writeOutputs } from "../../output-set.js";
import { readReport } from "../../app/report.js";
import { action, outputWidth, outText, useColor } from "../io.js";

export interface ReportOptions {
  html?: string;
  md?: string;
  table?: boolean;
}

export function register(program: Command): void {
  program
    .command("report")
    .description("Render a saved report JSON (from --report-json) as HTML or markdown, without re-running the sweep")
    .argument("<report>", "report JSON written by retrace eval --report-json (or --json)")
    .option("--html <file>", "write one self-contained HTML page (docs/html-report.md)")
    .option("--md <file>", "write the markdown report")
    .option("--table", "print the text table on stdout")
    .action(
      action(async (file: string, opts: ReportOptions) => {
        if (opts.html === undefined && opts.md === undefined && !opts.table) throw new InvalidArgumentError("retrace report", "at least one of --html, --md, --table", "none");
        const files = [
          ...(opts.html !== undefined ? [{ option: "--html", path: opts.html, render: (r: Report) => renderHtmlReport(r, { name: path.basename(file) }) }] : []),
          ...(opts.md !== undefined ? [{ option: "--md", path: opts.md, render: (r: Report) => renderMarkdown(r) }] : []),
        ];
        await checkOutputs(files); // before the report is read (exit 2)
        const report = await readReport(file);
        await writeOutputs(files.map((f) => ({ option: f.option, path: f.path, data: f.render(report) }))); // together, then stdout
        if (opts.table) outText(renderTable(report, { color: useColor(), width: outputWidth() }));
      }),
    );
}
