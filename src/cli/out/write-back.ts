/**
 * The score write-back files' one check (`--out langsmith:` / `langfuse:` /
 * `phoenix:`, docs/recorded-traces.md "Writing the scores back"): the
 * recording's format says which of them take it (its `writeBack`,
 * src/eval/traces/formats/); any other run is refused, exit 2, naming the
 * recordings the target takes (from the same registry) and the format given.
 */
import type { RecordedGraphTurn } from "../../eval/sweep/recorded.js";
import type { WriteBackTarget } from "../../eval/traces/formats/format.js";
import { writeBackWords, writesBack } from "../../eval/traces/formats/registry.js";
import { InvalidArgumentError } from "../../errors.js";
import type { ReportSubject } from "./subject.js";

/**
 * The recorded turns of a `--traces` run whose format `--out TARGET:` takes.
 * @param why the target's reason, ending in a pointer to another target ("feedback attaches to LangSmith runs; for OTLP spans write --out phoenix:FILE").
 * @throws InvalidArgumentError (exit 2) for another format, or a run of no recording.
 */
export function writeBackTurns(s: ReportSubject, target: WriteBackTarget, why: string): readonly RecordedGraphTurn[] {
  const format = s.report.run.graph?.traces?.format;
  if (!writesBack(target, format) || s.recorded === undefined)
    throw new InvalidArgumentError(
      `--out ${target}:`,
      `${writeBackWords(target)} (${why})`,
      `${format ?? "no"} traces`,
    );
  return s.recorded;
}
