/**
 * `retrace report FILE`: everything done with a saved report JSON (`retrace
 * eval --out json:FILE`) or baseline, without re-running anything:
 *
 * - `--out FORMAT:FILE` (repeatable; every report format `eval --out` has,
 *   from the one output registry, src/cli/out-formats.ts) renders it again:
 *   html (docs/html-report.md), markdown, json, junit and pr-comment (from
 *   the gate the report holds), `trec:DIR` (DIR/run.txt and DIR/qrels.txt,
 *   query ids `caseId#turn`; docs/langchain-integration.md; then `retrace
 *   score -c -k K DIR/qrels.txt DIR/run.txt` gives the report's means);
 *   `--table` prints the text table;
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
import { InvalidArgumentError } from "../../errors.js";
import { defaultBaselineFile, readAggregates, suggestFloors, type FloorSuggestion } from "../../app/baseline.js";
import { DEFAULT_RUN_TAG } from "../../eval/ir/trec-export.js";
import { renderTable } from "../../eval/report/render.js";
import { DEFAULT_SEED } from "../../eval/stats/bootstrap.js";
import { log } from "../../log.js";
import { checkOutputs, writeOutputs } from "../../output-set.js";
import { readReport } from "../../app/report.js";
import { addOutOption, outSpecs, renderOuts, type OutTarget } from "../out-formats.js";
import { action, out, outputWidth, outText, useColor } from "../io.js";
import { addRetired } from "../old-spellings.js";
import { addConfigOption } from "../settings.js";
import { numberOption } from "../options.js";

export interface ReportOptions {
  outputs?: OutTarget[];
  table?: boolean;
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

async function reportCommand(file: string | undefined, o: ReportOptions): Promise<void> {
  if (o.floors === true) {
    if ((o.outputs ?? []).length > 0 || o.table === true)
      throw new InvalidArgumentError(
        "--floors",
        "used alone (it prints floors; --out and --table render a report)",
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
  if ((o.outputs ?? []).length === 0 && o.table !== true)
    throw new InvalidArgumentError("retrace report", "at least one of --out, --table, --floors", "none");
  await checkOutputs(outSpecs(o.outputs)); // before the report is read (exit 2)
  const report = await readReport(file);
  const { outputs, notes } = await renderOuts(
    {
      kind: "report",
      report,
      // The comment compares with nothing: the report alone (its gate verdict and means).
      comment: {
        reference: null,
        seed: report.bootstrap?.seed ?? DEFAULT_SEED,
        title: `retrace report ${path.basename(file)}`,
      },
      pageName: path.basename(file), // the page names the report JSON read, as `retrace report --html` always did
      trecTag: o.tag,
    },
    o.outputs,
  );
  await writeOutputs(outputs); // every file or none (src/output-set.ts); a trec: folder is created if missing
  for (const note of notes) log.info(note);
  if (o.table === true) outText(renderTable(report, { color: useColor(), width: outputWidth() }));
}

export function register(program: Command): void {
  const cmd = program
    .command("report")
    .description(
      "A saved report JSON, without re-running the sweep: render it (--out FORMAT:FILE: html, markdown, json, junit, pr-comment, or its TREC run and qrels with trec:DIR; --table), or print floors from it or a baseline (--floors)",
    )
    .argument(
      "[file]",
      "report JSON written by retrace eval --out json:FILE (or --json); with --floors also a baseline (default <kb>/eval/baseline.json)",
    );
  addOutOption(cmd, "report", "it")
    .option("--table", "print the text table on stdout")
    .option("--tag <tag>", "with --out trec:DIR: run tag (6th column of the run file)", DEFAULT_RUN_TAG)
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
  // It reads no setting: --config and the project file (its kb, for --floors) as every command reads them.
  addRetired(
    addConfigOption(cmd, {
      retrievalWhy: "not a setting of retrace report (it renders a saved report)",
      projectKeys: ["kb"],
      projectGates: false,
    }),
  );
  cmd.action(action((file: string | undefined, o: ReportOptions) => reportCommand(file, o)));
}
