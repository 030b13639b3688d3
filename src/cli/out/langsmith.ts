/** `--out langsmith:FILE` (`eval --traces` of a format whose module takes it: LangSmith runs): LangSmith feedback records (the body of POST /feedback, as the SDKs' FeedbackCreate: id, run_id, trace_id, session_id, key, score, value, comment, feedback_source), one a line, one per scored turn and metric (docs/recorded-traces.md). */
import { langsmithFeedback } from "../../app/traces-eval.js";
import type { OutFormatModule } from "./subject.js";
import { writeBackTurns } from "./write-back.js";

export const render: OutFormatModule["render"] = {
  report: (s) =>
    langsmithFeedback(s.report, writeBackTurns(s, "langsmith"))
      .map((f) => `${JSON.stringify(f)}\n`)
      .join(""),
};
