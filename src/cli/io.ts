/**
 * Shared plumbing of the CLI commands: where output goes, how errors become
 * exit codes (docs/gates-and-exit-codes.md). The option parsers are in ./options.ts.
 */
import { escapeControlChars } from "../control-chars.js";
import { exitCodeOf, InvalidArgumentError, isRetraceError, thrownMessage } from "../errors.js";
import { fitText } from "../eval/report/render/wrap.js";
import { verboseRequested } from "../log.js";
import { redactSecrets } from "../redact.js";
import { MIN_WIDTH, parseWidth, WIDTH_RANGE_TEXT } from "./options.js";

/** Exit codes of every command (docs/gates-and-exit-codes.md). */
export const EXIT = { ok: 0, gateFailed: 1, usage: 2, unavailable: 3, internal: 70 } as const;

/** Where to report an internal error (exit 70). */
export const REPORT_HINT =
  "This is a bug in retrace, not in your data: please report it with the command line and the stack above (see docs/gates-and-exit-codes.md).";

/**
 * Print a thrown value on stderr and return its exit code: a retrace error
 * (recognised by its marker and code, from any copy of the package) prints
 * one plain message (its stack and causes only with --verbose,
 * docs/reliability.md) and exits with its class's code (2 or 3); anything
 * else is an internal error: message, stack and the hint to report it, exit 70.
 */
export function reportError(e: unknown): number {
  if (isRetraceError(e) && e.code !== "INTERNAL") {
    err(`retrace: ${e.message}`);
    if (verbose()) err(stackOf(e));
    return exitCodeOf(e);
  }
  err(`retrace: internal error: ${thrownMessage(e)}
${stackOf(e)}
${REPORT_HINT}`);
  return EXIT.internal;
}

/**
 * Result text to stdout, through the output boundary (docs/reliability.md):
 * secrets of the environment redacted, control and bidi characters shown
 * as `\uXXXX` escapes (src/control-chars.ts; in JSON the same characters).
 */
export function out(text: string, o: { workflowCommands?: boolean } = {}): void {
  writeStdout(escapeControlChars(redactSecrets(text), o));
}

function writeStdout(t: string): void {
  process.stdout.write(t.endsWith("\n") ? t : `${t}\n`);
}

/**
 * Width when stdout is not a terminal (a pipe, a file, a CI log): no limit, so
 * a table row is never broken in two where nobody resizes the window.
 */
export const DEFAULT_WIDTH = 0;
/** The environment form of `--width`. */
export const WIDTH_ENV = "RETRACE_WIDTH";

let chosenWidth: number | undefined;

/**
 * The columns text output must fit (docs/gates-and-exit-codes.md, "Terminal
 * width"): `--width N` (`option`), else RETRACE_WIDTH, else the terminal's
 * width when stdout is a terminal (at least 40), else no limit (0). An
 * invalid RETRACE_WIDTH is a usage error (exit 2).
 */
export function resolveWidth(
  option: number | undefined,
  env: NodeJS.ProcessEnv = process.env,
  stream: { isTTY?: boolean; columns?: number } = process.stdout,
): number {
  if (option !== undefined) return option;
  const raw = env[WIDTH_ENV];
  if (raw !== undefined && raw !== "") {
    const n = parseWidth(raw);
    if (n === undefined) throw new InvalidArgumentError(WIDTH_ENV, WIDTH_RANGE_TEXT, raw);
    return n;
  }
  if (stream.isTTY === true && typeof stream.columns === "number" && stream.columns > 0)
    return Math.max(MIN_WIDTH, stream.columns);
  return DEFAULT_WIDTH;
}

/** Fixes the width for this process (src/cli/main.ts, before a command runs: the global `--width` and RETRACE_WIDTH checked up front). */
export function setOutputWidth(width: number): void {
  chosenWidth = width;
}

/** The width text output fits (resolveWidth, fixed once a command starts). */
export function outputWidth(): number {
  return chosenWidth ?? resolveWidth(undefined);
}

/**
 * Human-readable text to stdout, every line at most outputWidth() columns
 * (wrapped at spaces, continuation lines indented; src/eval/render/wrap.ts).
 * JSON and machine formats (trec_eval text) go through `out` unchanged.
 */
export function outText(text: string): void {
  // The table's own colour codes pass; every other control character is escaped before the width is measured.
  writeStdout(fitText(escapeControlChars(redactSecrets(text), { keepColor: true }), outputWidth()));
}

/** Diagnostics to stderr, through the output boundary: secrets redacted, control and bidi characters escaped (docs/reliability.md). */
export function err(text: string, o: { workflowCommands?: boolean } = {}): void {
  const t = errText(text, o);
  process.stderr.write(t.endsWith("\n") ? t : `${t}\n`);
}

/** What the stderr boundary makes of `text` (err, and commander's own messages): secrets redacted, control and bidi characters escaped. */
export function errText(text: string, o: { workflowCommands?: boolean } = {}): string {
  return escapeControlChars(redactSecrets(text), o);
}

/** `--verbose` on the command line (or RETRACE_VERBOSE=1): errors are shown with their stack and causes, and debug lines are logged (src/log.ts). */
export function verbose(argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env): boolean {
  return verboseRequested(argv, env);
}

function stackOf(e: unknown): string {
  const parts: string[] = [];
  for (
    let c: unknown = e, depth = 0;
    c !== undefined && c !== null && depth < 5;
    c = (c as { cause?: unknown }).cause, depth++
  ) {
    parts.push(c instanceof Error ? (c.stack ?? c.message) : String(c));
  }
  return parts.join("\ncaused by: ");
}

/** True when stderr/stdout may carry ANSI colour (TTY and NO_COLOR unset). */
export function useColor(stream: NodeJS.WriteStream = process.stdout): boolean {
  return Boolean(stream.isTTY) && (process.env.NO_COLOR ?? "") === "";
}

/**
 * Wraps a command action: sets `process.exitCode` (never calls process.exit)
 * from the action's return value, or from the error it throws.
 */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<number | void> | number | void) {
  return async (...args: A): Promise<void> => {
    try {
      const code = await fn(...args);
      process.exitCode = code ?? EXIT.ok;
    } catch (e) {
      process.exitCode = reportError(e);
    }
  };
}
