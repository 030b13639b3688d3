/**
 * Shared plumbing of the CLI commands: where output goes, how errors become
 * exit codes (DESIGN.md §5), and option parsers that throw typed errors.
 */
import { InvalidArgumentError, isRetraceError } from "../errors.js";

export const EXIT = { ok: 0, gateFailed: 1, usage: 2, unavailable: 3 } as const;

/** Result text to stdout. */
export function out(text: string): void {
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}

/** Diagnostics to stderr. */
export function err(text: string): void {
  process.stderr.write(text.endsWith("\n") ? text : `${text}\n`);
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
      if (isRetraceError(e)) {
        err(`retrace: ${e.message}`);
        process.exitCode = e.exitCode;
      } else {
        err(`retrace: unexpected error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
        process.exitCode = 1;
      }
    }
  };
}

export function parsePositiveInt(name: string) {
  return (raw: string): number => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(name, "a positive integer", raw);
    return n;
  };
}

export function parseUnitFloat(name: string) {
  return (raw: string): number => {
    const n = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError(name, "a number between 0 and 1", raw);
    return n;
  };
}

/** `5,10` → [5, 10] */
export function parseIntList(name: string) {
  return (raw: string): number[] => raw.split(",").map((s) => parsePositiveInt(name)(s.trim()));
}
