/** `--out cases:FILE` (or `--out FILE`; `cases import`, `cases synth`): the cases as JSON Lines. */
import type { OutFormatModule } from "./subject.js";

export const render: OutFormatModule["render"] = {
  cases: (s) => s.text,
};
