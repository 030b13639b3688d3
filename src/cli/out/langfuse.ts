/** `--out langfuse:FILE` (`eval --traces` of Langfuse exports or OTLP spans): Langfuse score bodies (traceId, observationId, name, value, dataType, comment), one a line, one per scored turn and metric (docs/recorded-traces.md). */
import { langfuseScores } from "../../app/langfuse-scores.js";
import { InvalidArgumentError } from "../../errors.js";
import type { OutFormatModule } from "./subject.js";

export const render: OutFormatModule["render"] = {
  report: (s) => {
    const format = s.report.run.graph?.traces?.format;
    if ((format !== "langfuse" && format !== "otlp") || s.recorded === undefined)
      throw new InvalidArgumentError(
        "--out langfuse:",
        "Langfuse trace exports or OTLP/JSON spans (Langfuse scores attach to its traces and observations; for LangSmith runs write --out langsmith:FILE)",
        `${format ?? "no"} traces`,
      );
    return langfuseScores(s.report, s.recorded)
      .map((f) => `${JSON.stringify(f)}\n`)
      .join("");
  },
};
