/** `--out json:FILE` (or `--out FILE.json`): the versioned JSON document a command prints with `--json`. */
import { reportJSONPieces } from "../../eval/report/render/json.js";
import type { OutFormatModule } from "./subject.js";

export const render: OutFormatModule["render"] = {
  // In pieces: a large report (a --traces run) is written without its whole text in memory; the same bytes.
  report: (s) => ({ pieces: () => reportJSONPieces(s.report) }),
  comparison: (s) => `${JSON.stringify(s.comparison, null, 2)}\n`,
};
