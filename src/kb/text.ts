/**
 * The one loader of every text input of retrace (cards, cases, split files,
 * qrels and run files): docs/reliability.md, "One text loader".
 *
 * - strict UTF-8: an invalid byte sequence is a DataIssue naming the file,
 *   the byte offset (0-based) and the line (1-based) where it starts;
 * - a leading byte-order mark (EF BB BF) is accepted and removed;
 * - CRLF line ends are accepted (callers split on /\r?\n/);
 * - only regular files are read: a directory (also one named `*.md`), a
 *   symlink to a directory, a FIFO or a socket is an issue naming the path;
 * - a file larger than `maxBytes` is an issue (nothing of it is read).
 *
 * `forEachTextLine` applies the same rules to a file streamed line by line
 * (TREC run and qrels files, which may be larger than memory should hold).
 */
import { isUtf8 } from "node:buffer";
import { closeSync, createReadStream, openSync, readFileSync, readSync, statSync, type Stats } from "node:fs";
import { open, stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import { didYouMeanFile } from "../edit-distance.js";
import { DataValidationError, type DataIssue } from "../errors.js";

/** Default size limit of one card, bytes (`--max-card-bytes`). */
export const DEFAULT_MAX_CARD_BYTES = 1024 * 1024;

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Byte offset of the first invalid UTF-8 sequence in `bytes`, or -1 when it is valid (RFC 3629: no overlongs, no surrogates, ≤ U+10FFFF). */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  const n = bytes.length;
  while (i < n) {
    const b = bytes[i] as number;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    let cp: number;
    if (b >= 0xc2 && b <= 0xdf) [need, min, cp] = [1, 0x80, b & 0x1f];
    else if (b >= 0xe0 && b <= 0xef) [need, min, cp] = [2, 0x800, b & 0x0f];
    else if (b >= 0xf0 && b <= 0xf4) [need, min, cp] = [3, 0x10000, b & 0x07];
    else return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}

/** 1-based line of byte `offset` (count of LF bytes before it, plus 1). */
function lineAt(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
  return line;
}

export interface ReadTextOptions {
  /** Largest accepted size, bytes; no limit when absent. */
  maxBytes?: number;
  /** Name of the option that raises the limit, for the message (e.g. `--max-card-bytes`). */
  limitOption?: string;
  /** Who set the limit, for the message ("the default", "set by --max-card-bytes"). */
  limitSource?: string;
  /** The message when the file does not exist (default: "cannot read the file (ENOENT)"). */
  missing?: string;
}

/**
 * Reads `file` as strict UTF-8 text (BOM removed). Returns the text, or the
 * issue that prevents reading it (see the module comment).
 */
export async function readTextFile(file: string, options: ReadTextOptions = {}): Promise<{ text: string } | { issue: DataIssue }> {
  let st;
  try {
    st = await stat(file); // follows symlinks: a link to a directory is a directory
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const hint = code === "ENOENT" ? didYouMeanFile(file) : "";
    if (code === "ENOENT" && options.missing !== undefined) return { issue: { file, message: `${options.missing}${hint}` } };
    return { issue: { file, message: `cannot read the file (${code ?? (e as Error).message})${hint}` } };
  }
  if (!st.isFile()) return { issue: notRegular(file, st) };
  if (options.maxBytes !== undefined && st.size > options.maxBytes) {
    const raise = options.limitOption !== undefined ? `; raise the limit with ${options.limitOption}` : "";
    const source = options.limitSource !== undefined ? ` (${options.limitSource})` : "";
    return { issue: { file, message: `the file is ${st.size} bytes, over the limit of ${options.maxBytes} bytes${source}${raise}` } };
  }
  const fh = await open(file, "r");
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await fh.readFile());
  } finally {
    await fh.close();
  }
  return decodeStrict(file, bytes);
}

/** The bytes of `file` as text under the module's rules (BOM removed, strict UTF-8), or the issue naming the offset and line. */
function decodeStrict(file: string, bytes: Uint8Array): { text: string } | { issue: DataIssue } {
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const body = bytes.subarray(bom);
  const bad = firstInvalidUtf8(body);
  if (bad >= 0) {
    const at = bad + bom;
    return {
      issue: {
        file,
        line: lineAt(bytes, at),
        message: `invalid UTF-8 at byte offset ${at} (byte 0x${(bytes[at] as number).toString(16).padStart(2, "0")}); save the file as UTF-8`,
      },
    };
  }
  return { text: decoder.decode(body) };
}

/** `readTextFileOrThrow` for synchronous callers (the analyzer config file of src/retrieval/analyzer.ts); no size limit. */
export function readTextFileSyncOrThrow(file: string): string {
  let st: Stats;
  try {
    st = statSync(file);
  } catch (e) {
    throw new DataValidationError([{ file, message: `cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` }]);
  }
  if (!st.isFile()) throw new DataValidationError([notRegular(file, st)]);
  const r = decodeStrict(file, new Uint8Array(readFileSync(file)));
  if ("issue" in r) throw new DataValidationError([r.issue]);
  return r.text;
}

/** `readTextFile`, throwing a DataValidationError (exit 2) with the issue. */
export async function readTextFileOrThrow(file: string, options: ReadTextOptions = {}): Promise<string> {
  const r = await readTextFile(file, options);
  if ("issue" in r) throw new DataValidationError([r.issue]);
  return r.text;
}

function notRegular(file: string, st: Stats): DataIssue {
  return { file, message: `expected a regular text file, got ${st.isDirectory() ? "a directory" : "not a regular file"}` };
}

/** `readTextFileOrThrow`, but null when the file does not exist (an optional input such as a split file). */
export async function readTextFileIfExists(file: string, options: ReadTextOptions = {}): Promise<string | null> {
  try {
    await stat(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
  }
  return readTextFileOrThrow(file, options);
}

/** Length of an incomplete UTF-8 sequence at the end of `b` (0 to 3 bytes): a file whose last character is cut short. */
function incompleteTail(b: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, b.length); back++) {
    const x = b[b.length - back] as number;
    if ((x & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = x >= 0xf0 ? 4 : x >= 0xe0 ? 3 : x >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/**
 * The bytes forEachTextLine and forEachTextBlock read: `source` when given,
 * stdin for `-`, else `file` (a regular file, checked first: a DataValidationError
 * naming it otherwise), its bytes [start, end) when `range` is set; null for an
 * empty range.
 */
async function openTextBytes(
  file: string,
  range?: { start: number; end: number },
  source?: AsyncIterable<Buffer>,
): Promise<AsyncIterable<Buffer> | null> {
  if (file !== "-" && source === undefined) {
    const r = await stat(file).catch((e: NodeJS.ErrnoException) => e);
    if (r instanceof Error) {
      const missing = (r as NodeJS.ErrnoException).code === "ENOENT";
      throw new DataValidationError([
        {
          file,
          message: `cannot read the file (${missing ? "no such file" : ((r as NodeJS.ErrnoException).code ?? r.message)})${missing ? didYouMeanFile(file) : ""}`,
        },
      ]);
    }
    if (!r.isFile()) throw new DataValidationError([notRegular(file, r)]);
  }
  if (range !== undefined && range.end <= range.start) return null;
  if (source !== undefined) return source;
  if (file === "-") return process.stdin;
  return createReadStream(file, {
    highWaterMark: 1 << 20,
    ...(range !== undefined ? { start: range.start, end: range.end - 1 } : {}),
  });
}

/**
 * The UTF-8 rules of forEachTextLine and forEachTextBlock for one read of
 * `file` starting at `offset`: `check` validates `bytes` (whole lines, LFs
 * included, or the file's last line) read at file offset `at` from line
 * `from`; `bom` gives the length of a BOM (3) when `bytes` are the file's
 * first bytes and begin with one, else 0 (asked once per read).
 */
function utf8Rules(file: string, offset: number) {
  let first = offset === 0;
  return {
    check(bytes: Uint8Array, at: number, from: number, atEnd: boolean): void {
      if (isUtf8(bytes)) return;
      const bad = firstInvalidUtf8(bytes);
      if (bad < 0) return;
      const tail = atEnd ? incompleteTail(bytes) : 0;
      const cutShort = tail > 0 && bad >= bytes.length - tail ? ": a sequence cut short by the end of the file" : "";
      throw new DataValidationError([
        {
          file,
          line: from + lineAt(bytes, bad) - 1,
          message: `invalid UTF-8 at byte offset ${at + bad} (byte 0x${(bytes[bad] as number).toString(16).padStart(2, "0")}${cutShort}); save the file as UTF-8`,
        },
      ]);
    },
    bom(bytes: Uint8Array): number {
      if (!first) return 0;
      first = false;
      return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
    },
  };
}

/** A read that failed past the checks (EIO, EISDIR from stdin...) as the DataValidationError naming the file; a DataValidationError as it is. */
function readFailure(file: string, e: unknown): DataValidationError {
  if (e instanceof DataValidationError) return e;
  return new DataValidationError([
    { file, message: `cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` },
  ]);
}

/**
 * Streams `file` (or stdin for `-`) line by line into `onLine` under the
 * rules of readTextFile: a regular file (stdin excepted), strict UTF-8 (an
 * invalid sequence is a DataValidationError naming the byte offset and the
 * line), a leading BOM removed; lines split on LF (a CR before it is left to
 * the caller, as readTextFile's callers split on /\r?\n/). Holds one chunk
 * (and a line longer than one) in memory; each line is decoded from its own
 * bytes, cut at LF bytes (bench/traces.bench.ts). Stops early when `stop()`
 * says so. `range` reads only the bytes [start, end) of a file (a part of it
 * another thread does not read; src/eval/traces/read.ts): a BOM is looked
 * for only at offset 0, and lines are numbered from 1 at `start`. `source`:
 * the bytes to read instead of opening `file` (then only named in messages:
 * a decompressed stream, src/eval/traces/records.ts).
 * @throws DataValidationError (exit 2) naming the file.
 */
export async function forEachTextLine(
  file: string,
  onLine: (line: string) => void,
  stop: () => boolean = () => false,
  range?: { start: number; end: number },
  source?: AsyncIterable<Buffer>,
): Promise<void> {
  const stream = await openTextBytes(file, range, source);
  if (stream === null) return;
  // Lines are cut at LF bytes (never inside a UTF-8 sequence) and each decoded on its own: decoding the chunk and slicing the text cost four times as much on 17 KB lines (docs/recorded-traces.md, "Scale").
  let parts: Buffer[] = []; // the current line's bytes so far, its LF not yet read
  let offset = range?.start ?? 0; // file offset of the current line's first byte
  let line = 1; // its number
  const { check, bom } = utf8Rules(file, offset);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let nl = chunk.indexOf(0x0a);
      if (nl === -1) {
        parts.push(chunk);
        continue;
      }
      // The line begun in earlier chunks (or at this one's start), up to its LF.
      const head = parts.length === 0 ? chunk.subarray(0, nl + 1) : Buffer.concat([...parts, chunk.subarray(0, nl + 1)]);
      parts = [];
      const skip = bom(head);
      check(head.subarray(skip), offset + skip, line, false);
      onLine(head.toString("utf8", skip, head.length - 1));
      offset += head.length;
      line++;
      // The whole lines after it, checked at once, then each decoded.
      const lastNl = chunk.lastIndexOf(0x0a);
      if (lastNl > nl) {
        check(chunk.subarray(nl + 1, lastNl + 1), offset, line, false);
        let start = nl + 1;
        nl = chunk.indexOf(0x0a, start);
        while (nl !== -1 && nl <= lastNl) {
          onLine(chunk.toString("utf8", start, nl));
          offset += nl + 1 - start;
          line++;
          start = nl + 1;
          nl = chunk.indexOf(0x0a, start);
        }
      }
      if (lastNl + 1 < chunk.length) parts.push(chunk.subarray(lastNl + 1));
      if (stop()) {
        if (file !== "-" && source === undefined) (stream as Readable).destroy(); // the file this read opened
        return;
      }
    }
  } catch (e) {
    throw readFailure(file, e);
  }
  if (parts.length === 0) return;
  // The last line, with no LF after it.
  const last = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  const skip = bom(last);
  check(last.subarray(skip), offset + skip, line, true);
  if (last.length > skip) onLine(last.toString("utf8", skip));
}

/**
 * forEachTextLine's rules (a regular file or stdin, strict UTF-8 checked a
 * chunk at a time, a leading BOM removed) with the text handed over as bytes
 * in blocks of whole lines, never decoded: `onBlock(bytes, start, end)` gets
 * `bytes[start, end)`, one or more lines each ending with LF (the file's last
 * line may lack it), in file order; a line is never split between blocks. It
 * returns how many lines the block held (the line numbers of UTF-8 errors).
 * For a parser that reads fields byte by byte (`retrace score`'s run reader,
 * src/eval/ir/trec/compact.ts). `bytes` is only valid during the call.
 * `range` reads only the bytes [start, end) of a file, as forEachTextLine's.
 * @throws DataValidationError (exit 2) naming the file.
 */
export async function forEachTextBlock(
  file: string,
  onBlock: (bytes: Buffer, start: number, end: number) => number,
  stop: () => boolean = () => false,
  range?: { start: number; end: number },
): Promise<void> {
  const stream = await openTextBytes(file, range);
  if (stream === null) return;
  let parts: Buffer[] = [];
  let offset = range?.start ?? 0;
  let line = 1;
  const { check, bom } = utf8Rules(file, offset);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const lastNl = chunk.lastIndexOf(0x0a);
      if (lastNl === -1) {
        parts.push(chunk);
        continue;
      }
      // Whole lines: what was left over, then this chunk up to its last LF.
      const block = parts.length === 0 ? chunk.subarray(0, lastNl + 1) : Buffer.concat([...parts, chunk.subarray(0, lastNl + 1)]);
      parts = [];
      const skip = bom(block);
      check(block.subarray(skip), offset + skip, line, false);
      line += onBlock(block, skip, block.length);
      offset += block.length;
      if (lastNl + 1 < chunk.length) parts.push(chunk.subarray(lastNl + 1));
      if (stop()) {
        if (file !== "-") (stream as Readable).destroy(); // the file this read opened
        return;
      }
    }
  } catch (e) {
    throw readFailure(file, e);
  }
  if (parts.length === 0) return;
  const last = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
  const skip = bom(last);
  check(last.subarray(skip), offset + skip, line, true);
  if (last.length > skip) void onBlock(last, skip, last.length);
}

/** The offset just after the first LF at or after `from` (a line's start), or null when the file has none there: where a second thread starts reading a large file (src/eval/traces/read.ts, src/eval/ir/trec/compact.ts). */
export function lineStartFrom(file: string, from: number): number | null {
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.alloc(1 << 16);
    for (let at = from; ; at += buf.length) {
      const n = readSync(fd, buf, 0, buf.length, at);
      if (n === 0) return null;
      const i = buf.subarray(0, n).indexOf(0x0a);
      if (i >= 0) return at + i + 1;
    }
  } finally {
    closeSync(fd);
  }
}
