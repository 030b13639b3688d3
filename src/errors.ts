/**
 * Every error class of retrace. Each carries a string `code` from a closed
 * union, the exit code the CLI maps it to, and, where it applies, the
 * offending value. Errors are recognisable across copies of the package (two
 * installed versions, a bundled copy): each instance carries the
 * `Symbol.for("retrace.error")` marker, and `isRetraceError(e)` /
 * `X.isInstance(e)` check the marker and the `code`, never only
 * `instanceof`. Exit codes (docs/gates-and-exit-codes.md): 0 pass, 1 a gate
 * failed, 2 bad usage or invalid data (a missing optional peer dependency
 * included), 3 a required service or model is unavailable, 70 an internal
 * error (a bug).
 */

/** The global-registry symbol every retrace error carries (same symbol in every copy of the package). */
export const RETRACE_ERROR_MARKER: unique symbol = Symbol.for("retrace.error") as never;

export type RetraceErrorCode =
  | "INVALID_DATA"
  | "INVALID_ARGUMENT"
  | "SERVICE_UNAVAILABLE"
  | "MODEL_UNAVAILABLE"
  | "DIMENSION_MISMATCH"
  | "BASELINE_MISMATCH"
  | "NOT_MEASURED"
  | "INVALID_GRAPH"
  | "MISSING_PEER"
  | "INTERNAL";

/** Process exit code of each error code: 2 usage or data, 3 service or model unavailable, 70 internal. */
export const EXIT_CODE_OF: Readonly<Record<RetraceErrorCode, 2 | 3 | 70>> = {
  INVALID_DATA: 2,
  INVALID_ARGUMENT: 2,
  DIMENSION_MISMATCH: 2,
  BASELINE_MISMATCH: 2,
  NOT_MEASURED: 2,
  INVALID_GRAPH: 2,
  MISSING_PEER: 2,
  SERVICE_UNAVAILABLE: 3,
  MODEL_UNAVAILABLE: 3,
  INTERNAL: 70,
};

/** What `isRetraceError` guarantees about an error from any copy of retrace. */
export interface RetraceErrorLike extends Error {
  readonly code: RetraceErrorCode;
  readonly exitCode: 2 | 3 | 70;
  readonly [RETRACE_ERROR_MARKER]: true;
}

export abstract class RetraceError extends Error implements RetraceErrorLike {
  abstract readonly code: RetraceErrorCode;
  abstract readonly exitCode: 2 | 3 | 70;
  readonly [RETRACE_ERROR_MARKER] = true as const;
  /** Set on each concrete class: the `code` its instances carry (what `isInstance` matches). */
  static readonly CODE: RetraceErrorCode | undefined = undefined;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }

  /**
   * True when `e` is an error of this class from any copy of retrace: it
   * carries the `Symbol.for("retrace.error")` marker and (on a concrete
   * class) this class's `code`. `RetraceError.isInstance(e)` matches any
   * retrace error.
   */
  static isInstance<T extends RetraceError>(this: abstract new (...args: never[]) => T, e: unknown): e is T {
    if (!isRetraceError(e)) return false;
    const code = (this as unknown as { CODE?: RetraceErrorCode }).CODE;
    return code === undefined || e.code === code;
  }
}

/** One problem found in an input file: where it is and what was expected. */
export interface DataIssue {
  file: string;
  /** 1-based line number (JSONL and front matter); absent when the whole file is at fault. */
  line?: number;
  /** 1-based column within the line (a JSON syntax error, src/kb/json.ts); only with `line`. */
  column?: number;
  /** Dotted path of the offending field, e.g. `turns[1].must_cite_one_of[0]`. */
  field?: string;
  message: string;
}

export function formatIssue(issue: DataIssue): string {
  const where =
    issue.line !== undefined
      ? `${issue.file}:${issue.line}${issue.column !== undefined ? `:${issue.column}` : ""}`
      : issue.file;
  const field = issue.field !== undefined ? ` field \`${issue.field}\`` : "";
  return `${where}:${field} ${issue.message}`;
}

/** Invalid knowledge-base cards, eval cases, qrels, run files, reports or baselines. */
export class DataValidationError extends RetraceError {
  static override readonly CODE = "INVALID_DATA" as const;
  readonly code = "INVALID_DATA" as const;
  readonly exitCode = 2 as const;
  readonly issues: DataIssue[];
  constructor(issues: DataIssue[]) {
    const head = issues.slice(0, 20).map(formatIssue).join("\n");
    const more = issues.length > 20 ? `\n... and ${issues.length - 20} more` : "";
    super(`${issues.length} data error${issues.length === 1 ? "" : "s"}:\n${head}${more}`);
    this.issues = issues;
  }
}

/** `value` as JSON, its white space (but the plain space) and format characters escaped (`"\u00a0\u200b"`), so invisible characters show. */
function shownValue(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.replace(/(?! )[\p{White_Space}\p{Cf}]/gu, (c) =>
    c
      .split("")
      .map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, "0")}`)
      .join(""),
  );
}

/** A bad option or argument: `Expected \`k\` to be a positive integer, got 0`. */
export class InvalidArgumentError extends RetraceError {
  static override readonly CODE = "INVALID_ARGUMENT" as const;
  readonly code = "INVALID_ARGUMENT" as const;
  readonly exitCode = 2 as const;
  constructor(
    readonly argument: string,
    readonly expected: string,
    readonly value: unknown,
  ) {
    super(`Expected \`${argument}\` to be ${expected}, got ${shownValue(value)}`);
  }
}

/** A required service (Chroma) cannot be reached or started. */
export class ServiceUnavailableError extends RetraceError {
  static override readonly CODE = "SERVICE_UNAVAILABLE" as const;
  readonly code = "SERVICE_UNAVAILABLE" as const;
  readonly exitCode = 3 as const;
  constructor(
    readonly service: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A model's weights are not available locally (and downloads are not allowed). */
export class ModelUnavailableError extends RetraceError {
  static override readonly CODE = "MODEL_UNAVAILABLE" as const;
  readonly code = "MODEL_UNAVAILABLE" as const;
  readonly exitCode = 3 as const;
  constructor(
    readonly model: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Vectors whose dimension does not match the collection or the embedder. */
export class DimensionMismatchError extends RetraceError {
  static override readonly CODE = "DIMENSION_MISMATCH" as const;
  readonly code = "DIMENSION_MISMATCH" as const;
  readonly exitCode = 2 as const;
  constructor(
    readonly expected: number,
    readonly actual: number,
    context: string,
  ) {
    super(`Expected embeddings of dimension ${expected} for ${context}, got ${actual}`);
  }
}

/** A baseline that cannot be compared with this run (other dataset, other k, other config). */
export class BaselineMismatchError extends RetraceError {
  static override readonly CODE = "BASELINE_MISMATCH" as const;
  readonly code = "BASELINE_MISMATCH" as const;
  readonly exitCode = 2 as const;
  constructor(
    readonly field: string,
    readonly baselineValue: unknown,
    readonly runValue: unknown,
    /** What to do instead, ideally the exact command (default: re-create the baseline). */
    advice = "re-create the baseline with --update-baseline",
  ) {
    super(
      `Cannot compare with the baseline: its \`${field}\` is ${JSON.stringify(baselineValue)} but this run's is ${JSON.stringify(runValue)}; ${advice}`,
    );
  }
}

/** A floor or baseline comparison requested on a metric that this run did not measure. */
export class NotMeasuredError extends RetraceError {
  static override readonly CODE = "NOT_MEASURED" as const;
  readonly code = "NOT_MEASURED" as const;
  readonly exitCode = 2 as const;
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super(`\`${key}\` was not measured (${reason}); a floor or baseline on it cannot pass`);
  }
}

/**
 * A user graph that cannot be evaluated (docs/evaluate-your-graph.md): its
 * file or export is missing, it is not a compiled graph or factory, building
 * it threw, or its retrievers return documents with no card id; and any other
 * module a user hands retrace (`--input`, `--id-map`, `--judge`,
 * `--generator`; src/user-module.ts) that throws while loading or being built.
 */
export class GraphInputError extends RetraceError {
  static override readonly CODE = "INVALID_GRAPH" as const;
  readonly code = "INVALID_GRAPH" as const;
  readonly exitCode = 2 as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * A feature was asked for whose optional peer dependency is not installed
 * (docs/decisions/0007-package-and-peer-dependencies.md): `tsx` to load a
 * TypeScript `--graph` module, `@huggingface/transformers` for a model
 * embedder or reranker. Exit 2, like any usage problem: the message ends with
 * the exact command that installs the peer (`install`).
 */
export class MissingPeerError extends RetraceError {
  static override readonly CODE = "MISSING_PEER" as const;
  readonly code = "MISSING_PEER" as const;
  readonly exitCode = 2 as const;
  constructor(
    /** The package name, e.g. `tsx`. */
    readonly peer: string,
    /** The shell command that installs it, e.g. `npm install -D tsx`. */
    readonly install: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * An unexpected failure inside retrace (a bug, not bad input): exit 70. The
 * CLI wraps any exception that is not a retrace error in one, prints the
 * stack and asks for a report.
 */
export class InternalError extends RetraceError {
  static override readonly CODE = "INTERNAL" as const;
  readonly code = "INTERNAL" as const;
  readonly exitCode = 70 as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

const CODES = new Set<string>(Object.keys(EXIT_CODE_OF));

/**
 * True when `e` is a retrace error from any copy of the package: it carries
 * the `Symbol.for("retrace.error")` marker and a known string `code`.
 * Works where `instanceof` does not (two installed copies of retrace).
 */
export function isRetraceError(e: unknown): e is RetraceErrorLike {
  if (typeof e !== "object" || e === null) return false;
  const o = e as Record<PropertyKey, unknown>;
  return o[RETRACE_ERROR_MARKER] === true && typeof o.code === "string" && CODES.has(o.code);
}

/**
 * The process exit code for any thrown value: a retrace error's code maps
 * through EXIT_CODE_OF (2 or 3, 70 for INTERNAL); anything else is an
 * internal error, 70. Never 1 (reserved for "a gate failed").
 */
export function exitCodeOf(e: unknown): 2 | 3 | 70 {
  return isRetraceError(e) ? EXIT_CODE_OF[e.code] : 70;
}

/**
 * The message of any thrown value, always a string, never throwing itself
 * (docs/reliability.md): an `Error`'s (or any object's) `message` when it is
 * a string; a non-string `message` (`throw {message: 42}`) as JSON; a
 * string as it is; anything else by `String()`, or, when that throws
 * (`throw Object.create(null)`), as JSON or its kind (`[object Object]`).
 */
export function thrownMessage(e: unknown): string {
  if (typeof e === "string") return e;
  if (typeof e === "object" && e !== null) {
    let message: unknown;
    try {
      message = (e as { message?: unknown }).message;
    } catch {
      message = undefined; // a throwing getter
    }
    if (typeof message === "string") return message;
    if (message !== undefined && message !== null) return safeString(message);
    if (!(e instanceof Error) && Object.getPrototypeOf(e) === null)
      return `a thrown object with no message: ${safeString(e)}`;
  }
  return safeString(e);
}

function safeString(v: unknown): string {
  try {
    if (typeof v === "object" && v !== null && Object.getPrototypeOf(v) === null) {
      const json = JSON.stringify(v);
      if (typeof json === "string") return json;
    }
    return String(v);
  } catch {
    try {
      const json = JSON.stringify(v);
      if (typeof json === "string") return json;
    } catch {
      // a cycle, a BigInt, a throwing toJSON: its kind below
    }
    return Object.prototype.toString.call(v);
  }
}
