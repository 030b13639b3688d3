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
import { printParseErrorCode, visit } from "jsonc-parser";
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

/** What the parser expected where it stopped (from jsonc-parser's events: the containers open and the last token). */
type Expecting = "value" | "value-or-]" | "key" | "key-or-}" | "colon" | "after-member" | "after-element" | "end";

/** The reason given for each expectation, completed with what came (`got '}'`). */
const EXPECTED: Record<Expecting, string> = {
  value: "expected a JSON value",
  "value-or-]": "expected a JSON value",
  key: "expected a property name in double quotes",
  "key-or-}": "expected a property name in double quotes",
  colon: "expected ':' after a property name",
  "after-member": "expected ',' or '}' after a property value",
  "after-element": "expected ',' or ']' after an array element",
  end: "unexpected",
};

/**
 * The first syntax error of `text` as JSON: its offset (UTF-16 code units)
 * and what was wrong; null when `text` is valid JSON. The text is parsed by
 * jsonc-parser (comments and trailing commas refused, as JSON.parse refuses
 * them), which says where a token went wrong; the reason is worded from
 * what the parser expected there, and an error inside a string or a number
 * is narrowed to the character at fault. Nesting deeper than MAX_JSON_DEPTH
 * is an error where it goes too deep (the parser recurses: it never sees
 * more than MAX_JSON_DEPTH levels).
 */
export function findJsonSyntaxError(text: string): { offset: number; reason: string } | null {
  const deep = tooDeepAt(text);
  const scanned = deep >= 0 ? text.slice(0, deep) : text;
  const shown = (at: number): string => {
    if (at >= text.length) return "the end of the input";
    const c = text.charCodeAt(at);
    return c < 0x20 || c === 0x7f ? `U+${c.toString(16).padStart(4, "0").toUpperCase()}` : `'${text[at]}'`;
  };
  const hex4 = (c: number) => `U+${c.toString(16).padStart(4, "0").toUpperCase()}`;
  // What comes next, kept from the parser's events (containers: true for an object).
  const open: boolean[] = [];
  let expecting: Expecting = "value";
  const valueDone = () => {
    const top = open.at(-1);
    expecting = top === undefined ? "end" : top ? "after-member" : "after-element";
  };
  let found: { offset: number; reason: string } | null = null;
  const at = (offset: number, reason: string) => {
    found ??= { offset, reason };
  };
  /** An error where a token starts: worded by what was expected there. */
  const structural = (offset: number) => {
    if (expecting === "end") return at(offset, `unexpected ${shown(offset)} after the JSON value`);
    if (expecting === "value" || expecting === "value-or-]") {
      const word = ["true", "false", "null"].find((w) => w[0] === text[offset]);
      if (word !== undefined) {
        let p = 0;
        while (p < word.length && text[offset + p] === word[p]) p++;
        if (p < word.length) return at(offset + p, `expected '${word}', got ${shown(offset + p)}`);
        valueDone();
        return structural(offset + p);
      }
      if (text[offset] === "-") return at(offset + 1, `expected a digit in a number, got ${shown(offset + 1)}`);
    }
    return at(offset, `${EXPECTED[expecting]}, got ${shown(offset)}`);
  };
  /** An error inside the string token at [offset, offset + length): the character at fault. */
  const inString = (offset: number, length: number) => {
    for (let i = offset + 1; i < offset + length; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x20) return at(i, `control character ${hex4(c)} in a string (write it escaped)`);
      if (c !== 0x5c) continue;
      const e = text[++i];
      if (e === "u") {
        for (let k = 1; k <= 4; k++)
          if (!/[0-9a-fA-F]/.test(text[i + k] ?? ""))
            return at(i + k, `expected 4 hex digits after \\u, got ${shown(i + k)}`);
        i += 4;
      } else if (e === undefined || !`"\\/bfnrt`.includes(e)) return at(i, `invalid escape \\${e ?? ""} in a string`);
    }
    // jsonc-parser ends a string at a line break: the break is the character at fault.
    const c = text.charCodeAt(offset + length);
    if (c < 0x20) return at(offset + length, `control character ${hex4(c)} in a string (write it escaped)`);
    return at(offset + length, "unterminated string, got the end of the input");
  };
  visit(
    scanned,
    {
      onObjectBegin: () => {
        open.push(true);
        expecting = "key-or-}";
      },
      onObjectProperty: () => {
        expecting = "colon";
      },
      // jsonc-parser also ends a container that was never closed (at the end of the input): only a real close counts.
      onObjectEnd: (offset) => {
        if (text[offset] !== "}") return;
        open.pop();
        valueDone();
      },
      onArrayBegin: () => {
        open.push(false);
        expecting = "value-or-]";
      },
      onArrayEnd: (offset) => {
        if (text[offset] !== "]") return;
        open.pop();
        valueDone();
      },
      onLiteralValue: () => valueDone(),
      onSeparator: (sep) => {
        expecting = sep === ":" ? "value" : open.at(-1) === true ? "key" : "value";
      },
      onError: (code, offset, length) => {
        if (found !== null) return;
        // A bad string or number where none may stand (`1 "x`): the token is the error, not what is inside it.
        if (expecting === "colon" || expecting === "after-member" || expecting === "after-element" || expecting === "end")
          return structural(offset);
        switch (printParseErrorCode(code)) {
          case "InvalidCharacter":
          case "InvalidUnicode":
          case "InvalidEscapeCharacter":
          case "UnexpectedEndOfString":
            return inString(offset, length);
          case "UnexpectedEndOfNumber": {
            if (expecting === "key" || expecting === "key-or-}") return structural(offset); // a number is no property name
            const end = offset + length;
            const last = text[end - 1];
            return at(end, `expected a digit ${last === "." ? "after the decimal point" : "in the exponent"}, got ${shown(end)}`);
          }
          default:
            return structural(offset);
        }
      },
    },
    { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false },
  );
  // An error where the scanned text was cut (before the too-deep bracket) is no error of the text: it goes on.
  const f = found as { offset: number; reason: string } | null;
  if (deep >= 0 && (f === null || f.offset >= scanned.length)) return { offset: deep, reason: TOO_DEEP };
  return f;
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
