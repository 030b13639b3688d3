/**
 * Shared plumbing of the CLI commands: where output goes, how errors become
 * exit codes (docs/gates-and-exit-codes.md), and option parsers that throw typed errors.
 */
import { exitCodeOf, isRetraceError } from "../errors.js";
import { redactSecrets } from "../redact.js";
import { intListOption, positiveIntOption, positiveNumberOption, probabilityOption } from "./options.js";

/** Exit codes of every command (docs/gates-and-exit-codes.md). */
export const EXIT = { ok: 0, gateFailed: 1, usage: 2, unavailable: 3, internal: 70 } as const;

/** Where to report an internal error (exit 70). */
export const REPORT_HINT = "This is a bug in retrace, not in your data: please report it with the command line and the stack above (see docs/gates-and-exit-codes.md).";

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
  err(`retrace: internal error: ${e instanceof Error ? e.message : String(e)}
${stackOf(e)}
${REPORT_HINT}`);
  return EXIT.internal;
}

/** Result text to stdout (secrets of the environment redacted: docs/reliability.md). */
export function out(text: string): void {
  const t = redactSecrets(text);
  process.stdout.write(t.endsWith("\n") ? t : `${t}\n`);
}

/** Diagnostics to stderr (secrets redacted). */
export function err(text: string): void {
  const t = redactSecrets(text);
  process.stderr.write(t.endsWith("\n") ? t : `${t}\n`);
}

/** `--verbose` on the command line (or RETRACE_VERBOSE=1): errors are shown with their stack and causes. */
export function verbose(argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env): boolean {
  return argv.includes("--verbose") || env.RETRACE_VERBOSE === "1";
}

function stackOf(e: unknown): string {
  const parts: string[] = [];
  for (let c: unknown = e, depth = 0; c !== undefined && c !== null && depth < 5; c = (c as { cause?: unknown }).cause, depth++) {
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

/*
 * Option parsers for commander: the one family lives in ./options.ts (every
 * error echoes the text typed and the true range); these names stay for the
 * commands that import them from here.
 */
export function parsePositiveInt(name: string): (raw: string) => number {
  return positiveIntOption(name);
}

export function parseUnitFloat(name: string): (raw: string) => number {
  return probabilityOption(name);
}

export function parsePositiveNumber(name: string, unit: string): (raw: string) => number {
  return positiveNumberOption(name, unit);
}

/** `5,10` → [5, 10]; the error echoes the whole value. */
export function parseIntList(name: string): (raw: string) => number[] {
  return intListOption(name, { min: 1 });
}
