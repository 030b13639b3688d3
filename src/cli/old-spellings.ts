/**
 * The old spellings of `eval`, `start` and `trace` options (CHANGELOG.md,
 * "Changed"): each is kept as a hidden option, so that its parser, choices
 * and default serve the new spelling that sets it (`--config`, `--gate`,
 * `--out`), while typing it is exit 2 with a message naming the new one:
 *
 *     error: option '--embedder' is now --config '{"retrieval":{"embedder":"lsa"}}' (or the key retrieval.embedder of your config file; docs/configuration.md)
 */
import { InvalidArgumentError as CommanderArgumentError, Option, type Command } from "commander";
import { shellLine } from "../shell.js";

/** The raw value typed for each old spelling (for the message naming its replacement). */
const typedRaw = new WeakMap<Option, string>();

/**
 * An option of an old spelling (CHANGELOG.md lists them), kept hidden from
 * the help so that its parser, choices and default still serve the new
 * spelling that sets it (`--config`, `--gate`, `--out`), while typing it is
 * exit 2 naming the new spelling (refuseOldSpellings). `replacement` is
 * that spelling: a config key (`retrieval.embedder`, `run.seed`), a prefix
 * the typed value completes (`--gate min-hit=`, `--out junit:`), or a whole
 * replacement (`--github off`).
 */
export function hidden(
  cmd: Command,
  flags: string,
  replacement: string,
  parse?: (v: string, prev: never) => unknown,
  defaultValue?: unknown,
  choices?: readonly string[],
): Command {
  const opt = new Option(flags, replacement).hideHelp();
  opt.argParser((v: string, prev: unknown) => {
    typedRaw.set(opt, v);
    if (choices !== undefined && !choices.includes(v))
      throw new CommanderArgumentError(`Allowed choices are ${choices.join(", ")}.`);
    return parse !== undefined ? (parse as (v: string, prev: unknown) => unknown)(v, prev) : v;
  });
  if (choices !== undefined) opt.argChoices = [...choices];
  if (defaultValue !== undefined) opt.default(defaultValue);
  cmd.addOption(opt);
  // A negation (`--no-github`) shares its attribute with the new spelling (`--github [when]`) and takes no value: record that it was typed.
  if (opt.negate) cmd.on(`option:${opt.name()}`, () => typedRaw.set(opt, ""));
  return cmd;
}

/** The new spelling of an old option typed as `raw` (see `hidden`). */
export function newSpelling(replacement: string, raw: string | undefined): string {
  const m = /^(retrieval|run)\.(\w+)$/.exec(replacement);
  if (m !== null) {
    const value =
      raw === undefined
        ? "VALUE"
        : /^-?\d+(\.\d+)?$/.test(raw)
          ? raw
          : raw.trimStart().startsWith("{")
            ? raw
            : JSON.stringify(raw);
    return `--config '{"${m[1]}":{"${m[2]}":${value}}}' (or the key ${replacement} of your config file; docs/configuration.md)`;
  }
  if (/[=:]$/.test(replacement)) return `${replacement}${raw ?? "VALUE"}`;
  return replacement;
}

/** Exit 2 when an old spelling was typed, naming the new one (before anything else runs). */
export function refuseOldSpellings(actionCmd: Command): void {
  for (const opt of actionCmd.options) {
    if (!opt.hidden || actionCmd.getOptionValueSource(opt.attributeName()) !== "cli") continue;
    if (opt.negate && !typedRaw.has(opt)) continue; // `--github` typed, not `--no-github`
    const flag = opt.long ?? opt.flags;
    actionCmd.error(`error: option '${flag}' is now ${newSpelling(opt.description, typedRaw.get(opt))}`, {
      exitCode: 2,
      code: "retrace.renamedOption",
    });
  }
}

/**
 * A command that moved: `name` (its `summary` is the one of src/cli/main.ts
 * COMMANDS) takes any arguments and exits 2 printing the
 * command line that replaces it (`respell` maps the arguments typed after
 * the command's name to the new command's).
 */
export function movedCommand(
  program: Command,
  name: string,
  summary: string,
  respell: (args: string[]) => string[],
): void {
  program
    .command(name)
    .description(summary)
    .helpOption(false)
    .allowUnknownOption(true)
    .allowExcessArguments(true)
    .argument("[args...]")
    .action((_args: string[], _o: unknown, cmd: Command) => {
      const typed = cmd.args;
      const shown = name === "baseline" && typed[0] === "floors" ? "baseline floors" : name;
      cmd.error(`error: retrace ${shown} is now: retrace ${shellLine(respell(typed))}`, {
        exitCode: 2,
        code: "retrace.movedCommand",
      });
    });
}
