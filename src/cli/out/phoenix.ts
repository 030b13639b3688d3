/** `--out phoenix:FILE` (`eval --traces` of a format whose module takes it: OTLP spans): Phoenix span annotations, the body of POST /v1/span_annotations, one per scored turn and metric (docs/recorded-traces.md). */
import { phoenixAnnotations } from "../../app/traces-eval.js";
import type { OutFormatModule } from "./subject.js";
import { writeBackTurns } from "./write-back.js";

export const render: OutFormatModule["render"] = {
  report: (s) => `${JSON.stringify(phoenixAnnotations(s.report, writeBackTurns(s, "phoenix")), null, 2)}\n`,
};
