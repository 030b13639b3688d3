/**
 * Where a finished report goes, the same for `retrace eval` (with or without
 * `--graph`) and `retrace merge`: each file option given (and the baseline of
 * `--update-baseline`), written together as one output set
 * (src/output-set.ts), then stdout as JSON (`--json`) or the table.
 *
 * `checkReportOutputs` is the preflight a command calls before its run
 * starts; `emitReport` is called only once the report is complete. So a run
 * that fails — before the sweep, during it, or while writing — writes none
 * of its files and prints nothing on stdout (docs/reliability.md).
 */
import path from "node:path";
import { baselineFromReport, baselineToJSON } from "../eval/gate/baseline.js";
import { renderHtmlReport } from "../eval/report/html/report-page.js";
import { renderJUnit, renderMarkdown, renderTable, reportToJSON } from "../eval/report/render.js";
import { reportJSONPieces } from "../eval/report/render/json.js";
import type { OutputData } from "../atomic.js";
import type { Report } from "../eval/report/types.js";
import { checkOutputs, writeOutputs, type Output, type OutputSpec } from "../output-set.js";
import { out, outputWidth, outText, useColor, verbose } from "./io.js";

/** The output options: `--json`, and the files of `--out [FORMAT:]FILE` (markdown, junit, json, html; pr-comment), each in its attribute. */
export interface ReportOutputs {
  json?: boolean;
  /** Markdown. */
  out?: string;
  junit?: string;
  reportJson?: string;
  html?: string;
  /** `--out pr-comment:FILE`: preflighted with the others (so no two options name one file); written by the GitHub emitter (src/cli/github.ts). */
  prComment?: string;
}

/** How each file option is rendered, in the order the files are written. */
const RENDERERS: readonly {
  key: "out" | "junit" | "reportJson" | "html";
  option: string;
  render: (r: Report, file: string) => OutputData;
}[] = [
  { key: "out", option: "--out", render: (r) => renderMarkdown(r) },
  { key: "junit", option: "--out junit:", render: (r) => renderJUnit(r) },
  // In pieces: a large report (a --traces run) is written without its whole text in memory; the same bytes.
  { key: "reportJson", option: "--out json:", render: (r) => ({ pieces: () => reportJSONPieces(r) }) },
  { key: "html", option: "--out html:", render: (r, file) => renderHtmlReport(r, { name: path.basename(file) }) },
];

/** The option that names the baseline a run writes. */
const BASELINE_OPTION = "--update-baseline";

/** The files a report run writes: each file option given, and `baselineFile` (the `--update-baseline` target) when set. */
export function reportOutputFiles(o: ReportOutputs, baselineFile?: string): OutputSpec[] {
  const files: OutputSpec[] = [];
  for (const { key, option } of RENDERERS) {
    const file = o[key];
    if (file !== undefined) files.push({ option, path: file });
  }
  if (baselineFile !== undefined) files.push({ option: BASELINE_OPTION, path: baselineFile });
  return files;
}

/** The preflight of a report run's files, before anything starts: exit 2 naming the option and the path (src/output-set.ts). */
export function checkReportOutputs(
  o: ReportOutputs,
  baselineFile?: string,
  extra: readonly OutputSpec[] = [],
): Promise<void> {
  const comment: OutputSpec[] = o.prComment !== undefined ? [{ option: "--out pr-comment:", path: o.prComment }] : [];
  return checkOutputs([...reportOutputFiles(o, baselineFile), ...extra, ...comment]);
}

/**
 * Writes every requested file (and the baseline to `baselineFile` when set)
 * as one output set, then prints the report on stdout. Called only once the
 * report is complete; a write that fails (exit 3) leaves every file of the
 * set unwritten and prints nothing.
 */
export async function emitReport(
  report: Report,
  o: ReportOutputs,
  baselineFile?: string,
  extra: readonly Output[] = [],
): Promise<void> {
  const files: Output[] = [];
  for (const { key, option, render } of RENDERERS) {
    const file = o[key];
    if (file !== undefined) files.push({ option, path: file, data: render(report, file) });
  }
  if (baselineFile !== undefined)
    files.push({ option: BASELINE_OPTION, path: baselineFile, data: baselineToJSON(baselineFromReport(report)) });
  files.push(...extra); // e.g. `eval --traces`' write-back files (src/app/traces-eval.ts)
  await writeOutputs(files);
  if (o.json === true) out(reportToJSON(report));
  else outText(renderTable(report, { color: useColor(), width: outputWidth(), verbose: verbose() }));
}
