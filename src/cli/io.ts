/**
 * Shared plumbing of the CLI commands: where output goes, how errors become
 * exit codes (DESIGN.md §5), and option parsers that throw typed errors.
 */
import { InvalidArgumentError as CommanderArgumentError } from "commander";
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

/** `5,10` → [5, 10]; the error names the offending item. */
export function parseIntList(name: string): (raw: string) => number[] {
  const item = parsePositiveInt(name);
  return (raw: string): number[] => raw.split(",").map((s) => item(s.trim()));
}
