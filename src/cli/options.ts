/**
 * Options mean what they say (docs/gates-and-exit-codes.md, "Options"):
 *
 * - one family of numeric option parsers, used by every numeric option of
 *   every command: the error echoes the exact text the user typed and states
 *   the true range (``Expected `--turn` to be an integer from 0 to 12 (the
 *   case has 13 turns), got "-3"``);
 * - `refuseUnusedSettings` (the rules a use-case declares: each source's module in src/app/sources/)
 *   and `refuseInMode` (a command's own modes): an option a command defines
 *   but does not use in one of its modes (e.g. `--rerank` with
 *   `eval --graph`) is a usage error, exit 2;
 * - `commandsTaking`: which commands define an option, for the hint after
 *   commander's `error: unknown option '--junit'`.
 *
 * The parsers are pure: `(raw) => value`, throwing commander's
 * InvalidArgumentError (so commander prints it as a usage error, exit 2)
 * whose message is retrace's InvalidArgumentError message. `checkIntRange`
 * is the same check for a bound known only later (a case's turn count); it
 * throws retrace's InvalidArgumentError (exit 2).
 */
import { InvalidArgumentError as CommanderArgumentError, type Command } from "commander";
import { InvalidArgumentError } from "../errors.js";
import { settingKeyOf } from "../app/settings/keys.js";
import {
  inRange,
  intValue,
  MAX_SEED,
  numberValue,
  parseIntIn,
  rangeText,
  workersValue,
  type Range,
} from "../app/settings/numbers.js";

export { MAX_SEED, parseIntIn, parseNumberIn, rangeText, type Range } from "../app/settings/numbers.js";

const usageError = (flag: string, expected: string, raw: string) =>
  new CommanderArgumentError(new InvalidArgumentError(flag, expected, raw).message);

/** The app parser `parse` as a commander option parser: its InvalidArgumentError becomes commander's (a usage error, exit 2), message unchanged. */
function asOption<T>(parse: (raw: string) => T): (raw: string) => T {
  return (raw) => {
    try {
      return parse(raw);
    } catch (e) {
      if (e instanceof InvalidArgumentError) throw new CommanderArgumentError(e.message);
      throw e;
    }
  };
}

/** `--flag <n>`: an integer in `r` (see parseIntIn); the error echoes `raw` and the range. */
export const intOption = (flag: string, r: Range = {}): ((raw: string) => number) => asOption(intValue(flag, r));

/** `--flag <x>`: a finite number in `r` (see parseNumberIn). */
export const numberOption = (flag: string, r: Range = {}): ((raw: string) => number) => asOption(numberValue(flag, r));

/** `--workers`: `auto` (this machine's available parallelism) or an integer from 1 to 64. */
export const workersOption = (flag = "--workers"): ((raw: string) => number) => asOption(workersValue(flag));

/** An integer ≥ 1 (counts of things that cannot be zero: k, folds, concurrency, batch size). */
export const positiveIntOption = (flag: string, r: Omit<Range, "min"> = {}) => intOption(flag, { ...r, min: 1 });
/** An integer ≥ 0 (tolerated counts: --max-flips, --max-errors). */
export const countOption = (flag: string, r: Omit<Range, "min"> = {}) => intOption(flag, { ...r, min: 0 });
/** A number from 0 to 1 (floors, tolerances, rounding steps). */
export const probabilityOption = (flag: string, note?: string) =>
  numberOption(flag, { min: 0, max: 1, ...(note !== undefined ? { note } : {}) });
/** A number > 0 in `unit` (durations). */
export const positiveNumberOption = (flag: string, unit: string) =>
  numberOption(flag, { min: 0, minExclusive: true, unit });
/** A PRNG seed: an integer from 0 to 2^32 − 1 (MAX_SEED). */
export const seedOption = (flag = "--seed") => intOption(flag, { min: 0, max: MAX_SEED });

/** The narrowest `--width` (below it a table's label column alone fills the line). */
export const MIN_WIDTH = 40;
const MAX_WIDTH = 1000;
/** What `--width` and RETRACE_WIDTH accept. */
export const WIDTH_RANGE_TEXT = `0 (no limit) or an integer from ${MIN_WIDTH} to ${MAX_WIDTH} (columns)`;

/** A width in columns: 0 (no limit) or an integer from MIN_WIDTH to 1000; undefined for anything else. */
export function parseWidth(raw: string): number | undefined {
  const n = parseIntIn(raw, { min: 0, max: MAX_WIDTH });
  return n === undefined || (n > 0 && n < MIN_WIDTH) ? undefined : n;
}

/** `--width <columns>` (the global option of src/cli/main.ts): see parseWidth. */
export function widthOption(flag = "--width"): (raw: string) => number {
  return (raw) => {
    const n = parseWidth(raw);
    if (n === undefined) throw usageError(flag, WIDTH_RANGE_TEXT, raw);
    return n;
  };
}

/** `5,10` → [5, 10], each item an integer in `r`; the error names the offending item and the whole value. */
export function intListOption(flag: string, r: Range = {}): (raw: string) => number[] {
  return (raw) =>
    raw.split(",").map((s) => {
      const n = parseIntIn(s, r);
      if (n === undefined) throw usageError(flag, `a comma-separated list of ${listItemText(r)}`, raw);
      return n;
    });
}

/** "positive integers", "integers from 1 to 100" (rangeText in the plural). */
function listItemText(r: Range): string {
  return rangeText("integer", r)
    .replace(/^an? /, "")
    .replace(/integer/, "integers");
}

/**
 * The range check of an already-parsed integer whose bound is known only
 * later (the turn count of a case). Throws retrace's InvalidArgumentError
 * (exit 2) echoing `raw` (the user's text; default `String(n)`).
 */
export function checkIntRange(flag: string, n: number, r: Range, raw: string = String(n)): number {
  if (!Number.isInteger(n) || !inRange(n, r)) throw new InvalidArgumentError(flag, rangeText("integer", r), raw);
  return n;
}

/** A mode of a command and the options it does not use (long flags, e.g. "--rerank"). */
export interface ModeRule<O> {
  /** When the rule applies (the parsed options of the command). */
  when: (o: O) => boolean;
  /** The mode's name in the message: "with --graph", "without --graph". */
  mode: string;
  unused: readonly string[];
  /** Parsed values (not options) the mode does not use, refused when set from the command line or `--config`: attribute and its name in the message. */
  unusedValues?: readonly { attribute: string; shown: string }[];
}

/**
 * How a refused setting is named: an option given on the command line by its
 * flag (one kept under an old spelling and hidden from the help, src/cli/old-spellings.ts,
 * by its new spelling), a value set from `--config` by its key
 * (src/cli/settings.ts), a value that is no option by `shown`; null when it
 * was not given (a default, the environment, or never set).
 */
function givenSettingName(actionCmd: Command, attribute: string, shown?: string): string | null {
  const source = actionCmd.getOptionValueSource(attribute);
  if (source !== "cli" && source !== "config") return null;
  const opt = actionCmd.options.find((x) => x.attributeName() === attribute);
  if (opt === undefined) return shown ?? `'${attribute}'`;
  if (source === "cli") return opt.hidden ? `'${opt.description.replace(/[=:]$/, "")}'` : `option '${opt.long}'`;
  return `setting '${(opt.long !== undefined ? settingKeyOf(opt.long) : undefined) ?? opt.description}' of --config`;
}

/** `error: option '--rerank' is not used with --graph (…)`, exit 2. */
function refuseUnused(actionCmd: Command, shown: string, mode: string): never {
  return actionCmd.error(`error: ${shown} is not used ${mode}`, { exitCode: 2, code: "retrace.unusedOption" });
}

/**
 * Adds a pre-action check to `cmd`: an option given on the command line
 * (not a default, not the environment) that the active mode does not use is
 * a usage error `error: option '--rerank' is not used with --graph`, exit 2.
 * An option kept under an old spelling and hidden from the help
 * (src/cli/eval-options.ts `hidden`) is named by its new spelling, and a
 * value set from `--config` by its key (src/cli/settings.ts).
 */
export function refuseInMode<O>(cmd: Command, rules: readonly ModeRule<O>[]): Command {
  return cmd.hook("preAction", (_self, actionCmd) => {
    const o = actionCmd.opts() as O;
    for (const rule of rules) {
      if (!rule.when(o)) continue;
      for (const flag of rule.unused) {
        const opt = actionCmd.options.find((x) => x.long === flag);
        const shown = opt === undefined ? null : givenSettingName(actionCmd, opt.attributeName());
        if (shown !== null) refuseUnused(actionCmd, shown, rule.mode);
      }
      for (const { attribute, shown } of rule.unusedValues ?? []) {
        const name = givenSettingName(actionCmd, attribute, shown);
        if (name !== null) refuseUnused(actionCmd, name, rule.mode);
      }
    }
  });
}

/**
 * Adds a pre-action check to `cmd` of the settings a use-case does not use,
 * as the use-case declares them (`rulesOf` the parsed options; each source's module in src/app/sources/):
 * the first one given on the command line or in `--config` is a usage error
 * naming it as refuseInMode does, exit 2. The command holds no rule of its own.
 */
export function refuseUnusedSettings<O>(
  cmd: Command,
  rulesOf: (o: O) => readonly { mode: string; settings: readonly string[] }[],
  names: Readonly<Record<string, string>> = {},
): Command {
  return cmd.hook("preAction", (_self, actionCmd) => {
    for (const rule of rulesOf(actionCmd.opts() as O))
      for (const setting of rule.settings) {
        // A setting this command has no option for, and no --config key sets, cannot have been given.
        const shown = givenSettingName(actionCmd, setting, names[setting]);
        if (shown !== null) refuseUnused(actionCmd, shown, rule.mode);
      }
  });
}

/** The flag of commander's `error: unknown option '--junit'` (a `--flag=value` form reduced to `--flag`), or null. */
export function unknownOptionOf(message: string): string | null {
  const m = /unknown option '([^']+)'/.exec(message);
  return m === null ? null : (m[1] as string).replace(/=.*$/, "");
}

/** Full names ("eval", "baseline floors") of the commands under `program` that define `flag` (long or short), sorted. */
export function commandsTaking(
  program: Command,
  flag: string,
  { hidden = false }: { hidden?: boolean } = {},
): string[] {
  const found: string[] = [];
  const walk = (cmd: Command, prefix: string) => {
    for (const sub of cmd.commands) {
      const name = prefix === "" ? sub.name() : `${prefix} ${sub.name()}`;
      // hidden: the old spellings kept to name their replacement (src/cli/old-spellings.ts), which the command no longer takes
      if (sub.options.some((o) => (o.long === flag || o.short === flag) && o.hidden === hidden)) found.push(name);
      walk(sub, name);
    }
  };
  walk(program, "");
  return found.sort();
}

/** The env variable of the card size limit; `--max-card-bytes` wins over it (src/kb/cards.ts). */
export const MAX_CARD_BYTES_ENV = "RETRACE_MAX_CARD_BYTES";

/** `--max-card-bytes <n>` on every command that loads the KB (parsed value: `maxCardBytes`). */
export function addMaxCardBytesOption(cmd: Command): Command {
  return cmd.option(
    "--max-card-bytes <n>",
    `largest card file read, bytes (default 1048576 = 1 MiB, or ${MAX_CARD_BYTES_ENV}; the flag wins)`,
    positiveIntOption("--max-card-bytes"),
  );
}
