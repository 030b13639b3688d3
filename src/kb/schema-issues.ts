/**
 * Turns zod validation issues into retrace's DataIssue form
 * (`file:line: field \`path\` message`), so every input format can be defined
 * once as a zod schema while errors keep naming file, line and field and
 * saying what was expected and what came (see docs/schema-versions.md).
 *
 * Message rules, per issue:
 * - an unknown key of a strict object: one issue per key, field = the key's
 *   path, message `unknown field; <schema message>` (the schema's `.strict()`
 *   message lists the allowed keys);
 * - a refinement (`code: "custom"`): the refinement's message, verbatim (it
 *   states the whole rule, e.g. `duplicate gold id "a"`);
 * - a missing value (the input holds `undefined` at the path):
 *   `missing required field; expected <expectation>`;
 * - anything else: `expected <expectation>, got <value>`, where the value is
 *   read from the input at the issue's path (JSON, cut at 80 characters).
 *
 * The expectation is the message the schema attached to that check, or, when
 * the schema attached none (zod's default English message), one derived
 * from the issue: `a string`, `"a" or "b"`, `1`, `at most 4 items`, ….
 */
import { defaultErrorMap, type ZodError, type ZodIssue } from "zod";
import type { DataIssue } from "../errors.js";

export type IssuePath = readonly (string | number)[];

/** Where the issues of one parsed value point: the file, and the line (fixed, or per field path). */
export interface IssueLocation {
  file: string;
  line?: number | ((path: IssuePath) => number | undefined);
}

/**
 * Dotted/bracketed field path: `["turns", 1, "must_cite_one_of", 0]` →
 * `turns[1].must_cite_one_of[0]`; `[]` → undefined (the whole value).
 */
export function fieldPath(path: IssuePath): string | undefined {
  if (path.length === 0) return undefined;
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out === "" ? p : `.${p}`;
  return out;
}

/** The value at `path` inside `input` (undefined when any step is missing). */
export function valueAt(input: unknown, path: IssuePath): unknown {
  let v = input;
  for (const p of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string | number, unknown>)[p];
  }
  return v;
}

/** A value as shown in a message: JSON (functions and undefined by name), cut at 80 characters. */
export function showValue(v: unknown): string {
  if (v === undefined) return "nothing";
  if (typeof v === "function") return "a function";
  if (typeof v === "number" && !Number.isFinite(v)) return String(v);
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = Object.prototype.toString.call(v);
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  integer: "an integer",
  boolean: "a boolean",
  object: "an object",
  array: "an array",
  null: "null",
  bigint: "a bigint",
  function: "a function",
};

/** What the check wanted, derived from an issue that carries zod's default message. */
function derivedExpectation(issue: ZodIssue): string {
  switch (issue.code) {
    case "invalid_type":
      // An enum's missing value comes as invalid_type with `'a' | 'b'`.
      return TYPE_NAMES[issue.expected] ?? issue.expected.split(" | ").map((o) => JSON.stringify(o.replace(/^'(.*)'$/, "$1"))).join(" or ");
    case "invalid_literal":
      return JSON.stringify(issue.expected);
    case "invalid_enum_value":
      return issue.options.map((o) => JSON.stringify(o)).join(" or ");
    case "too_small":
    case "too_big": {
      const n = Number(issue.code === "too_small" ? issue.minimum : issue.maximum);
      const cmp = issue.code === "too_small" ? (issue.exact ? "exactly" : issue.inclusive ? "at least" : "more than") : issue.exact ? "exactly" : issue.inclusive ? "at most" : "fewer than";
      if (issue.type === "array" || issue.type === "set") return `an array of ${cmp} ${n} item${n === 1 ? "" : "s"}`;
      if (issue.type === "string") return issue.code === "too_small" && n === 1 && issue.inclusive ? "a non-empty string" : `a string of ${cmp} ${n} characters`;
      const op = issue.code === "too_small" ? (issue.inclusive ? ">=" : ">") : issue.inclusive ? "<=" : "<";
      return `a number ${op} ${n}`;
    }
    case "not_finite":
      return "a finite number";
    case "not_multiple_of":
      return `a multiple of ${String(issue.multipleOf)}`;
    case "invalid_string":
      return typeof issue.validation === "string" ? `a valid ${issue.validation}` : "a valid string";
    case "invalid_union":
    case "invalid_union_discriminator":
      return "one of the allowed shapes";
    default:
      return issue.message;
  }
}

/** The schema's own message for the issue, or undefined when zod's default one is in place. */
function customMessage(issue: ZodIssue, input: unknown): string | undefined {
  const fallback = defaultErrorMap(issue, { data: valueAt(input, issue.path), defaultError: "" }).message;
  return issue.message === fallback ? undefined : issue.message;
}

/**
 * What the check behind `issue` expected: the schema's own message, else one
 * derived from the issue (`a string`, `"a" or "b"`, …). A refinement's
 * message is returned as it is.
 */
export function expectationOf(issue: ZodIssue, input: unknown): string {
  if (issue.code === "custom") return issue.message;
  return customMessage(issue, input) ?? derivedExpectation(issue);
}

/**
 * Map a ZodError (from `schema.safeParse(input)`) to DataIssues at `where`,
 * in zod's issue order. Pure; see the module comment for the message rules.
 */
export function zodIssuesToDataIssues(error: ZodError, input: unknown, where: IssueLocation): DataIssue[] {
  const out: DataIssue[] = [];
  const push = (path: IssuePath, message: string) => {
    const issue: DataIssue = { file: where.file, message };
    const line = typeof where.line === "function" ? where.line(path) : where.line;
    if (line !== undefined) issue.line = line;
    const field = fieldPath(path);
    if (field !== undefined) issue.field = field;
    out.push(issue);
  };
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      const custom = customMessage(issue, input);
      for (const key of issue.keys) push([...issue.path, key], custom === undefined ? "unknown field" : `unknown field; ${custom}`);
      continue;
    }
    if (issue.code === "custom") {
      push(issue.path, issue.message);
      continue;
    }
    const expectation = expectationOf(issue, input);
    const value = valueAt(input, issue.path);
    push(issue.path, value === undefined ? `missing required field; expected ${expectation}` : `expected ${expectation}, got ${showValue(value)}`);
  }
  return out;
}

/**
 * Parse `input` with `schema`; on failure, the DataIssues (and no value).
 * The schema-level counterpart of the hand-written checks it replaces.
 */
export function parseWithSchema<T>(
  schema: { safeParse(x: unknown): { success: true; data: T } | { success: false; error: ZodError } },
  input: unknown,
  where: IssueLocation,
): { data: T; issues: [] } | { data?: undefined; issues: DataIssue[] } {
  const r = schema.safeParse(input);
  return r.success ? { data: r.data, issues: [] } : { issues: zodIssuesToDataIssues(r.error, input, where) };
}
