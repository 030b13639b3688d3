/**
 * `retrace export REPORT.json --trec DIR`: write a saved sweep's retrieval as
 * TREC files, DIR/run.txt and DIR/qrels.txt, query ids `caseId#turn`
 * (docs/langchain-integration.md). Then
 * `retrace score -c -k 5 DIR/qrels.txt DIR/run.txt` gives the report's means
 * (`-c`: a turn with an empty ranking has no run line and scores 0).
 * Nothing on stdout; one summary line on stderr. Exit 0, or 2 on a bad file.
 */
import path from "node:path";
import type { Command } from "commander";
import { DataValidationError } from "../../errors.js";
import { DEFAULT_RUN_TAG, scoreHint, trecFiles } from "../../eval/ir/trec-export.js";
import { HIT_KEY } from "../../eval/measures/metrics.js";
import { log } from "../../log.js";
import { checkOutputs, writeOutputs } from "../../output-set.js";
import { action } from "../io.js";
import { readReport } from "../../app/report.js";

export function register(program: Command): void {
  program
    .command("export")
    .description("Write a saved report's retrieval as TREC run and qrels files (query id caseId#turn) for retrace score, trec_eval, ranx, ir_measures")
    .argument("<report>", "report JSON written by retrace eval --report-json (or --json)")
    .requiredOption("--trec <dir>", "folder to write run.txt and qrels.txt into (created if missing)")
    .option("--tag <tag>", "run tag (6th column of the run file)", DEFAULT_RUN_TAG)
    .action(
      action(async (file: string, opts: { trec: string; tag: string }) => {
        const runFile = path.join(opts.trec, "run.txt");
        const qrelsFile = path.join(opts.trec, "qrels.txt");
        await checkOutputs([{ option: "--trec", path: runFile }, { option: "--trec", path: qrelsFile }]); // before the report is read (exit 2)
        const report = await readReport(file);
        const files = trecFiles(report, { tag: opts.tag });
        if (files.queries === 0) throw new DataValidationError([{ file, field: "turns", message: `no turn has retrieved ids (retrieval ${report.vacuousReasons[HIT_KEY] ?? "not measured"}): nothing to export` }]);
        // Both files or neither (src/output-set.ts); the folder is created if missing.
        await writeOutputs([{ option: "--trec", path: runFile, data: files.run }, { option: "--trec", path: qrelsFile, data: files.qrels }]);
        log.info(`wrote ${runFile} (${files.queries} queries) and qrels.txt (${files.judged} judged queries)`);
        log.info(`the report's means: ${scoreHint({ qrels: qrelsFile, run: runFile }, report.run.k)}`);
      }),
    );
}
