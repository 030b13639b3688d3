/** `--out markdown:FILE` (or `--out FILE.md`): the report as markdown (src/eval/report/render.ts). */
import { renderMarkdown } from "../../eval/report/render.js";
import type { OutFormatModule } from "./subject.js";

export const render: OutFormatModule["render"] = {
  report: (s) => renderMarkdown(s.report),
};
