/**
 * Shared plumbing of the CLI commands: where output goes, how errors become
 * exit codes (docs/gates-and-exit-codes.md), and option parsers that throw typed errors.
 */
import { InvalidArgumentError as CommanderArgumentError } from "commander";
import { exitCodeOf, InvalidArgumentError, isRetraceError } from "../errors.js";
import { redactSecrets } from "../redact.js";

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

/**
 * Option parsers for commander. They throw commander's own InvalidArgumentError
 * (carrying retrace's message), so a bad value is reported like any usage
 * error: the message, the usage hint, exit 2.
 */
function optionParser<T>(name: string, expected: string, parse: (raw: string) => T | undefined): (raw: string) => T {
  return (raw: string): T => {
    const v = parse(raw);
    if (v === undefined) throw new CommanderArgumentError(new InvalidArgumentError(name, expected, raw).message);
    return v;
  };
}

export function parsePositiveInt(name: string): (raw: string) => number {
  return optionParser(name, "a positive integer", (raw) => {
    const n = Number(raw);
    return raw.trim() !== "" && Number.isInteger(n) && n > 0 ? n : undefined;
  });
}

export function parseUnitFloat(name: string): (raw: string) => number {
  return optionParser(name, "a number between 0 and 1", (raw) => {
    const n = Number(raw);
    return raw.trim() !== "" && Number.isFinite(n) && n >= 0 && n <= 1 ? n : undefined;
  });
}

export function parsePositiveNumber(name: string, unit: string): (raw: string) => number {
  return optionParser(name, `a positive number of ${unit}`, (raw) => {
    const n = Number(raw);
    return raw.trim() !== "" && Number.isFinite(n) && n > 0 ? n : undefined;
  });
}

/** `5,10` → [5, 10]; the error names the offending item. */
export function parseIntList(name: string): (raw: string) => number[] {
  const item = parsePositiveInt(name);
  return (raw: string): number[] => raw.split(",").map((s) => item(s.trim()));
}
