/**
 * The numbers an option or a setting holds (docs/gates-and-exit-codes.md,
 * "Options"): one family of parsers whose error echoes the exact text given
 * and states the true range (``Expected `run.workers` to be auto or an
 * integer from 1 to 64, got "65"``). The CLI's option parsers
 * (src/cli/options.ts) and the settings schema (./schema.ts) both use them,
 * so that a flag, a `--config` key and an option given to the programmatic
 * API are refused with one message.
 */
import { availableParallelism } from "node:os";
import { InvalidArgumentError } from "../../errors.js";

/** An inclusive range; an absent bound is unbounded on that side. `note` is appended in parentheses to the range text. */
export interface Range {
  min?: number;
  max?: number;
  /** A strict lower bound (`> min`) instead of `>= min` (finite numbers only). */
  minExclusive?: boolean;
  /** Unit named after the range ("seconds", "bytes"). */
  unit?: string;
  /** Why the range is what it is ("the case has 13 turns"). */
  note?: string;
}

/** Largest seed the bootstrap's PRNG distinguishes (mulberry32 takes the seed modulo 2^32; src/eval/stats/bootstrap.ts). */
export const MAX_SEED = 2 ** 32 - 1;

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * The text of a range: "an integer from 0 to 12", "an integer ≥ 1",
 * "a number from 0 to 1", "a number > 0 (seconds)". Edge cases: no bounds
 * → "an integer" / "a finite number"; `note` and `unit` are appended in
 * parentheses, unit first.
 */
export function rangeText(kind: "integer" | "number", r: Range = {}): string {
  const what =
    kind === "integer" ? "an integer" : r.min === undefined && r.max === undefined ? "a finite number" : "a number";
  const low = r.min === undefined ? "" : `${r.minExclusive ? ">" : "≥"} ${r.min}`;
  let text: string;
  if (kind === "integer" && r.max === undefined && (r.min === 1 || r.min === 0))
    text = r.min === 1 ? "a positive integer" : "a non-negative integer";
  else if (r.min !== undefined && r.max !== undefined)
    text = r.minExclusive ? `${what} > ${r.min} and ≤ ${r.max}` : `${what} from ${r.min} to ${r.max}`;
  else if (r.min !== undefined) text = `${what} ${low}`;
  else if (r.max !== undefined) text = `${what} ≤ ${r.max}`;
  else text = what;
  const notes = [r.unit, r.note].filter((x): x is string => x !== undefined && x !== "");
  return notes.length > 0 ? `${text} (${notes.join("; ")})` : text;
}

/** Whether `n` lies in `r`. */
export function inRange(n: number, r: Range): boolean {
  if (r.min !== undefined && (r.minExclusive ? n <= r.min : n < r.min)) return false;
  return r.max === undefined || n <= r.max;
}

/** The integer `raw` spells (decimal digits, optional sign; no `1e3`, `0x10` or `3.0`) if it lies in `r`, else undefined. */
export function parseIntIn(raw: string, r: Range = {}): number | undefined {
  const t = raw.trim();
  if (!INTEGER.test(t)) return undefined;
  const n = Number(t);
  return Number.isSafeInteger(n) && inRange(n, r) ? n : undefined;
}

/** The finite decimal number `raw` spells (`0.5`, `.5`, `1e-3`; no `Infinity`, `0x10` or an empty string) if it lies in `r`, else undefined. */
export function parseNumberIn(raw: string, r: Range = {}): number | undefined {
  const t = raw.trim();
  if (!DECIMAL.test(t)) return undefined;
  const n = Number(t);
  return Number.isFinite(n) && inRange(n, r) ? n : undefined;
}

/** A parser of one value named `name` (a flag or a setting key): the value, or retrace's InvalidArgumentError (exit 2). */
export type ValueParser<T> = (raw: string) => T;

/** An integer in `r` (see parseIntIn); the error echoes `raw` and the range. */
export function intValue(name: string, r: Range = {}): ValueParser<number> {
  return (raw) => {
    const n = parseIntIn(raw, r);
    if (n === undefined) throw new InvalidArgumentError(name, rangeText("integer", r), raw);
    return n;
  };
}

/** A finite number in `r` (see parseNumberIn). */
export function numberValue(name: string, r: Range = {}): ValueParser<number> {
  return (raw) => {
    const n = parseNumberIn(raw, r);
    if (n === undefined) throw new InvalidArgumentError(name, rangeText("number", r), raw);
    return n;
  };
}

/** `auto` (this machine's available parallelism) or an integer from 1 to 64. */
export function workersValue(name: string): ValueParser<number> {
  return (raw) => {
    if (raw.trim() === "auto") return Math.min(64, availableParallelism());
    const n = parseIntIn(raw, { min: 1, max: 64 });
    if (n === undefined)
      throw new InvalidArgumentError(name, `auto or ${rangeText("integer", { min: 1, max: 64 })}`, raw);
    return n;
  };
}
