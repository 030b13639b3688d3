/**
 * The records of one trace input, streamed: the one reader of recorded
 * traces (docs/recorded-traces.md, "Files and formats"), used by `eval
 * --traces`, `label --traces` and `cases import` alike.
 *
 * - **Bytes**: a file, or standard input for `-`; gzip is recognised by its
 *   content (the magic bytes 1f 8b, whatever the name) and decompressed as
 *   it is read.
 * - **JSON Lines** (one OTLP/JSON export request or one LangSmith run a line,
 *   as collectors' file exporters and `listRuns()` dumps write them): read
 *   line by line through the one text loader (src/kb/text.ts
 *   `forEachTextLine`), each line parsed on its own, so a file larger than
 *   memory is fine. A JSON array on a line yields its elements. A later line
 *   that is not JSON is an error naming file, line and column (a truncated
 *   export, most often).
 * - **One JSON document** (pretty-printed or not: a LangSmith JSON array, an
 *   OTLP export written as one document, several documents one after another):
 *   when the first line is not a whole JSON value, the input is streamed
 *   through a streaming JSON parser (`@streamparser/json`), never parsed in
 *   one piece: each element of a top-level array is a record, and each span
 *   of an OTLP document (`resourceSpans[].scopeSpans[].spans[]`) is handed on
 *   as a record of its own (with its resource and scope) as soon as it is
 *   read. A syntax error names file, line and column and what was expected.
 */
import { Tokenizer, TokenParser, TokenType } from "@streamparser/json";
import { DataValidationError } from "../../errors.js";
import { forEachTextLine } from "../../kb/text.js";
import { jsonSyntaxIssue } from "../../kb/json.js";
import { openBytes, type Bytes } from "./bytes.js";
import { ScanFailure, scanDocument } from "./document-scan.js";

export { fileIsGzip, isGzip } from "./bytes.js";

/** One record and where it was read (`line` 1-based; `index` within a JSON array). */
export interface TraceRecord {
  value: unknown;
  file: string;
  line: number;
  index?: number;
}

export const whereOf = (r: Pick<TraceRecord, "file" | "line" | "index">) =>
  `${r.file}:${r.line}${r.index !== undefined ? ` [${r.index}]` : ""}`;

/** A data error at `field` of `record` (inside a JSON array: `[index].field`), as every trace reader reports one. */
export const recordIssue = (record: Pick<TraceRecord, "file" | "line" | "index">, field: string, message: string) =>
  new DataValidationError([
    {
      file: record.file,
      line: record.line,
      field: record.index !== undefined ? `[${record.index}].${field}` : field,
      message,
    },
  ]);

const EXPECTED = 'an OTLP/JSON export ({"resourceSpans": …}) or LangSmith runs, one a line (or one JSON document)';

/** A first line longer than this, bytes, is not taken for a JSON line: the input is streamed as one document. */
export const FIRST_LINE_MAX_BYTES = 16 * 1024 * 1024;

/** Calls `onRecord` for every record of `file` (stdin for `-`), in input order; `expected` completes a syntax error's "expected …". */
export async function forEachRecord(
  file: string,
  onRecord: (r: TraceRecord) => void,
  expected: string = EXPECTED,
): Promise<void> {
  const bytes = await openBytes(file);
  try {
    await readRecords(file, bytes, onRecord, expected);
  } finally {
    bytes.close(); // read to the end, or stopped by an error (or by a caller's onRecord throwing): the file is let go
  }
}

/** `forEachRecord` over the opened `bytes` of `file`. */
async function readRecords(
  file: string,
  bytes: Bytes,
  onRecord: (r: TraceRecord) => void,
  expected: string,
): Promise<void> {
  // Until the first non-blank line is read, the chunks are kept: should it not be JSON, the streaming parser reads them again.
  let kept: Buffer[] | null = [];
  let keptBytes = 0;
  let mode: "lines" | "document" | undefined;
  const lineSource: AsyncIterable<Buffer> = {
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        if (mode === "document") return { done: true, value: undefined };
        const r = await bytes.next();
        if (r.done !== true && kept !== null) {
          kept.push(r.value);
          keptBytes += r.value.length;
          // A first line this long is one document, not a JSON line.
          if (keptBytes > FIRST_LINE_MAX_BYTES && mode === undefined) {
            mode = "document";
            return { done: true, value: undefined };
          }
        }
        return r;
      },
    }),
  };
  let line = 0;
  const emit = (value: unknown, at: number) => {
    if (Array.isArray(value)) value.forEach((v, index) => onRecord({ value: v, file, line: at, index }));
    else onRecord({ value, file, line: at });
  };
  await forEachTextLine(
    file,
    (text) => {
      if (mode === "document") return;
      line++;
      if (text.trim() === "") return;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        if (mode === undefined) {
          // Not JSON Lines: the first line is not a JSON value. One JSON document (pretty-printed, most often), streamed.
          mode = "document";
          return;
        }
        const issue = jsonSyntaxIssue(text, error, { file, line, expected });
        throw new DataValidationError([
          {
            ...issue,
            message: `${issue.message} — a truncated export? Export it again, or drop its last, incomplete line`,
          },
        ]);
      }
      if (mode === undefined) {
        mode = "lines";
        kept = null;
      }
      emit(value, line);
    },
    () => mode === "document",
    undefined,
    lineSource,
  );
  if (mode !== "document") return;
  const replay = kept ?? [];
  kept = null;
  if (file === "-") {
    await streamDocument(file, replay, bytes, onRecord, expected);
    return;
  }
  // A file: scanned for its records' bounds, each record parsed whole (./document-scan.ts); on anything the scanner does not read, the file is read again by the token parser, which names the error, the records already handed on skipped.
  let handed = 0;
  try {
    const records = await scanDocument(
      (async function* () {
        yield* replay;
        for (;;) {
          const r = await bytes.next();
          if (r.done === true) return;
          yield r.value;
        }
      })(),
      (r) => {
        handed++;
        onRecord({ value: r.value, file, line: r.line, ...(r.index !== undefined ? { index: r.index } : {}) });
      },
    );
    if (records === 0) throw new DataValidationError([{ file, message: `no records; expected ${expected}` }]);
    return;
  } catch (e) {
    if (!(e instanceof ScanFailure)) throw e;
  }
  let skip = handed;
  const again = await openBytes(file);
  try {
    await streamDocument(
      file,
      [],
      again,
      (r) => {
        if (skip > 0) skip--;
        else onRecord(r);
      },
      expected,
    );
  } finally {
    again.close();
  }
}

/** What the parser expected in a state (TokenParser's states, as its messages name them). */
const EXPECTED_IN: Record<string, string> = {
  VALUE: "a JSON value",
  KEY: "a property name in double quotes",
  COLON: '":" after a property name',
  COMMA: '"," or the closing bracket',
  SEPARATOR: "the next value",
};

/**
 * One JSON document (or several, one after another) streamed through
 * `@streamparser/json`: top-level array elements and OTLP spans are handed
 * on as they are read, and each is let go of by the parser (the elements
 * already read are cut from their arrays), so memory holds one record.
 */
async function streamDocument(
  file: string,
  replay: Buffer[],
  rest: AsyncIterator<Buffer>,
  onRecord: (r: TraceRecord) => void,
  expectedRecords: string,
): Promise<void> {
  const tokenizer = new Tokenizer();
  const parser = new TokenParser({
    paths: ["$", "$.*", "$.resourceSpans.*.scopeSpans.*.spans.*"],
    keepStack: true,
    separator: "",
  });
  // Where the bytes are: the chunk being written, its offset, the line at `scanAt` (a scan that moves forward) and the bytes of its first line before it.
  let chunk: Buffer = Buffer.alloc(0);
  let chunkStart = 0;
  let scanAt = 0;
  let lineAtScan = 1;
  let columnBase = 0;
  const lineOf = (offset: number): { line: number; column: number } => {
    const to = Math.max(0, Math.min(offset - chunkStart, chunk.length));
    let line: number;
    if (to >= scanAt) {
      for (let nl = chunk.indexOf(0x0a, scanAt); nl !== -1 && nl < to; nl = chunk.indexOf(0x0a, nl + 1)) lineAtScan++;
      scanAt = to;
      line = lineAtScan;
    } else {
      line = lineAtScan;
      for (let i = to; i < scanAt; i++) if (chunk[i] === 0x0a) line--;
    }
    const nl = to > 0 ? chunk.lastIndexOf(0x0a, to - 1) : -1;
    return { line, column: nl >= 0 ? to - nl : columnBase + to + 1 };
  };
  // The line each open container began on, by depth.
  const startLine: number[] = [];
  let lastOffset = 0;
  tokenizer.onToken = (t) => {
    lastOffset = t.offset;
    if (t.token === TokenType.LEFT_BRACE || t.token === TokenType.LEFT_BRACKET) {
      const depth = (parser as unknown as { stack: unknown[] }).stack.length;
      startLine[depth] = lineOf(t.offset).line;
    }
    parser.write(t);
  };
  let records = 0;
  parser.onValue = ({ value, key, parent, stack }) => {
    const depth = stack.length;
    if (depth === 0) {
      // A whole top-level value: an array's elements and an OTLP document's spans were handed on already.
      if (Array.isArray(value)) return;
      if (
        typeof value === "object" &&
        value !== null &&
        Array.isArray((value as { resourceSpans?: unknown }).resourceSpans)
      )
        return;
      records++;
      onRecord({ value, file, line: startLine[0] ?? 1 });
      return;
    }
    if (depth === 1 && Array.isArray(parent)) {
      records++;
      onRecord({ value, file, line: startLine[1] ?? 1, index: key as number });
      parent.length -= 1; // read: let it go
      return;
    }
    if (depth === 6 && Array.isArray(parent) && stack[1]!.key === "resourceSpans" && stack[3]!.key === "scopeSpans") {
      const resource = (stack[3]!.value as { resource?: unknown } | undefined)?.resource;
      const scope = (stack[5]!.value as { scope?: unknown } | undefined)?.scope;
      records++;
      onRecord({
        value: {
          resourceSpans: [
            {
              ...(resource !== undefined ? { resource } : {}),
              scopeSpans: [{ ...(scope !== undefined ? { scope } : {}), spans: [value] }],
            },
          ],
        },
        file,
        line: startLine[6] ?? 1,
      });
      parent.length -= 1;
    }
  };
  const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const fail = (e: unknown, atEnd: boolean): never => {
    if (e instanceof DataValidationError) throw e;
    const message = (e as Error).message;
    const m = /Unexpected "(.*)" at chunk position "\d+" \(absolute position "(\d+)"\) in state (\w+)/.exec(message);
    const state = /in state (\w+)/.exec(message)?.[1] ?? /\(state: (\w+)\)/.exec(message)?.[1];
    const offset = m !== null ? Number(m[2]) : atEnd ? chunkStart + chunk.length : lastOffset;
    const { line, column } = lineOf(offset);
    const got = atEnd
      ? "the end of the input"
      : m !== null
        ? `'${m[1]}'`
        : punctuation(/Unexpected \w+ \((.*?)\) in state/.exec(message)?.[1] ?? message);
    const parserState = ["VALUE", "KEY", "COLON", "COMMA"][(parser as unknown as { state: number }).state];
    const expected = atEnd
      ? "the rest of the document"
      : (EXPECTED_IN[(m !== null ? parserState : (state ?? parserState)) ?? ""] ?? "valid JSON");
    throw new DataValidationError([
      {
        file,
        line,
        column,
        message: `malformed JSON (expected ${expected}, got ${got})${atEnd ? " — a truncated export? Export it again" : ""}; expected ${expectedRecords}`,
      },
    ]);
  };
  const write = (b: Buffer) => {
    lineAtScan += countLines(chunk, scanAt);
    const lastNl = chunk.lastIndexOf(0x0a);
    columnBase = lastNl >= 0 ? chunk.length - lastNl - 1 : columnBase + chunk.length;
    chunkStart += chunk.length;
    chunk = b;
    scanAt = 0;
    try {
      utf8.decode(b, { stream: true });
    } catch {
      throw new DataValidationError([
        { file, message: `invalid UTF-8 near byte offset ${chunkStart}; save the file as UTF-8` },
      ]);
    }
    try {
      tokenizer.write(b);
    } catch (e) {
      fail(e, false);
    }
  };
  for (const b of replay) write(b);
  for (;;) {
    const r = await rest.next();
    if (r.done === true) break;
    write(r.value);
  }
  try {
    utf8.decode();
  } catch {
    throw new DataValidationError([
      { file, message: "invalid UTF-8: a sequence cut short by the end of the file; save the file as UTF-8" },
    ]);
  }
  const open = (parser as unknown as { stack: unknown[] }).stack.length > 0 || !tokenizerIdle(tokenizer);
  if (open) fail(new Error("ended"), true);
  try {
    tokenizer.end();
  } catch (e) {
    fail(e, true);
  }
  if (records === 0) throw new DataValidationError([{ file, message: `no records; expected ${expectedRecords}` }]);
}

/** A token as a message shows it: punctuation in single quotes (as src/kb/json.ts shows it), a value as JSON. */
const punctuation = (token: string): string => (/^"[[\]{}:,]"$/.test(token) ? `'${token[1]}'` : token);

/** Newlines in `b` from `from` on. */
function countLines(b: Buffer, from: number): number {
  let n = 0;
  for (let nl = b.indexOf(0x0a, from); nl !== -1; nl = b.indexOf(0x0a, nl + 1)) n++;
  return n;
}

/** True when the tokenizer is between values (not inside a string, number or literal). */
function tokenizerIdle(t: Tokenizer): boolean {
  const state = (t as unknown as { state: number }).state;
  // START (0), SEPARATOR (28), BOM_OR_START (29): between values.
  return state === 0 || state === 28 || state === 29;
}
