/** `--out config:FILE` (or `--out FILE`; `tune`): the chosen retrieval configuration, the file `--config` reads. */
import { configToJSON } from "../../research/tune-config.js";
import type { OutFormatModule } from "./subject.js";

export const render: OutFormatModule["render"] = {
  tuning: (s) => configToJSON(s.config),
};
