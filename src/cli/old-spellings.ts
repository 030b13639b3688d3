/**
 * The retired spellings of every command's options (CHANGELOG.md,
 * "Changed"), in one table (RETIRED): each is registered as a hidden option
 * that only records what was typed; typing it is exit 2 with a message
 * naming the new spelling (`--config`, `--gate`, `--out`):
 *
 *     error: option '--embedder' is now --config '{"retrieval":{"embedder":"lsa"}}' (or the key retrieval.embedder of your config file; docs/configuration.md)
 */
import { Option, type Command } from "commander";
import { shellLine } from "../shell.js";

/** The raw value typed for each old spelling (for the message naming its replacement); only a typed one is here. */
const typedRaw = new WeakMap<Option, string>();

/** A command a retired spelling was an option of. */
type Cmd =
  | "eval"
  | "start"
  | "trace"
  | "merge"
  | "label"
  | "compare"
  | "report"
  | "beir"
  | "tune"
  | "ingest"
  | "check"
  | "cases synth";

const EVAL: readonly Cmd[] = ["eval", "start"];
const GATE_CHECKS_OF_MERGE = [
  "min-hit",
  "min-recall",
  "min-ndcg",
  "min-mrr",
  "max-drop",
  "max-flips",
  "max-errors",
  "max-no-retrieval",
  "max-flaky",
  "max-unjudged",
];

/** One retired spelling: the option as it was (`--embedder <x>`), its new spelling, the commands that had it. */
export interface Retired {
  flags: string;
  /** A config key (`retrieval.embedder`), a prefix the typed value completes (`--gate min-hit=`, `--out junit:`), or a whole replacement (`--github off`). */
  to: string;
  commands: readonly Cmd[];
}

const gate = (name: string, value: string, commands: readonly Cmd[]): Retired => ({
  flags: `--${name} <${value}>`,
  to: `--gate ${name}=`,
  commands,
});

/**
 * THE table of retired spellings (CHANGELOG.md lists when each was retired):
 * the only options a command registers but does not show in its help
 * (test/cli/hidden-options.test.ts lists them). Typing one is exit 2 naming
 * its new spelling, before anything runs.
 */
export const RETIRED: readonly Retired[] = [
  // retrieval.* and run.* are set only through --config or the project file (src/app/settings/schema.ts).
  { flags: "--dense-k <n>", to: "retrieval.denseK", commands: [...EVAL, "trace"] },
  { flags: "--bm25-k <n>", to: "retrieval.bm25K", commands: [...EVAL, "trace"] },
  { flags: "--mode <mode>", to: "retrieval.mode", commands: [...EVAL, "trace"] },
  {
    flags: "--embedder <auto|builtin|lsa|model>",
    to: "retrieval.embedder",
    commands: [...EVAL, "trace", "label", "beir", "tune", "ingest"],
  },
  { flags: "--rerank <model|auto>", to: "retrieval.rerank", commands: [...EVAL, "trace", "beir"] },
  { flags: "--timeout <seconds>", to: "run.timeout", commands: [...EVAL, "trace", "label", "beir", "ingest"] },
  {
    flags: "--max-card-bytes <n>",
    to: "run.maxCardBytes",
    commands: [...EVAL, "trace", "label", "tune", "ingest", "check", "cases synth"],
  },
  { flags: "--history <n>", to: "run.history", commands: [...EVAL, "trace"] },
  { flags: "--replay <mode>", to: "run.replay", commands: [...EVAL, "trace"] },
  { flags: "--judge <module>", to: "run.judge", commands: EVAL },
  { flags: "--judge-cache <dir>", to: "run.judgeCache", commands: EVAL },
  { flags: "--concurrency <n>", to: "run.concurrency", commands: [...EVAL, "label"] },
  { flags: "--workers <n|auto>", to: "run.workers", commands: EVAL },
  { flags: "--seed <n>", to: "run.seed", commands: [...EVAL, "beir", "tune", "compare", "cases synth"] },
  { flags: "--resample <unit>", to: "run.resample", commands: [...EVAL, "compare"] },
  { flags: "--configurable <json|file>", to: "run.configurable", commands: [...EVAL, "trace", "label"] },
  { flags: "--turn-timeout <seconds>", to: "run.turnTimeout", commands: [...EVAL, "trace", "label"] },
  { flags: "--max-state-mb <n>", to: "run.maxStateMb", commands: [...EVAL, "trace"] },
  { flags: "--load-timeout <seconds>", to: "run.loadTimeout", commands: [...EVAL, "trace"] },
  { flags: "--graph-memory-mb <n>", to: "run.graphMemoryMb", commands: [...EVAL, "trace"] },
  // The gate's checks are --gate NAME=VALUE.
  ...["min-hit", "min-recall", "min-ndcg", "min-mrr"].map((n) =>
    gate(n, "floors", GATE_CHECKS_OF_MERGE.includes(n) ? [...EVAL, "merge"] : EVAL),
  ),
  gate("min-stage", "stage=x", EVAL),
  gate("max-drop", "n", [...EVAL, "merge"]),
  gate("max-flips", "n", [...EVAL, "merge"]),
  gate("max-stage-drop", "stage=x", EVAL),
  gate("max-errors", "n", [...EVAL, "merge"]),
  gate("max-no-retrieval", "n", [...EVAL, "merge"]),
  gate("max-flaky", "n", [...EVAL, "merge"]),
  gate("max-unjudged", "x", [...EVAL, "merge"]),
  {
    flags: "--allow-no-retrieval",
    to: "nothing: it had no effect (gate gold-bearing turns with no retrieval with --gate max-no-retrieval=N)",
    commands: EVAL,
  },
  // Every file written is --out FORMAT:FILE (src/cli/out-formats.ts).
  { flags: "--no-github", to: "--github off", commands: [...EVAL, "merge"] },
  { flags: "--junit <file>", to: "--out junit:", commands: [...EVAL, "merge"] },
  { flags: "--report-json <file>", to: "--out json:", commands: [...EVAL, "merge"] },
  { flags: "--html <file>", to: "--out html:", commands: [...EVAL, "merge", "label", "compare", "report"] },
  { flags: "--pr-comment <file>", to: "--out pr-comment:", commands: [...EVAL, "merge", "compare"] },
  { flags: "--md <file>", to: "--out markdown:", commands: ["report"] },
  { flags: "--trec <dir>", to: "--out trec:", commands: ["report"] },
  { flags: "--annotations-out <file>", to: "--out phoenix:", commands: EVAL },
  { flags: "--feedback-out <file>", to: "--out langsmith:", commands: EVAL },
  { flags: "--no-counterfactual", to: "--counterfactual off", commands: EVAL },
];

/**
 * Registers the retired spellings of command `cmd` (RETIRED rows naming its
 * name), hidden from the help: typing one is exit 2 naming the new spelling
 * (refuseOldSpellings). Call it once, after the command's own options (a
 * negation such as `--no-github` shares its attribute with `--github`).
 */
export function addRetired(cmd: Command): Command {
  const name = commandPath(cmd);
  for (const row of RETIRED) if ((row.commands as readonly string[]).includes(name)) hidden(cmd, row.flags, row.to);
  return cmd;
}

/** A command's name under the program: `eval`, `cases synth` (the names RETIRED and the settings schema use). */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c !== null && c.parent !== null; c = c.parent) names.unshift(c.name());
  return names.length > 0 ? names.join(" ") : cmd.name();
}

/** A retired option, hidden from the help, that records what was typed (see addRetired). */
function hidden(cmd: Command, flags: string, replacement: string): void {
  const opt = new Option(flags, replacement).hideHelp();
  opt.argParser((v: string) => {
    typedRaw.set(opt, v);
    return v;
  });
  cmd.addOption(opt);
  // A flag without a value (`--no-github`, `--allow-no-retrieval`): record that it was typed.
  if (!opt.required && !opt.optional) cmd.on(`option:${opt.name()}`, () => typedRaw.set(opt, ""));
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
    if (!opt.hidden || !typedRaw.has(opt)) continue;
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
