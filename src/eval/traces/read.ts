/**
 * `--traces PATH` (docs/recorded-traces.md): a file, or a folder whose
 * `.json` / `.jsonl` / `.ndjson` files (sorted by name, not recursive) are
 * read as one recording. Each record's format is detected (`resourceSpans`:
 * OTLP/JSON; a run with `run_type` / `trace_id`: LangSmith) unless
 * `--traces-format` forces one; one run reads one format, and a record of
 * another is an error naming file and line. The turns are grouped into
 * conversations by their conversation id (a root with none is a one-turn
 * conversation named by its root id, listed as such) and ordered by
 * `compareTurns`.
 */
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { DataValidationError, InvalidArgumentError } from "../../errors.js";
import { LangSmithReader } from "./langsmith.js";
import { OtlpReader } from "./otlp.js";
import { forEachRecord, whereOf, type TraceRecord } from "./records.js";
import type { RecordedConversation, RecordedTurn, TraceFilters, TraceFormat } from "./types.js";
import { timeToMicros } from "./langsmith.js";

const TRACE_EXTENSIONS = [".json", ".jsonl", ".ndjson"];

/** The files `--traces PATH` names: the file itself, or the folder's trace files sorted by name. */
export function traceFiles(p: string): string[] {
  let st;
  try {
    st = statSync(p);
  } catch {
    throw new InvalidArgumentError("--traces", "an existing trace file or folder", p);
  }
  if (!st.isDirectory()) return [p];
  const files = readdirSync(p)
    .filter((f) => TRACE_EXTENSIONS.some((e) => f.endsWith(e)))
    .sort()
    .map((f) => path.join(p, f));
  if (files.length === 0)
    throw new InvalidArgumentError("--traces", `a folder holding ${TRACE_EXTENSIONS.join(" / ")} trace files`, p);
  return files;
}

/** The format of one record, or null when it is neither. */
export function recordFormat(v: unknown): TraceFormat | null {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  if ("resourceSpans" in o) return "otlp";
  if ("run_type" in o || ("trace_id" in o && "id" in o)) return "langsmith";
  return null;
}

/**
 * Turn order within a conversation (the tie rule): root start time, then
 * root end time (OTel start times are whole milliseconds, so two turns can
 * start in the same one), then LangSmith's `dotted_order`, then the root id.
 */
export function compareTurns(a: RecordedTurn, b: RecordedTurn): number {
  return (
    a.startUs - b.startUs ||
    a.endUs - b.endUs ||
    cmp(a.dottedOrder ?? "", b.dottedOrder ?? "") ||
    cmp(a.rootId, b.rootId)
  );
}
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export interface ReadTraces {
  format: TraceFormat;
  files: string[];
  /** Spans (OTLP) or runs (LangSmith) read. */
  records: number;
  conversations: RecordedConversation[];
  /** Turns left out by the filters. */
  filteredOut: number;
}

/** Reads every file of `p`, streaming, into conversations (sorted by id). */
export async function readTraces(
  p: string,
  opts: { format?: TraceFormat; filters?: TraceFilters } = {},
): Promise<ReadTraces> {
  const files = traceFiles(p);
  let format: TraceFormat | undefined = opts.format;
  let firstSeen: string | undefined;
  const otlp = new OtlpReader();
  const ls = new LangSmithReader();
  const onRecord = (r: TraceRecord) => {
    const f = recordFormat(r.value);
    if (f === null)
      throw new DataValidationError([
        {
          file: r.file,
          line: r.line,
          message: `${whereOf(r)}: expected an OTLP/JSON export ({"resourceSpans": …}) or a LangSmith run ({"id", "run_type", "trace_id", …}), got ${JSON.stringify(r.value).slice(0, 60)}`,
        },
      ]);
    if (format === undefined) {
      format = f;
      firstSeen = whereOf(r);
    } else if (f !== format)
      throw new DataValidationError([
        {
          file: r.file,
          line: r.line,
          message: `a ${f === "otlp" ? "OTLP/JSON" : "LangSmith"} record, while ${opts.format !== undefined ? `--traces-format is ${opts.format}` : `${firstSeen} was ${format === "otlp" ? "OTLP/JSON" : "LangSmith"}`}: one run reads one format; put each format's files in a folder of their own and score them separately`,
        },
      ]);
    if (f === "otlp") otlp.add(r);
    else ls.add(r);
  };
  for (const file of files) await forEachRecord(file, onRecord);
  if (format === undefined)
    throw new DataValidationError([{ file: files[0]!, message: "no trace records (the file is empty)" }]);
  const turns = format === "otlp" ? otlp.turns() : ls.turns();
  const f = opts.filters ?? {};
  const from = f.from !== undefined ? timeToMicros(f.from) : undefined;
  const to = f.to !== undefined ? timeToMicros(f.to) : undefined;
  const kept = turns.filter(
    (t) =>
      (f.services === undefined || (t.service !== undefined && f.services.includes(t.service))) &&
      (from === undefined || t.startUs >= from) &&
      (to === undefined || t.startUs < to),
  );
  const byConversation = new Map<string, RecordedConversation>();
  for (const t of kept) {
    const id = t.conversationId ?? t.rootId;
    const c = byConversation.get(id) ?? { id, anonymous: t.conversationId === null, turns: [] };
    byConversation.set(id, c);
    c.turns.push(t);
  }
  const conversations = [...byConversation.values()].sort((a, b) => cmp(a.id, b.id));
  for (const c of conversations) c.turns.sort(compareTurns);
  return {
    format,
    files,
    records: format === "otlp" ? otlp.spanCount : ls.runCount,
    conversations,
    filteredOut: turns.length - kept.length,
  };
}
