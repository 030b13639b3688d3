/** `--out pr-comment:FILE`: a concise pull-request comment body about a run, against its baseline or the run it is compared with (src/eval/report/render/pr-comment.ts, docs/ci.md). */
import path from "node:path";
import { referenceComparison } from "../../eval/gate/compare.js";
import { renderPrComment } from "../../eval/report/render/pr-comment.js";
import type { OutFormatModule } from "./subject.js";
import { reportOf } from "./html.js";

export const render: OutFormatModule["render"] = {
  report: (s) =>
    renderPrComment(s.report, {
      comparison: referenceComparison(s.report, s.comment.reference, { seed: s.comment.seed }),
      referenceReport:
        s.comment.reference !== null && !("perTurn" in s.comment.reference.data) ? s.comment.reference.data : null,
      title: s.comment.title,
    }),
  comparison: (s) =>
    renderPrComment(
      reportOf(
        s.b,
        "--out pr-comment: needs B to be a report JSON (retrace eval --out json:FILE); a baseline holds no per-turn artifacts",
      ),
      {
        comparison: s.comparison,
        referenceReport: s.a.data !== undefined && !("perTurn" in s.a.data) ? s.a.data : null,
        title: `retrace compare ${path.basename(s.a.file)} ${path.basename(s.b.file)}`,
      },
    ),
};
