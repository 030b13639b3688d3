/**
 * The one JSON reader of every JSON input retrace reads (reports,
 * baselines, shard reports, config and analyzer files, split files,
 * `--configurable` files, LangSmith exports, case lines): docs/reliability.md,
 * "One text loader for every input file". JSON.parse says where it failed
 * as a character position at best (`in JSON at position 10482`), or quotes
 * the text; here a syntax error is a DataIssue naming the file, the line
 * and the column (1-based) and what was wrong there:
 *
 *     baseline.json:12:5: malformed JSON (expected ',' or '}' after a property value, got '"'); expected a retrace baseline JSON file
 *
 * A JSON line of a JSONL file keeps its line number; the column is within
 * that line.
 */
import { DataValidationError, type DataIssue } from "../errors.js";
import { readTextFileOrThrow, type ReadTextOptions } from "./text.js";

/** Where a JSON text came from and what it should have been (for the message). */
export interface JsonSource {
  file: string;
  /** The 1-based line of a JSONL file the text is (columns are then within it); absent for a whole file. */
  line?: number;
  /** What the file should hold, completing `expected …` (`a retrace report JSON file`). */
  expected: string;
}

/**
 * The deepest nesting of arrays and objects retrace reads (docs/reliability.md):
 * deeper JSON is exit 2 naming file, line and column — never a stack
 * overflow in the code that reads the value (or in this file's scanner).
 */
export const MAX_JSON_DEPTH = 512;

/** The reason given for JSON nested deeper than MAX_JSON_DEPTH. */
export const TOO_DEEP = `nested too deeply (more than ${MAX_JSON_DEPTH} levels of arrays and objects)`;

/**
 * The offset of the first `[` or `{` of `text` that opens level
 * MAX_JSON_DEPTH + 1 (outside strings), or -1 when none does: one pass, no
 * recursion.
 */
export function tooDeepAt(text: string): number {
  if (text.length <= MAX_JSON_DEPTH) return -1;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return -1;
}

/**
 * Whether the value `v` nests arrays and objects deeper than
 * MAX_JSON_DEPTH (a `run.configurable` given as an object): iterative, so
 * any depth is measured without overflowing the stack. Shared values are
 * visited once; a cycle counts as too deep.
 */
export function valueTooDeep(v: unknown): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value: v, depth: 0 }];
  const open = new Set<unknown>();
  while (stack.length > 0) {
    const { value, depth } = stack.pop() as { value: unknown; depth: number };
    if (typeof value !== "object" || value === null) continue;
    if (depth >= MAX_JSON_DEPTH || open.has(value)) return true;
    open.add(value);
    for (const child of Array.isArray(value) ? value : Object.values(value as Record<string, unknown>))
      if (typeof child === "object" && child !== null) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}

/** The first syntax error of `text` as JSON: its offset (UTF-16 code units) and what was wrong; null when `text` is valid JSON. */
export function findJsonSyntaxError(text: string): { offset: number; reason: string } | null {
  let i = 0;
  const shown = (): string => {
    if (i >= text.length) return "the end of the input";
    const c = text.charCodeAt(i);
    return c < 0x20 || c === 0x7f ? `U+${c.toString(16).padStart(4, "0").toUpperCase()}` : `'${text[i]}'`;
  };
  class Stop extends Error {}
  let found: { offset: number; reason: string } | null = null;
  const fail = (reason: string): never => {
    found = { offset: i, reason };
    throw new Stop();
  };
  const ws = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++;
  };
  const literal = (word: string) => {
    for (const c of word) {
      if (text[i] !== c) fail(`expected '${word}', got ${shown()}`);
      i++;
    }
  };
  const string = () => {
    i++; // the opening quote
    for (;;) {
      if (i >= text.length) fail("unterminated string, got the end of the input");
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c < 0x20) fail(`control character U+${c.toString(16).padStart(4, "0").toUpperCase()} in a string (write it escaped)`);
      if (c === 0x5c) {
        i++;
        const e = text[i];
        if (e === "u") {
          for (let k = 1; k <= 4; k++)
            if (!/[0-9a-fA-F]/.test(text[i + k] ?? "")) {
              i += k;
              fail(`expected 4 hex digits after \\u, got ${shown()}`);
            }
          i += 5;
        } else if (e !== undefined && `"\\/bfnrt`.includes(e)) i++;
        else fail(`invalid escape \\${e ?? ""} in a string`);
      } else i++;
    }
  };
  const digits = (what: string) => {
    if (!/[0-9]/.test(text[i] ?? "")) fail(`expected a digit ${what}, got ${shown()}`);
    while (/[0-9]/.test(text[i] ?? "")) i++;
  };
  const number = () => {
    if (text[i] === "-") i++;
    if (text[i] === "0") i++;
    else digits("in a number");
    if (text[i] === ".") {
      i++;
      digits("after the decimal point");
    }
    if (text[i] === "e" || text[i] === "E") {
      i++;
      if (text[i] === "+" || text[i] === "-") i++;
      digits("in the exponent");
    }
  };
  const value = (depth: number): void => {
    if (depth >= MAX_JSON_DEPTH) fail(TOO_DEEP); // bounded recursion: never a stack overflow
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      ws();
      if (text[i] === "}") {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`expected a property name in double quotes, got ${shown()}`);
        string();
        ws();
        if (text[i] !== ":") fail(`expected ':' after a property name, got ${shown()}`);
        i++;
        value(depth + 1);
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return;
        }
        fail(`expected ',' or '}' after a property value, got ${shown()}`);
      }
    }
    if (c === "[") {
      i++;
      ws();
      if (text[i] === "]") {
        i++;
        return;
      }
      for (;;) {
        value(depth + 1);
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return;
        }
        fail(`expected ',' or ']' after an array element, got ${shown()}`);
      }
    }
    if (c === '"') return string();
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return number();
    if (c === "t") return literal("true");
    if (c === "f") return literal("false");
    if (c === "n") return literal("null");
    fail(`expected a JSON value, got ${shown()}`);
  };
  try {
    value(0);
    ws();
    if (i < text.length) fail(`unexpected ${shown()} after the JSON value`);
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
  }
  return found;
}

/** The 1-based line and column of `offset` in `text` (lines split at `\n`; a `\r` before it belongs to the line). */
export function lineColumnOf(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let k = text.indexOf("\n"); k !== -1 && k < offset; k = text.indexOf("\n", k + 1)) {
    line++;
    start = k + 1;
  }
  return { line, column: offset - start + 1 };
}

/** The DataIssue of `text`, which JSON.parse refused with `error`: file, line and column of the first syntax error. */
export function jsonSyntaxIssue(text: string, error: unknown, source: JsonSource): DataIssue {
  const at = findJsonSyntaxError(text);
  if (at === null) return { file: source.file, ...(source.line !== undefined ? { line: source.line } : {}), message: `malformed JSON (${(error as Error).message}); expected ${source.expected}` };
  const { line, column } = lineColumnOf(text, at.offset);
  return { file: source.file, line: (source.line ?? 1) + line - 1, column, message: `malformed JSON (${at.reason}); expected ${source.expected}` };
}

/** `text` parsed as JSON, or the issue naming file, line and column of its first syntax error. */
export function parseJsonOrIssue(text: string, source: JsonSource): { value: unknown } | { issue: DataIssue } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { issue: jsonSyntaxIssue(text, e, source) };
  }
  // Valid but deeper than anything retrace reads: refused where it goes too deep (every reader of the value recurses).
  const deep = typeof value === "object" && value !== null ? tooDeepAt(text) : -1;
  if (deep >= 0) {
    const { line, column } = lineColumnOf(text, deep);
    return {
      issue: { file: source.file, line: (source.line ?? 1) + line - 1, column, message: `${TOO_DEEP}; expected ${source.expected}` },
    };
  }
  return { value };
}

/** `text` parsed as JSON. @throws DataValidationError (exit 2) naming file, line and column of its first syntax error. */
export function parseJsonOrThrow(text: string, source: JsonSource): unknown {
  const r = parseJsonOrIssue(text, source);
  if ("issue" in r) throw new DataValidationError([r.issue]);
  return r.value;
}

/**
 * Reads `file` with the one text loader (strict UTF-8, BOM removed, a
 * regular file: src/kb/text.ts) and parses it as JSON.
 * @throws DataValidationError (exit 2) naming the file, and for a syntax error its line and column.
 */
export async function readJsonFileOrThrow(file: string, expected: string, options: ReadTextOptions = {}): Promise<unknown> {
  return parseJsonOrThrow(await readTextFileOrThrow(file, options), { file, expected });
}
