/** `--out pr-comment:FILE`: a concise pull-request comment body about a run, against its baseline or the run it is compared with (src/eval/gate/pr-comment.ts, docs/ci.md). */
import path from "node:path";
import { renderPrComment } from "../../eval/gate/pr-comment.js";
import type { OutFormatModule } from "./subject.js";
import { reportOf } from "./html.js";

export const render: OutFormatModule["render"] = {
  report: (s) => renderPrComment(s.report, s.comment),
  comparison: (s) =>
    renderPrComment(
      reportOf(
        s.b,
        "--out pr-comment: needs B to be a report JSON (retrace eval --out json:FILE); a baseline holds no per-turn artifacts",
      ),
      {
        reference: s.a.data !== undefined ? { file: s.a.file, data: s.a.data } : null,
        seed: s.seed,
        comparison: { comparisons: s.comparisons, method: s.method, flips: s.flips },
        title: `retrace compare ${path.basename(s.a.file)} ${path.basename(s.b.file)}`,
      },
    ),
};
