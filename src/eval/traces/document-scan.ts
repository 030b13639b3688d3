/**
 * The fast path of reading one JSON document (./records.ts; docs/recorded-traces.md,
 * "Files and formats", "Scale"): a byte scanner that finds where each record
 * of the document begins and ends — each element of a top-level array, each
 * span of an OTLP document (`resourceSpans[].scopeSpans[].spans[]`, with its
 * resource and scope), any other top-level value whole — and hands each
 * record's bytes to `JSON.parse`, so that a pretty-printed export costs about
 * 1.3 times its JSON Lines instead of about 2 (a token-by-token parse). Memory holds
 * one record's bytes at a time, as the token parser's path does.
 *
 * It names no syntax error itself: on anything it does not expect (a record
 * that is not valid JSON, invalid UTF-8, a structure that is not JSON, the
 * input ending inside a value) it stops with `ScanFailure`, and the caller
 * reads the input again through the streaming token parser
 * (`@streamparser/json`), which names file, line and column and what was
 * expected. The records handed on before the failure are the ones that
 * parser hands on before its error, in the same order.
 */
import { isUtf8 } from "node:buffer";

/** The largest record the scanner gathers, bytes: a larger one is read by the token parser. */
export const MAX_RECORD_BYTES = 256 * 1024 * 1024;

/** The scanner met something it does not read: the caller reads the input again with the token parser. */
export class ScanFailure extends Error {}

/** One record: its parsed value, the line its first byte is on, its index in a top-level array. */
export type ScannedRecord = { value: unknown; line: number; index?: number };

const [QUOTE, BACKSLASH, LF, LBRACE, RBRACE, LBRACKET, RBRACKET, COMMA, COLON] = [
  0x22, 0x5c, 0x0a, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a,
];

/** Inside a record, outside strings: 1 for the bytes that matter (quote, brackets), 2 for a line break, 0 for the rest. */
const STOP = new Uint8Array(256);
for (const b of [QUOTE, LBRACE, RBRACE, LBRACKET, RBRACKET]) STOP[b] = 1;
STOP[LF] = 2;

/** A container open around the scan position. */
interface Frame {
  array: boolean;
  /** Objects: the key of the value being read (only kept where a path is followed), and whether a key comes next. */
  key: string | null;
  expectKey: boolean;
  /** Arrays: the index of the element being read. */
  index: number;
  /** The path this container is at, as far as it matters: "root-array", "otlp", "rs" (a resourceSpans element), "ss" (a scopeSpans element), "rs-list", "ss-list", "spans", or "" (not followed). */
  role: string;
}

/**
 * Scans `chunks` (the document's bytes, in order) and calls `onRecord` for
 * each record. @throws ScanFailure (see the module comment); whatever
 * `onRecord` throws.
 */
export async function scanDocument(
  chunks: AsyncIterable<Buffer>,
  onRecord: (r: ScannedRecord) => void,
): Promise<number> {
  const stack: Frame[] = [];
  let line = 1;
  let inString = false;
  let escaped = false;
  // The value being captured (a record, a resource, a scope, a key): its bytes so far, the depth it began at, its line.
  let capture: Buffer[] | null = null;
  let captureStart = 0; // offset in the current chunk where the capture's bytes begin
  let captureDepth = -1;
  let captureLine = 0;
  let captureKind: "record" | "resource" | "scope" | "key" | null = null;
  let captureIndex: number | undefined;
  let resource: unknown;
  let scope: unknown;
  let records = 0;
  let topLevelValues = 0;
  let topLine = 0;
  // Between values: a scalar at a followed level is skipped byte by byte (outside strings it ends at , ] } or whitespace).
  const parse = (bytes: Buffer): unknown => {
    if (!isUtf8(bytes)) throw new ScanFailure("invalid UTF-8");
    try {
      return JSON.parse(bytes.toString("utf8")) as unknown;
    } catch {
      // Not JSON, or longer than a string can be: the token parser reads it.
      throw new ScanFailure("a value that is not JSON");
    }
  };
  let capturedBytes = 0;
  const finishCapture = (bytes: Buffer) => {
    const kind = captureKind;
    captureKind = null;
    capturedBytes = 0;
    capture = null;
    captureDepth = -1;
    if (kind === "key") {
      const top = stack[stack.length - 1]!;
      top.key = parse(bytes) as string;
      return;
    }
    const value = parse(bytes);
    if (kind === "resource") resource = value;
    else if (kind === "scope") scope = value;
    else {
      records++;
      const top = stack[stack.length - 1];
      if (top?.role === "spans")
        onRecord({
          value: {
            resourceSpans: [
              {
                ...(resource !== undefined ? { resource } : {}),
                scopeSpans: [{ ...(scope !== undefined ? { scope } : {}), spans: [value] }],
              },
            ],
          },
          line: captureLine,
        });
      else onRecord({ value, line: captureLine, ...(captureIndex !== undefined ? { index: captureIndex } : {}) });
    }
  };
  /** What a value opening at the top of `stack` is: a record, a resource, a scope, or nothing to capture. */
  const captureFor = (): { kind: "record" | "resource" | "scope"; index?: number } | null => {
    const top = stack[stack.length - 1];
    if (top === undefined) return null; // a top-level value: decided by its first byte
    if (top.role === "root-array" || top.role === "spans")
      return { kind: "record", index: top.role === "root-array" ? top.index : undefined };
    if (top.role === "rs" && top.key === "resource") return { kind: "resource" };
    if (top.role === "ss" && top.key === "scope") return { kind: "scope" };
    return null;
  };
  /** The role of a container opening at the top of `stack` (not captured). */
  const roleFor = (array: boolean): string => {
    const top = stack[stack.length - 1];
    if (top === undefined) return array ? "root-array" : "top";
    if (top.role === "otlp" && top.key === "resourceSpans" && array) return "rs-list";
    if (top.role === "rs-list" && !array) return "rs";
    if (top.role === "rs" && top.key === "scopeSpans" && array) return "ss-list";
    if (top.role === "ss-list" && !array) return "ss";
    if (top.role === "ss" && top.key === "spans" && array) return "spans";
    return "";
  };
  // Within a followed container: after a value, a comma or the closing bracket; after a comma, a value (or a key).
  let afterValue = false;
  for await (const chunk of chunks) {
    let i = 0;
    // The next backslash at or after the scan position (-1: none left in this chunk; -2: not looked for yet), kept so that a string with none does not scan the rest of the chunk again.
    let backslash = -2;
    const n = chunk.length;
    if (capture !== null) captureStart = 0;
    while (i < n) {
      if (inString) {
        if (escaped) {
          escaped = false;
          i++;
          continue;
        }
        // Jump to the next quote or backslash (an escape: its pair skipped, maybe into the next chunk).
        const q = chunk.indexOf(QUOTE, i);
        if (backslash !== -1 && backslash < i) backslash = chunk.indexOf(BACKSLASH, i);
        const b = backslash;
        if (b !== -1 && (q === -1 || b < q)) {
          i = b + 2;
          if (i > n) {
            escaped = true;
            i = n;
          }
          continue;
        }
        if (q === -1) {
          if (capture === null && chunk.indexOf(LF, i) !== -1) throw new ScanFailure("a line break inside a string");
          i = n;
          continue;
        }
        if (capture === null) {
          const lf = chunk.indexOf(LF, i);
          if (lf !== -1 && lf < q) throw new ScanFailure("a line break inside a string");
        }
        inString = false;
        i = q + 1;
        if (captureKind === "key" && captureDepth === stack.length) {
          const bytes: Buffer =
            capture!.length === 0
              ? chunk.subarray(captureStart, i)
              : Buffer.concat([...capture!, chunk.subarray(captureStart, i)]);
          finishCapture(bytes);
          afterValue = true;
          const top = stack[stack.length - 1]!;
          if (top.role === "top") {
            if (top.key === "resourceSpans") top.role = "otlp";
            else {
              // Not an OTLP export: the whole object is one record, its bytes so far being "{" and this key.
              top.role = "";
              captureKind = "record";
              captureIndex = undefined;
              capture = [Buffer.from("{"), Buffer.from(bytes)];
              captureStart = i;
              captureDepth = 0;
              captureLine = topLine;
            }
          }
        } else if (capture === null) afterValue = true;
        continue;
      }
      if (capture !== null) {
        // Inside a record: only quotes, brackets and line breaks matter; skip the rest (indentation, mostly) in a tight loop.
        while (i < n) {
          const d = chunk[i]!;
          const k = STOP[d]!;
          if (k === 1) break;
          if (k === 2) line++;
          i++;
        }
        if (i === n) break;
      }
      const c = chunk[i]!;
      if (c === QUOTE) {
        inString = true;
        if (capture === null) {
          const top = stack[stack.length - 1];
          if (top !== undefined && !top.array && top.expectKey) {
            if (afterValue) throw new ScanFailure("a key where a comma was expected");
            if (top.role !== "") {
              captureKind = "key";
              capture = [];
              captureStart = i;
              captureDepth = stack.length;
            }
            top.expectKey = false;
          } else {
            if (afterValue) throw new ScanFailure("a value where a comma was expected");
            if (stack.length === 0) throw new ScanFailure("a top-level string");
            const what = captureFor();
            if (what !== null) throw new ScanFailure("a record that is a string");
          }
        }
        i++;
        continue;
      }
      if (c === LBRACE || c === LBRACKET) {
        const array = c === LBRACKET;
        if (capture === null) {
          if (afterValue) throw new ScanFailure("a value where a comma was expected");
          const top = stack[stack.length - 1];
          if (top !== undefined && !top.array && top.expectKey)
            throw new ScanFailure("a value where a key was expected");
          const what = captureFor();
          if (what !== null) {
            captureKind = what.kind;
            captureIndex = what.index;
            capture = [];
            captureStart = i;
            captureDepth = stack.length;
            captureLine = line;
          } else if (stack.length === 0) {
            topLevelValues++;
            if (!array) topLine = line; // a top-level object: decided at its first key (roleFor: "top")
          }
        }
        stack.push({ array, key: null, expectKey: !array, index: 0, role: capture !== null ? "" : roleFor(array) });
        afterValue = false;
        i++;
        continue;
      }
      if (c === RBRACE || c === RBRACKET) {
        const top = stack.pop();
        if (top === undefined || top.array !== (c === RBRACKET))
          throw new ScanFailure("a closing bracket that closes nothing open");
        i++;
        if (capture !== null && captureDepth === stack.length) {
          const bytes: Buffer =
            capture.length === 0
              ? chunk.subarray(captureStart, i)
              : Buffer.concat([...capture, chunk.subarray(captureStart, i)]);
          finishCapture(bytes);
        }
        if (capture === null) {
          const outer = stack[stack.length - 1];
          if (outer !== undefined && !outer.array) outer.key = null;
          if (top.role === "rs") resource = undefined;
          if (top.role === "ss") scope = undefined;
          if (top.role === "top") {
            records++;
            onRecord({ value: {}, line: topLine });
          }
        }
        afterValue = stack.length > 0;
        continue;
      }
      if (capture !== null) {
        if (c === LF) line++;
        i++;
        continue;
      }
      if (c === COMMA) {
        const top = stack[stack.length - 1];
        if (top === undefined || !afterValue) throw new ScanFailure("a comma out of place");
        if (top.array) top.index++;
        else top.expectKey = true;
        afterValue = false;
        i++;
        continue;
      }
      if (c === COLON) {
        const top = stack[stack.length - 1];
        if (top === undefined || top.array || top.expectKey || !afterValue)
          throw new ScanFailure("a colon out of place");
        afterValue = false;
        i++;
        continue;
      }
      if (c === LF) {
        line++;
        i++;
        continue;
      }
      if (c === 0x20 || c === 0x09 || c === 0x0d) {
        i++;
        continue;
      }
      // A scalar (number, true, false, null) where nothing is captured: skipped, but never as a record or at the top level.
      if (stack.length === 0 || captureFor() !== null) throw new ScanFailure("a scalar where a record was expected");
      const top = stack[stack.length - 1]!;
      if (!top.array && top.expectKey) throw new ScanFailure("a scalar where a key was expected");
      if (afterValue) throw new ScanFailure("a value where a comma was expected");
      let j = i;
      while (j < n && /[-+.0-9a-zA-Z]/.test(String.fromCharCode(chunk[j]!))) j++;
      if (j === n) throw new ScanFailure("a scalar cut by a chunk"); // rare: read again by the token parser
      afterValue = true;
      i = j;
    }
    if (capture !== null) {
      (capture as Buffer[]).push(chunk.subarray(captureStart));
      capturedBytes += n - captureStart;
      // One record this large is left to the token parser (as it always was), not gathered into one string.
      if (capturedBytes > MAX_RECORD_BYTES) throw new ScanFailure("a record larger than MAX_RECORD_BYTES");
      captureStart = 0;
    } else capturedBytes = 0;
  }
  if (stack.length > 0 || inString || capture !== null) throw new ScanFailure("the input ended inside a value");
  if (topLevelValues === 0 && records === 0) throw new ScanFailure("no value");
  return records;
}
