/**
 * Where a finished report goes, the same for `retrace eval` (with or without
 * `--graph` or `--traces`) and `retrace merge`: each `--out FORMAT:FILE`
 * (rendered through the one output registry, src/cli/out-formats.ts) and the
 * baseline of `--update-baseline`, written together as one output set
 * (src/output-set.ts), then stdout as JSON (`--json`) or the table.
 *
 * `checkReportOutputs` is the preflight a command calls before its run
 * starts; `emitReport` is called only once the report is complete. So a run
 * that fails — before the sweep, during it, or while writing — writes none
 * of its files and prints nothing on stdout (docs/reliability.md).
 */
import { baselineFromReport, baselineToJSON } from "../eval/gate/baseline.js";
import { renderTable, reportToJSON } from "../eval/report/render.js";
import type { Report } from "../eval/report/types.js";
import { log } from "../log.js";
import { checkOutputs, goesToStdout, writeOutputs, type Output, type OutputSpec } from "../output-set.js";
import { resolveTarget } from "../atomic.js";
import { out, outputWidth, outText, useColor, verbose } from "./io.js";
import { outSpecs, renderOuts, type OutTarget } from "./out-formats.js";
import type { ReportSubject } from "./out/subject.js";

/** The output options: `--json`, and the files of `--out FORMAT:FILE` (parsed by the registry's hook). */
export interface ReportOutputs {
  json?: boolean;
  outputs?: OutTarget[];
}

/** The option that names the baseline a run writes. */
const BASELINE_OPTION = "--update-baseline";

/** The files a report run writes: each `--out` file, and `baselineFile` (the `--update-baseline` target) when set. */
export function reportOutputFiles(o: ReportOutputs, baselineFile?: string): OutputSpec[] {
  return [
    ...outSpecs(o.outputs),
    // The baseline may be the one this run read: writing it is the purpose of --update-baseline.
    ...(baselineFile !== undefined ? [{ option: BASELINE_OPTION, path: baselineFile, inPlace: true }] : []),
  ];
}

/** The preflight of a report run's files, before anything starts: exit 2 naming the option and the path (src/output-set.ts). */
export function checkReportOutputs(
  o: ReportOutputs,
  baselineFile?: string,
  extra: readonly OutputSpec[] = [],
): Promise<void> {
  return checkOutputs([...reportOutputFiles(o, baselineFile), ...extra], {
    ...(o.json === true ? { stdout: "--json" } : {}),
  });
}

async function anyToStdout(files: readonly Output[]): Promise<boolean> {
  for (const f of files) if (await resolveTarget(f.path).then(goesToStdout, () => false)) return true;
  return false;
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
  baselineFile: string | undefined,
  subject: Omit<ReportSubject, "kind" | "report">,
  extra: readonly Output[] = [],
): Promise<void> {
  const { outputs, notes } = await renderOuts({ kind: "report", report, ...subject }, o.outputs);
  const files: Output[] = [...outputs];
  if (baselineFile !== undefined)
    files.push({
      option: BASELINE_OPTION,
      path: baselineFile,
      data: baselineToJSON(baselineFromReport(report)),
      inPlace: true,
    });
  files.push(...extra); // e.g. the step summary (src/cli/github.ts)
  await writeOutputs(files);
  for (const note of notes) log.info(note);
  if (o.json === true) out(reportToJSON(report));
  // The table only when no output took stdout (`--out json:-`): stdout carries one document.
  else if (!(await anyToStdout(files)))
    outText(renderTable(report, { color: useColor(), width: outputWidth(), verbose: verbose(), compact: !verbose() })); // the first screen; every table with --verbose
}
