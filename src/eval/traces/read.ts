/**
 * `--traces PATH` (docs/recorded-traces.md): a file, standard input (`-`),
 * or a folder whose `.json` / `.jsonl` / `.ndjson` / `.gz` files (sorted by
 * name, not recursive) are read as one recording, each through the one
 * record reader (./records.ts: JSON Lines or whole documents, gzip by content). Each record's format is detected (`resourceSpans`:
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
import { forEachTextLine, lineStartFrom } from "../../kb/text.js";
import { moduleWorker, siblingModule } from "../../module-worker.js";
import type { FormatReader } from "./formats/format.js";
import { detectFormat, TRACE_FORMAT_MODULES, traceFormat, type TraceFormat } from "./formats/registry.js";
import { OtlpReader, type SpanFacts } from "./otlp.js";
import { fileIsGzip, forEachRecord, whereOf, type TraceRecord } from "./records.js";
import type { RecordedConversation, RecordedTurn, TraceFilters } from "./types.js";
import { timeToMicros } from "./langsmith.js";
import { JOIN_LIST_MAX } from "./join.js";

const TRACE_EXTENSIONS = [".json", ".jsonl", ".ndjson", ".gz"];

/** The files `--traces PATH` names: the file itself, standard input (`-`), or the folder's trace files sorted by name (gzip ones too). */
export function traceFiles(p: string): string[] {
  if (p === "-") return [p];
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

/** The format of one record, or null when no format claims it (./formats/registry.ts: the first whose `detect` says so). */
export function recordFormat(v: unknown): TraceFormat | null {
  return detectFormat(v);
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
  /**
   * Turns whose retriever calls cannot all be attached to them (a parent
   * link missing from the export: `RecordedTurn.unattachedCalls`), kept in
   * their conversations (so the turns after them join by position) but never
   * scored; and the retriever calls with no turn. Examples name the root or
   * call and where it was read (at most JOIN_LIST_MAX).
   */
  unattached: { turns: number; calls: number; examples: string[] };
  /** How many threads read the files: 2 when a large OTLP/JSON Lines file was read in two parts (`readOtlpInTwo`). */
  threads: 1 | 2;
}

/** The size from which an OTLP/JSON Lines file is read by two threads, bytes (`readOtlpInTwo`). */
export const SPLIT_MIN_BYTES = 64 * 1024 * 1024;

/** Records the second thread read (./read-worker.ts): each record's spans, lines numbered from 1 at its part's start. */
export type PartRecords = { line: number; facts: SpanFacts[] }[];

/**
 * What the second thread posts (./read-worker.ts): its records in batches
 * (`PART_BATCH` records unless `readTraces` is given `partBatch`), in file
 * order, as it reads them (so it never holds its whole part), then how many
 * lines it read; or why it stopped.
 */
export type PartMessage = { batch: PartRecords } | { ok: true; lines: number } | { ok: false; why: string };

/**
 * The second thread's young generation, MB (a worker's `resourceLimits`):
 * it parses half the file, and nearly all it allocates dies young. With
 * V8's default for a worker it ran ~265 scavenges on a 1,000,000-span
 * recording; with 96 MB, ~150 (the mark-compacts, ~13, stay: `resourceLimits`
 * sets no old-space floor). Their CPU time was not measurably lower
 * (docs/recorded-traces.md, "Scale"): a count halved, not a cost.
 */
export const PART_YOUNG_MB = 96;

/** Records per batch the second thread posts (`readTraces`' `partBatch`, which tests set lower). */
export const PART_BATCH = 2048;

/** The record of one line of OTLP/JSON Lines, undefined for a blank line. @throws on a line that is not JSON or not one OTLP/JSON record. */
export function otlpLineValue(text: string): Record<string, unknown> | undefined {
  if (text.trim() === "") return undefined;
  const value = JSON.parse(text) as unknown;
  if (recordFormat(value) !== "otlp") throw new Error("not an OTLP/JSON record");
  return value as Record<string, unknown>;
}

/**
 * A recording of OTLP/JSON Lines read by two threads
 * (docs/recorded-traces.md, "Scale"): each file of at least `minBytes` is cut
 * at a line start near its middle; a worker thread (./read-worker.ts) reads
 * the second part while this one reads the first, and its spans are then
 * taken in, in file order, after the first part's — so the reader holds
 * what one thread reading the file line by line would hold. Null, with
 * nothing kept, whenever the recording is not plain OTLP/JSON Lines
 * throughout or anything goes wrong (a line that is not JSON, another
 * format, a malformed or duplicate span, a worker that fails): the caller
 * then reads it on one thread, which names any problem as it always has.
 * Also null, at once, when no file is that large (or one is stdin).
 */
async function readOtlpInTwo(
  files: readonly string[],
  minBytes: number,
  batch: number,
): Promise<{ reader: OtlpReader; threads: 1 | 2 } | null> {
  let sizes: number[];
  try {
    sizes = files.map((f) => (f === "-" ? -1 : statSync(f).size));
  } catch {
    return null;
  }
  if (sizes.some((n) => n < 0) || !sizes.some((n) => n >= minBytes)) return null;
  // A gzip file is decompressed as it is read: it cannot be cut in two.
  if (files.some((f) => fileIsGzip(f))) return null;
  const otlp = new OtlpReader();
  const workers: { terminate(): Promise<number> }[] = [];
  let records = 0;
  try {
    for (const [i, file] of files.entries()) {
      const size = sizes[i]!;
      const cut = size >= minBytes ? lineStartFrom(file, Math.floor(size / 2)) : null;
      let second: Promise<Exclude<PartMessage, { batch: PartRecords }>> | null = null;
      // The second part's batches, kept in order until the first part is read.
      const batches: PartRecords[] = [];
      if (cut !== null && cut < size) {
        const worker = moduleWorker(
          siblingModule(import.meta.url, "read-worker"),
          {
            file,
            start: cut,
            end: size,
            batch,
          },
          { resourceLimits: { maxYoungGenerationSizeMb: PART_YOUNG_MB } },
        );
        workers.push(worker);
        second = new Promise((resolve) => {
          worker.on("message", (m: PartMessage) => {
            if ("batch" in m) batches.push(m.batch);
            else resolve(m);
          });
          worker.once("error", (e) => resolve({ ok: false, why: e.message }));
          worker.once("exit", (code) => resolve({ ok: false, why: `the reading thread exited (${code})` }));
        });
      }
      let lines = 0;
      await forEachTextLine(
        file,
        (text) => {
          lines++;
          const value = otlpLineValue(text);
          if (value === undefined) return;
          records++;
          otlp.add({ value, file, line: lines });
        },
        undefined,
        second !== null ? { start: 0, end: cut! } : undefined,
      );
      if (second === null) continue;
      const part = await second;
      if (!part.ok) return null;
      for (let b = 0; b < batches.length; b++) {
        for (const r of batches[b]!) {
          records++;
          const at = { file, line: lines + r.line };
          for (const f of r.facts) otlp.addFacts(f, at);
        }
        batches[b] = []; // taken in: let its facts go
        // Back to the event loop now and then: an interrupt ends the intake of a large second part at once.
        if (b % 4 === 3) await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  } catch {
    return null;
  } finally {
    for (const w of workers) void w.terminate();
  }
  return records > 0 ? { reader: otlp, threads: workers.length > 0 ? 2 : 1 } : null;
}

/** Reads every file of `p`, streaming, into conversations (sorted by id). */
export async function readTraces(
  p: string,
  opts: { format?: TraceFormat; filters?: TraceFilters; splitMinBytes?: number; partBatch?: number } = {},
): Promise<ReadTraces> {
  const files = traceFiles(p);
  // A large OTLP/JSON Lines recording is read by two threads when it can be; else (and always for LangSmith runs) by one.
  const inTwo =
    opts.format !== "langsmith"
      ? await readOtlpInTwo(files, opts.splitMinBytes ?? SPLIT_MIN_BYTES, opts.partBatch ?? PART_BATCH)
      : null;
  const { format, turns, records, orphans } =
    inTwo !== null
      ? {
          format: "otlp" as const,
          turns: await inTwo.reader.turnsInSteps(),
          records: inTwo.reader.spanCount,
          orphans: inTwo.reader.unattached,
        }
      : await readInOrder(files, opts.format);
  const f = opts.filters ?? {};
  const from = f.from !== undefined ? timeToMicros(f.from) : undefined;
  const to = f.to !== undefined ? timeToMicros(f.to) : undefined;
  const kept = turns.filter(
    (t) =>
      (f.services === undefined ||
        (t.services ?? (t.service !== undefined ? [t.service] : [])).some((s) => f.services!.includes(s))) &&
      (from === undefined || t.startUs >= from) &&
      (to === undefined || t.startUs < to),
  );
  const conversations = conversationsOf(kept);
  const unattachedTurns = kept.filter((t) => (t.unattachedCalls ?? 0) > 0);
  const examples = [
    ...unattachedTurns.map(
      (t) =>
        `${t.rootId} (${t.where}): ${t.unattachedCalls} retriever call${t.unattachedCalls === 1 ? "" : "s"} with no parent link`,
    ),
    ...orphans.map((o) => `retriever ${o.id} (${o.where}): no parent link`),
  ].slice(0, JOIN_LIST_MAX);
  return {
    format,
    files,
    records,
    conversations,
    filteredOut: turns.length - kept.length,
    unattached: { turns: unattachedTurns.length, calls: orphans.length, examples },
    threads: inTwo?.threads ?? 1,
  };
}

/** Turns grouped into conversations by conversation id (a turn with none: its own, named by its root), sorted by id, turns in order (`compareTurns`). */
export function conversationsOf(turns: readonly RecordedTurn[]): RecordedConversation[] {
  const byConversation = new Map<string, RecordedConversation>();
  for (const t of turns) {
    const id = t.conversationId ?? t.rootId;
    const c = byConversation.get(id) ?? { id, anonymous: t.conversationId === null, turns: [] };
    byConversation.set(id, c);
    c.turns.push(t);
  }
  const conversations = [...byConversation.values()].sort((a, b) => cmp(a.id, b.id));
  for (const c of conversations) c.turns.sort(compareTurns);
  return conversations;
}

/** Reads the files one record after another on this thread, every record's format checked (the first one's is the run's), into turns. */
async function readInOrder(
  files: readonly string[],
  forced: TraceFormat | undefined,
): Promise<{
  format: TraceFormat;
  turns: RecordedTurn[];
  records: number;
  orphans: readonly { id: string; where: string }[];
}> {
  let format: TraceFormat | undefined = forced;
  let firstSeen: string | undefined;
  // One reader per format, opened before reading (a record is taken in as it is read); only the run's format's is used.
  const readers = new Map<TraceFormat, FormatReader>();
  for (const f of TRACE_FORMAT_MODULES) readers.set(f.name, await f.open());
  const named = (f: TraceFormat) => traceFormat(f).label;
  const onRecord = (r: TraceRecord) => {
    const f = recordFormat(r.value);
    if (f === null)
      throw new DataValidationError([
        {
          file: r.file,
          line: r.line,
          message: `${whereOf(r)}: expected ${expectedRecords()}, got ${JSON.stringify(r.value).slice(0, 60)}`,
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
          message: `a ${named(f)} record, while ${forced !== undefined ? `--traces-format is ${forced}` : `${firstSeen} was ${named(format)}`}: one run reads one format; put each format's files in a folder of their own and score them separately`,
        },
      ]);
    readers.get(f)!.add(r);
  };
  for (const file of files) await forEachRecord(file, onRecord);
  if (format === undefined)
    throw new DataValidationError([{ file: files[0]!, message: "no trace records (the file is empty)" }]);
  const { turns, records, unattached } = await readers.get(format)!.finish();
  return { format, turns, records, orphans: unattached };
}

/** What a record of any format looks like ("A, B or C"), for the message on a record of none. */
function expectedRecords(): string {
  const all = TRACE_FORMAT_MODULES.map((f) => f.expected);
  return all.length === 1 ? all[0]! : `${all.slice(0, -1).join(", ")} or ${all.at(-1)!}`;
}
