/**
 * `--out html:FILE` (or `--out FILE.html`): one self-contained offline page —
 * the report (docs/html-report.md), two runs side by side (`compare`), or the
 * labelling page (`label`, docs/labelling.md).
 */
import path from "node:path";
import { DataValidationError } from "../../errors.js";
import type { RunSide } from "../../eval/gate/compare.js";
import { renderHtmlComparison } from "../../eval/report/html/compare-page.js";
import { renderHtmlReport } from "../../eval/report/html/report-page.js";
import type { Report } from "../../eval/report/types.js";
import { renderLabelPage } from "../../eval/label/page.js";
import type { OutFormatModule } from "./subject.js";

/** The full report behind a run side; a baseline file has no per-turn artifacts to show (exit 2 naming the file). */
export function reportOf(side: RunSide, message: string): Report {
  const r = side.source as Partial<Report>;
  if (!Array.isArray(r.turns) || r.splits === undefined)
    throw new DataValidationError([{ file: side.file, field: "turns", message }]);
  return side.source as Report;
}

export const render: OutFormatModule["render"] = {
  report: (s, file) => renderHtmlReport(s.report, { name: s.pageName ?? path.basename(file) }),
  comparison: (s) => {
    const why =
      "--out html: needs report JSON files (retrace eval --out json:FILE); a baseline holds no per-turn artifacts";
    const [ra, rb] = [reportOf(s.a, why), reportOf(s.b, why)]; // both report files, so the funnels were compared
    return renderHtmlComparison(
      { name: path.basename(s.a.file), report: ra },
      { name: path.basename(s.b.file), report: rb },
      s.comparison,
    );
  },
  label: (s) => renderLabelPage(s.data),
};
