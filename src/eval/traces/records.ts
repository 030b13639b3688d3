/**
 * The records of one trace file, streamed (docs/recorded-traces.md,
 * "Files"): JSON Lines — one OTLP/JSON export request or one LangSmith run a
 * line, as collectors' file exporters and `listRuns()` dumps write them — are
 * read line by line through the one text loader (src/kb/text.ts
 * `forEachTextLine`), so a file larger than memory is fine. A file that is one
 * JSON document over several lines (a pretty-printed OTLP export, a LangSmith
 * JSON array) is read whole, up to WHOLE_DOCUMENT_MAX_BYTES: larger exports
 * must be JSON Lines. A JSON array (on a line or as the document) yields its
 * elements. A line that is not JSON is an error naming file and line (a
 * truncated export, most often: its last line cut).
 */
import { DataValidationError } from "../../errors.js";
import { forEachTextLine, readTextFileOrThrow } from "../../kb/text.js";
import { jsonSyntaxIssue, parseJsonOrIssue } from "../../kb/json.js";

/** The largest trace file read as one JSON document (not JSON Lines), bytes. */
export const WHOLE_DOCUMENT_MAX_BYTES = 512 * 1024 * 1024;

/** One record and where it was read (`line` 1-based; `index` within a JSON array). */
export interface TraceRecord {
  value: unknown;
  file: string;
  line: number;
  index?: number;
}

export const whereOf = (r: Pick<TraceRecord, "file" | "line" | "index">) =>
  `${r.file}:${r.line}${r.index !== undefined ? ` [${r.index}]` : ""}`;

const EXPECTED = 'an OTLP/JSON export ({"resourceSpans": …}) or LangSmith runs, one a line (or one JSON document)';

/** Calls `onRecord` for every record of `file`, in file order. */
export async function forEachRecord(file: string, onRecord: (r: TraceRecord) => void): Promise<void> {
  let line = 0;
  let firstBad: { line: number; text: string; error: unknown } | null = null;
  let nonBlank = 0;
  const emit = (value: unknown, at: number) => {
    if (Array.isArray(value)) value.forEach((v, index) => onRecord({ value: v, file, line: at, index }));
    else onRecord({ value, file, line: at });
  };
  await forEachTextLine(
    file,
    (text) => {
      line++;
      if (text.trim() === "") return;
      nonBlank++;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        firstBad = { line, text, error };
        return;
      }
      emit(value, line);
    },
    () => firstBad !== null,
  );
  if (firstBad === null) return;
  const bad = firstBad as { line: number; text: string; error: unknown };
  // Not JSON Lines: the first line did not parse. One JSON document over several lines, read whole.
  if (nonBlank === 1) {
    const text = await readTextFileOrThrow(file, {
      maxBytes: WHOLE_DOCUMENT_MAX_BYTES,
      limitOption: "JSON Lines (one record a line, streamed)",
      limitSource: "the limit of a trace file read as one document",
    });
    const r = parseJsonOrIssue(text, { file, expected: EXPECTED });
    if ("issue" in r)
      throw new DataValidationError([
        {
          ...r.issue,
          message: `${r.issue.message} — a truncated export? Export it again, or drop its last, incomplete record`,
        },
      ]);
    emit(r.value, 1);
    return;
  }
  const issue = jsonSyntaxIssue(bad.text, bad.error, { file, line: bad.line, expected: EXPECTED });
  throw new DataValidationError([
    { ...issue, message: `${issue.message} — a truncated export? Export it again, or drop its last, incomplete line` },
  ]);
}
