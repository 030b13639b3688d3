/** `--out junit:FILE` (or `--out FILE.xml`): JUnit XML, one test per gate check (src/eval/report/render.ts). */
import { renderJUnit } from "../../eval/report/render.js";
import type { OutFormatModule } from "./subject.js";

export const render: OutFormatModule["render"] = {
  report: (s) => renderJUnit(s.report),
};
