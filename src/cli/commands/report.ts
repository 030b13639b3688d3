/**
 * `retrace report FILE`: everything done with a saved report JSON (`retrace
 * eval --out json:FILE`) or baseline, without re-running anything:
 *
 * - `--out [FORMAT:]FILE` (repeatable; html, markdown or json, as on `eval`)
 *   renders it again (docs/html-report.md); `--table` prints the text table;
 * - `--trec DIR` writes its retrieval as TREC files, DIR/run.txt and
 *   DIR/qrels.txt, query ids `caseId#turn` (was `retrace export`;
 *   docs/langchain-integration.md), then `retrace score -c -k K
 *   DIR/qrels.txt DIR/run.txt` gives the report's means;
 * - `--floors` prints evidence-based floors (the lower bound of each
 *   recorded 95% interval, per scope, rounded down to `--step`;
 *   src/app/baseline.ts) as `--gate` checks to paste (was `retrace baseline
 *   floors`); FILE defaults to `<kb>/eval/baseline.json` there.
 *
 * Writes only what is asked for; every output path is checked before the
 * file is read. Exit 0, or 2 when the file is not a retrace report or
 * baseline, or nothing is asked for.
 */
import path from "node:path";
import type { Command } from "commander";
import { DataValidationError, InvalidArgumentError } from "../../errors.js";
import { defaultBaselineFile, readAggregates, suggestFloors, type FloorSuggestion } from "../../app/baseline.js";
import { DEFAULT_RUN_TAG, scoreHint, trecFiles } from "../../eval/ir/trec-export.js";
import { HIT_KEY } from "../../eval/measures/metrics.js";
import { renderHtmlReport } from "../../eval/report/html/report-page.js";
import { renderMarkdown, renderTable, reportToJSON } from "../../eval/report/render.js";
import type { Report } from "../../eval/report/types.js";
import { log } from "../../log.js";
import { checkOutputs, writeOutputs } from "../../output-set.js";
import { readReport } from "../../app/report.js";
import { parseOut } from "../eval-options.js";
import { action, out, outputWidth, outText, useColor } from "../io.js";
import { hidden, refuseOldSpellings } from "../old-spellings.js";
import { numberOption } from "../options.js";

export interface ReportOptions {
  out?: string[];
  table?: boolean;
  trec?: string;
  tag: string;
  floors?: boolean;
  kb: string;
  step: number;
  json?: boolean;
}

/** `--gate min-hit=all=0.85,en=0.9` lines, one per metric. */
export function renderFloors(s: FloorSuggestion[], source: string): string {
  if (s.length === 0) return `${source} holds no retrieval aggregate to derive floors from (a store-less run?)`;
  const lines = [`# evidence-based floors from ${source}: lower bound of each recorded 95% interval, rounded down`];
  for (const x of s) {
    const name = x.flag.replace(/^--/, "");
    const floors = Object.entries(x.floors).map(([scope, v]) => `${scope}=${v}`);
    if (floors.length > 0) lines.push(`--gate ${name}=${floors.join(",")}`);
    for (const [scope, why] of Object.entries(x.skipped))
      lines.push(`# --gate ${name}: scope ${scope} skipped (${why})`);
  }
  return lines.join("\n");
}

/** The renderers of `--out`; `source` is the report JSON read (the page names it, as `retrace report --html` always did). */
const RENDER: Record<string, (r: Report, source: string) => string> = {
  html: (r, source) => renderHtmlReport(r, { name: path.basename(source) }),
  markdown: (r) => renderMarkdown(r),
  json: (r) => reportToJSON(r),
};

async function reportCommand(file: string | undefined, o: ReportOptions): Promise<void> {
  if (o.floors === true) {
    if ((o.out ?? []).length > 0 || o.table === true || o.trec !== undefined)
      throw new InvalidArgumentError(
        "--floors",
        "used alone (it prints floors; --out, --table and --trec render a report)",
        "with others",
      );
    const source = file ?? defaultBaselineFile(o.kb);
    const { aggregates, splits } = await readAggregates(source);
    const s = suggestFloors(aggregates, splits, o.step);
    out(
      o.json === true
        ? JSON.stringify({ version: 1, source, step: o.step, floors: s }, null, 2)
        : renderFloors(s, source),
    );
    return;
  }
  if (file === undefined)
    throw new InvalidArgumentError(
      "retrace report",
      "a report JSON file (or --floors, which defaults to <kb>/eval/baseline.json)",
      "none",
    );
  if ((o.out ?? []).length === 0 && o.table !== true && o.trec === undefined)
    throw new InvalidArgumentError("retrace report", "at least one of --out, --table, --trec, --floors", "none");
  const files = (o.out ?? []).map((value) => {
    const { format, file: target } = parseOut(value);
    const render = RENDER[format.name];
    if (render === undefined)
      throw new InvalidArgumentError(
        "--out",
        "an html, markdown or json file (junit and pr-comment need the run's gate: write them with retrace eval or merge)",
        value,
      );
    return { option: format.name === "markdown" ? "--out" : `--out ${format.name}:`, path: target, render };
  });
  const runFile = o.trec === undefined ? undefined : path.join(o.trec, "run.txt");
  const qrelsFile = o.trec === undefined ? undefined : path.join(o.trec, "qrels.txt");
  const trecSpecs =
    runFile !== undefined && qrelsFile !== undefined
      ? [
          { option: "--trec", path: runFile },
          { option: "--trec", path: qrelsFile },
        ]
      : [];
  await checkOutputs([...files.map((f) => ({ option: f.option, path: f.path })), ...trecSpecs]); // before the report is read (exit 2)
  const report = await readReport(file);
  const writes = files.map((f) => ({ option: f.option, path: f.path, data: f.render(report, file) }));
  let trec: ReturnType<typeof trecFiles> | undefined;
  if (runFile !== undefined && qrelsFile !== undefined) {
    trec = trecFiles(report, { tag: o.tag });
    if (trec.queries === 0)
      throw new DataValidationError([
        {
          file,
          field: "turns",
          message: `no turn has retrieved ids (retrieval ${report.vacuousReasons[HIT_KEY] ?? "not measured"}): nothing to export`,
        },
      ]);
    writes.push(
      { option: "--trec", path: runFile, data: trec.run },
      { option: "--trec", path: qrelsFile, data: trec.qrels },
    );
  }
  await writeOutputs(writes); // every file or none (src/output-set.ts); a --trec folder is created if missing
  if (trec !== undefined && runFile !== undefined && qrelsFile !== undefined) {
    log.info(`wrote ${runFile} (${trec.queries} queries) and qrels.txt (${trec.judged} judged queries)`);
    log.info(`the report's means: ${scoreHint({ qrels: qrelsFile, run: runFile }, report.run.k)}`);
  }
  if (o.table === true) outText(renderTable(report, { color: useColor(), width: outputWidth() }));
}

export function register(program: Command): void {
  const collect = (v: string, prev: string[] | undefined) => [...(prev ?? []), v];
  const cmd = program
    .command("report")
    .description(
      "A saved report JSON, without re-running the sweep: render it (--out, --table), write its TREC run and qrels (--trec), or print floors from it or a baseline (--floors)",
    )
    .argument(
      "[file]",
      "report JSON written by retrace eval --out json:FILE (or --json); with --floors also a baseline (default <kb>/eval/baseline.json)",
    )
    .option(
      "--out <[format:]file>",
      "write it as html, markdown or json, repeatable; format by prefix (html:, markdown:, json:) or extension (.html, .md, .json)",
      collect,
    )
    .option("--table", "print the text table on stdout")
    .option(
      "--trec <dir>",
      "write run.txt and qrels.txt (query id caseId#turn) into this folder (created if missing), for retrace score, trec_eval, ranx, ir_measures",
    )
    .option("--tag <tag>", "with --trec: run tag (6th column of the run file)", DEFAULT_RUN_TAG)
    .option(
      "--floors",
      "print evidence-based --gate floors (lower bound of each recorded 95% interval, per scope) to paste into retrace eval",
    )
    .option("--kb <dir>", "with --floors and no file: the knowledge-base folder whose baseline is read", "kb")
    .option(
      "--step <x>",
      "with --floors: round floors down to a multiple of this",
      numberOption("--step", { min: 0, minExclusive: true, max: 1 }),
      0.01,
    )
    .option("--json", "with --floors: print JSON");
  hidden(cmd, "--html <file>", "--out html:");
  hidden(cmd, "--md <file>", "--out markdown:");
  cmd.hook("preAction", (_self, actionCmd) => refuseOldSpellings(actionCmd));
  cmd.action(action((file: string | undefined, o: ReportOptions) => reportCommand(file, o)));
}
