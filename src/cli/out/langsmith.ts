/** `--out langsmith:FILE` (`eval --traces` of LangSmith runs): LangSmith feedback records (the body of POST /feedback, as the SDKs' FeedbackCreate: id, run_id, trace_id, session_id, key, score, value, comment, feedback_source), one a line, one per scored turn and metric (docs/recorded-traces.md). */
import { langsmithFeedback } from "../../app/traces-eval.js";
import { InvalidArgumentError } from "../../errors.js";
import type { OutFormatModule } from "./subject.js";

export const render: OutFormatModule["render"] = {
  report: (s) => {
    const format = s.report.run.graph?.traces?.format;
    if (format !== "langsmith" || s.recorded === undefined)
      throw new InvalidArgumentError(
        "--out langsmith:",
        "LangSmith run exports (feedback attaches to LangSmith runs; for OTLP spans write --out phoenix:FILE)",
        `${format ?? "no"} traces`,
      );
    return langsmithFeedback(s.report, s.recorded)
      .map((f) => `${JSON.stringify(f)}\n`)
      .join("");
  },
};
