/** `--out phoenix:FILE` (`eval --traces` of OTLP spans): Phoenix span annotations, the body of POST /v1/span_annotations, one per scored turn and metric (docs/recorded-traces.md). */
import { phoenixAnnotations } from "../../app/traces-eval.js";
import { InvalidArgumentError } from "../../errors.js";
import type { OutFormatModule } from "./subject.js";

export const render: OutFormatModule["render"] = {
  report: (s) => {
    const format = s.report.run.graph?.traces?.format;
    if (format !== "otlp" || s.recorded === undefined)
      throw new InvalidArgumentError(
        "--out phoenix:",
        "OTLP/JSON traces (Phoenix annotates OpenTelemetry spans; for LangSmith runs write --out langsmith:FILE)",
        `${format ?? "no"} traces`,
      );
    return `${JSON.stringify(phoenixAnnotations(s.report, s.recorded), null, 2)}\n`;
  },
};
