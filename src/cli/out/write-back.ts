/**
 * The score write-back files' one check (`--out langsmith:` / `langfuse:` /
 * `phoenix:`, docs/recorded-traces.md "Writing the scores back"): the
 * recording's format says which of them take it (its `writeBack`,
 * src/eval/traces/formats/); any other run is refused, exit 2, naming the
 * recordings the target takes (from the same registry) and the format given.
 * The check is made twice with one message: before the run, from the
 * recording's first record (`checkWriteBackEarly`), and on the finished
 * report (`writeBackTurns`), which is the only one for `--traces -`.
 */
import type { RecordedGraphTurn } from "../../eval/sweep/recorded.js";
import type { WriteBackTarget } from "../../eval/traces/formats/format.js";
import { writeBackWords, writesBack } from "../../eval/traces/formats/registry.js";
import { InvalidArgumentError } from "../../errors.js";
import type { ReportSubject } from "./subject.js";

/** Each target's reason, ending in a pointer to another target. */
const WHY: Readonly<Record<WriteBackTarget, string>> = {
  langsmith: "feedback attaches to LangSmith runs; for OTLP spans write --out phoenix:FILE",
  phoenix: "Phoenix annotates OpenTelemetry spans; for LangSmith runs write --out langsmith:FILE",
  langfuse: "Langfuse scores attach to its traces and observations; for LangSmith runs write --out langsmith:FILE",
};

/** Whether `--out FORMAT:` is a score write-back file. */
export const isWriteBackTarget = (format: string): format is WriteBackTarget => Object.hasOwn(WHY, format);

/** The refusal of `--out TARGET:` for a run of `format` traces (none: not a `--traces` run). */
const refusal = (target: WriteBackTarget, format: string | undefined) =>
  new InvalidArgumentError(
    `--out ${target}:`,
    `${writeBackWords(target)} (${WHY[target]})`,
    `${format ?? "no"} traces`,
  );

/**
 * The recorded turns of a `--traces` run whose format `--out TARGET:` takes.
 * @throws InvalidArgumentError (exit 2) for another format, or a run of no recording.
 */
export function writeBackTurns(s: ReportSubject, target: WriteBackTarget): readonly RecordedGraphTurn[] {
  const format = s.report.run.graph?.traces?.format;
  if (!writesBack(target, format) || s.recorded === undefined) throw refusal(target, format);
  return s.recorded;
}

/**
 * The write-back check before the run: every `--out TARGET:` of `outputs`
 * against the recording's format (`format`: `--traces-format`, else its first
 * record's, `firstRecordFormat`), with `writeBackTurns`' message. Nothing is
 * refused when the format is not known yet (`--traces -`, an unreadable or
 * unrecognised first record): the reader or the check after the run does it.
 * @throws InvalidArgumentError (exit 2)
 */
export function checkWriteBackEarly(
  outputs: readonly { format: string }[] | undefined,
  format: string | undefined,
): void {
  if (format === undefined) return;
  for (const t of outputs ?? [])
    if (isWriteBackTarget(t.format) && !writesBack(t.format, format)) throw refusal(t.format, format);
}
