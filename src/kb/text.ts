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
 */
import { open, stat } from "node:fs/promises";
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
    return { issue: { file, message: `cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` } };
  }
  if (!st.isFile()) {
    const kind = st.isDirectory() ? "a directory" : "not a regular file";
    return { issue: { file, message: `expected a regular text file, got ${kind}` } };
  }
  if (options.maxBytes !== undefined && st.size > options.maxBytes) {
    const raise = options.limitOption !== undefined ? `; raise the limit with ${options.limitOption}` : "";
    return { issue: { file, message: `the file is ${st.size} bytes, over the limit of ${options.maxBytes} bytes${raise}` } };
  }
  const fh = await open(file, "r");
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await fh.readFile());
  } finally {
    await fh.close();
  }
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

/** `readTextFile`, throwing a DataValidationError (exit 2) with the issue. */
export async function readTextFileOrThrow(file: string, options: ReadTextOptions = {}): Promise<string> {
  const r = await readTextFile(file, options);
  if ("issue" in r) throw new DataValidationError([r.issue]);
  return r.text;
}
