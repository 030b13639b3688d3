/**
 * The one settings schema (docs/configuration.md): the value of every
 * setting of `--config` (a file or inline JSON, on every command that runs
 * with settings) and of the project file's `retrieval` and `run` sections.
 * Each setting is one row of SETTINGS: its key, the attribute the commands
 * read it under (src/cli/setting-keys.ts), the parser that checks a value
 * (the message names the key: ``Expected `run.workers` to be auto or an
 * integer from 1 to 64, got "65"``), its default, the commands that read it
 * and its help (docs/configuration.md lists them from this table). `retrieval.*`
 * and `run.*` are set only here: their old flags are retired spellings
 * (src/cli/old-spellings.ts RETIRED).
 */
import { z } from "zod";
import { EVAL_DEFAULTS } from "../eval-defaults.js";
import { RETRIEVAL_MODES } from "../../contract/trace.js";
import { RESAMPLE_UNITS } from "../../eval/stats/bootstrap.js";
import { REPLAY_MODES } from "../../eval/sweep/replay-modes.js";
import {
  DEFAULT_GRAPH_MEMORY_MB,
  DEFAULT_LOAD_TIMEOUT_S,
  DEFAULT_MAX_STATE_MB,
  DEFAULT_TURN_TIMEOUT_S,
} from "../../eval/sweep/turn-guard.js";
import { intValue, MAX_SEED, numberValue, workersValue } from "./numbers.js";
import { RUN_SETTINGS, type SettingAttribute } from "./keys.js";

const positiveIntOption = (key: string) => intValue(key, { min: 1 });
const countOption = (key: string) => intValue(key, { min: 0 });
const positiveNumberOption = (key: string, unit: string) => numberValue(key, { min: 0, minExclusive: true, unit });
const seedOption = (key: string) => intValue(key, { min: 0, max: MAX_SEED });
const workersOption = workersValue;

/**
 * The commands that take settings (`start` is `eval`): every command but the
 * moved ones (`export`, `baseline`) and `init`; `cases import`, `merge`,
 * `report` and `score` read none, but take `--config` and the project file
 * and check them the same way.
 */
export type SettingsCommand =
  | "eval"
  | "start"
  | "trace"
  | "label"
  | "beir"
  | "tune"
  | "ingest"
  | "compare"
  | "check"
  | "cases import"
  | "cases synth"
  | "merge"
  | "report"
  | "score";

const EVAL = ["eval", "start"] as const satisfies readonly SettingsCommand[];

/** One setting: its value's parser and choices, default, the commands reading it and its help. */
export interface SettingSpec {
  key: string;
  attribute: string;
  /** A string value's parser (numbers are given as their text); throws with a message naming the key. */
  parse?: (raw: string) => unknown;
  choices?: readonly string[];
  /** An object value, handed over as is, or the path of a .json file holding one (`run.configurable`). */
  object?: boolean;
  /** The value when not set, per command (`*`: every command reading it). */
  default?: unknown;
  defaults?: Partial<Record<SettingsCommand, unknown>>;
  commands: readonly SettingsCommand[];
  help: string;
}

const ALL_RETRIEVING = [
  ...EVAL,
  "trace",
  "label",
  "beir",
  "tune",
  "ingest",
] as const satisfies readonly SettingsCommand[];

/** Every setting's row, its literal types kept (the option types are derived from them: `SettingValues`). */
const SETTING_ROWS = [
  {
    key: "retrieval.embedder",
    default: EVAL_DEFAULTS.embedder,
    defaults: { label: undefined },
    commands: ALL_RETRIEVING,
    help: "dense embedder: auto (the embedded LSA), lsa, builtin or a model id (docs/models.md)",
  },
  {
    key: "retrieval.mode",
    choices: RETRIEVAL_MODES,
    default: EVAL_DEFAULTS.mode,
    commands: [...EVAL, "trace"],
    help: `retrieval mode: ${RETRIEVAL_MODES.join(", ")}`,
  },
  {
    key: "retrieval.rerank",
    commands: [...EVAL, "trace", "beir"],
    help: "a local cross-encoder reranker: model or auto (beir: also runs hybrid+rerank)",
  },
  {
    key: "run.concurrency",
    parse: positiveIntOption("run.concurrency"),
    default: EVAL_DEFAULTS.concurrency,
    defaults: { label: undefined },
    commands: [...EVAL, "label"],
    help: `cases in flight (default ${EVAL_DEFAULTS.concurrency})`,
  },
  {
    key: "run.workers",
    parse: workersOption("run.workers"),
    default: 1,
    commands: EVAL,
    help: "worker threads of retrace's own graph: auto or 1 to 64",
  },
  {
    key: "run.seed",
    parse: seedOption("run.seed"),
    default: EVAL_DEFAULTS.seed,
    commands: [...EVAL, "beir", "tune", "compare", "cases synth"],
    help: `seed of the bootstrap intervals, tests and folds, and of the cases cases synth writes (default ${EVAL_DEFAULTS.seed})`,
  },
  {
    key: "run.resample",
    choices: RESAMPLE_UNITS,
    default: "case",
    commands: [...EVAL, "compare"],
    help: `what the bootstrap resamples: ${RESAMPLE_UNITS.join(", ")}`,
  },
  {
    key: "run.history",
    parse: countOption("run.history"),
    commands: [...EVAL, "trace"],
    help: "earlier turns retrace's contextualizer may use to build the query (default: all; 0: the raw message)",
  },
  {
    key: "run.replay",
    choices: REPLAY_MODES,
    commands: [...EVAL, "trace"],
    help: `what earlier turns the graph sees: ${REPLAY_MODES.join(", ")}`,
  },
  {
    key: "run.judge",
    commands: EVAL,
    help: "a module exporting the LangChain chat model that grades answers",
  },
  {
    key: "run.judgeCache",
    default: ".retrace/judge-cache",
    commands: EVAL,
    help: "folder of the judge's cache",
  },
  {
    key: "run.timeout",
    parse: positiveNumberOption("run.timeout", "seconds"),
    commands: ALL_RETRIEVING.filter((c) => c !== "tune"),
    help: "deadline of each Chroma request, seconds",
  },
  {
    key: "run.maxCardBytes",
    parse: positiveIntOption("run.maxCardBytes"),
    commands: [...EVAL, "trace", "label", "tune", "ingest", "check", "cases synth"],
    help: "largest card file read, bytes (default 1048576, or RETRACE_MAX_CARD_BYTES)",
  },
  {
    key: "run.turnTimeout",
    parse: positiveNumberOption("run.turnTimeout", "seconds"),
    default: DEFAULT_TURN_TIMEOUT_S,
    defaults: { label: undefined },
    commands: [...EVAL, "trace", "label"],
    help: `with --graph: deadline of each turn, seconds (default ${DEFAULT_TURN_TIMEOUT_S})`,
  },
  {
    key: "run.callTimeout",
    parse: positiveNumberOption("run.callTimeout", "seconds"),
    default: DEFAULT_TURN_TIMEOUT_S,
    commands: ["cases synth"],
    help: `with cases synth --generator: deadline of each call of the generator (one a card), seconds (default ${DEFAULT_TURN_TIMEOUT_S})`,
  },
  {
    key: "run.maxStateMb",
    parse: positiveNumberOption("run.maxStateMb", "MB"),
    default: DEFAULT_MAX_STATE_MB,
    commands: [...EVAL, "trace"],
    help: `with --graph: largest graph state kept per turn, MB (default ${DEFAULT_MAX_STATE_MB})`,
  },
  {
    key: "run.loadTimeout",
    parse: positiveNumberOption("run.loadTimeout", "seconds"),
    default: DEFAULT_LOAD_TIMEOUT_S,
    commands: [...EVAL, "trace"],
    help: `with --graph: deadline of loading and building the graph, seconds (default ${DEFAULT_LOAD_TIMEOUT_S})`,
  },
  {
    key: "run.graphMemoryMb",
    parse: positiveIntOption("run.graphMemoryMb"),
    default: DEFAULT_GRAPH_MEMORY_MB,
    commands: [...EVAL, "trace"],
    help: `with --graph: heap limit of the graph's thread, MB (default ${DEFAULT_GRAPH_MEMORY_MB})`,
  },
  {
    key: "run.configurable",
    object: true,
    commands: [...EVAL, "trace", "label"],
    help: "with --graph: `configurable` for your graph on every turn (an object, or the path of a .json file)",
  },
] as const satisfies readonly Omit<SettingSpec, "attribute">[];

/** Every setting (the order of RUN_SETTINGS). */
export const SETTINGS: readonly SettingSpec[] = (SETTING_ROWS as readonly Omit<SettingSpec, "attribute">[]).map(
  (s) => ({ ...s, attribute: RUN_SETTINGS.find((r) => r.key === s.key)!.attribute }),
);

type SettingRow = (typeof SETTING_ROWS)[number];

/** The value a setting's row gives, once read: its parser's result, one of its choices, an object (or its path), else a string. */
type ValueOf<R> = R extends { object: true }
  ? string | Record<string, unknown>
  : R extends { parse: (raw: string) => infer T }
    ? T
    : R extends { choices: readonly (infer C)[] }
      ? C
      : string;

/**
 * The settings command `C` reads, as options (each under its attribute,
 * unset when not given): derived from SETTING_ROWS, so a setting added to
 * the schema reaches every options type built on this one
 * (src/app/sources/source.ts `SourceOptions`).
 */
export type SettingValues<C extends SettingsCommand = SettingsCommand> = {
  [R in SettingRow as C extends R["commands"][number] ? SettingAttribute<R["key"]> : never]?: ValueOf<R>;
};

/** The zod schema of the settings command `command` reads, by attribute; `z.infer` of it is `SettingValues<command>`. */
export function settingValuesSchema<C extends SettingsCommand>(command: C): z.ZodType<SettingValues<C>> {
  return z
    .object(Object.fromEntries(settingsOf(command).map((s) => [s.attribute, settingValueSchema(s).optional()])))
    .passthrough() as unknown as z.ZodType<SettingValues<C>>;
}

/** The settings command `name` reads. */
export function settingsOf(name: string): SettingSpec[] {
  return SETTINGS.filter((s) => (s.commands as readonly string[]).includes(name));
}

/** The default of `spec` on command `name` (undefined: none). */
export function defaultOf(spec: SettingSpec, name: string): unknown {
  const own = spec.defaults as Record<string, unknown> | undefined;
  return own !== undefined && name in own ? own[name] : spec.default;
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/** The zod schema of one setting's value: a string or number through its parser and choices, or an object (or a path). */
export function settingValueSchema(spec: SettingSpec): z.ZodType<unknown> {
  return z.unknown().transform((value, ctx) => {
    if (spec.object === true) {
      if (isObject(value) || typeof value === "string") return value;
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: "expected a JSON object (or the path of a .json file holding one)",
      });
      return z.NEVER;
    }
    if (typeof value !== "string" && typeof value !== "number") {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `expected a string or a number, got ${JSON.stringify(value)}`,
      });
      return z.NEVER;
    }
    const raw = String(value);
    if (spec.choices !== undefined && !spec.choices.includes(raw)) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `expected one of ${spec.choices.join(", ")}, got ${JSON.stringify(value)}`,
      });
      return z.NEVER;
    }
    if (spec.parse === undefined) return raw;
    try {
      return spec.parse(raw);
    } catch (e) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: (e as Error).message.replace(/^error: /, "") });
      return z.NEVER;
    }
  });
}

/** The `run` section's schema: every run setting, no other key. */
export const RUN_SECTION_SCHEMA = z
  .object(
    Object.fromEntries(
      SETTINGS.filter((s) => s.key.startsWith("run.")).map((s) => [s.key.slice(4), settingValueSchema(s).optional()]),
    ),
  )
  .strict();
