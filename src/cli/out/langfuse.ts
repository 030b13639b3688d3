/** `--out langfuse:FILE` (`eval --traces` of a format whose module takes it: Langfuse exports, OTLP spans): Langfuse score bodies (traceId, observationId, name, value, dataType, comment), one a line, one per scored turn and metric (docs/recorded-traces.md). */
import { langfuseScores } from "../../app/langfuse-scores.js";
import type { OutFormatModule } from "./subject.js";
import { writeBackTurns } from "./write-back.js";

export const render: OutFormatModule["render"] = {
  report: (s) =>
    langfuseScores(s.report, writeBackTurns(s, "langfuse"))
      .map((f) => `${JSON.stringify(f)}\n`)
      .join(""),
};
