/**
 * `--out trec:DIR`: the report's retrieval as TREC files, DIR/run.txt and
 * DIR/qrels.txt, query ids `caseId#turn` (docs/langchain-integration.md);
 * `retrace score -c -k K DIR/qrels.txt DIR/run.txt` then gives the report's
 * means. A report with no retrieved ids is exit 2 (nothing to export).
 */
import path from "node:path";
import { DataValidationError } from "../../errors.js";
import { scoreHint, trecFiles } from "../../eval/ir/trec-export.js";
import { HIT_KEY } from "../../eval/measures/metrics.js";
import type { OutFormatModule } from "./subject.js";

export const render: OutFormatModule["render"] = {
  report: (s, dir) => {
    const trec = trecFiles(s.report, s.trecTag !== undefined ? { tag: s.trecTag } : {});
    if (trec.queries === 0)
      throw new DataValidationError([
        {
          file: s.pageName ?? "the report",
          field: "turns",
          message: `no turn has retrieved ids (retrieval ${s.report.vacuousReasons[HIT_KEY] ?? "not measured"}): nothing to export`,
        },
      ]);
    // The same paths as the registry's `paths` (the preflight checked them).
    const runFile = path.join(dir, "run.txt");
    const qrelsFile = path.join(dir, "qrels.txt");
    return {
      files: [
        { path: runFile, data: trec.run },
        { path: qrelsFile, data: trec.qrels },
      ],
      notes: [
        `wrote ${runFile} (${trec.queries} queries) and qrels.txt (${trec.judged} judged queries)`,
        `the report's means: ${scoreHint({ qrels: qrelsFile, run: runFile }, s.report.run.k)}`,
      ],
    };
  },
};
