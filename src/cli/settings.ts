/**
 * `--config FILE|JSON` and the project file on every command (docs/configuration.md):
 * the settings a run is made with, as a JSON file (`retrace tune` writes
 * one) or an inline JSON object, repeatable (later values win key by key).
 *
 * ```json
 * { "version": 1,
 *   "retrieval": { "embedder": "lsa", "mode": "hybrid", "rerank": "model", "denseK": 20, "bm25K": 50, "fusion": "signals", ... },
 *   "locales": { "en": { ... per-locale retrieval keys ... } },
 *   "run": { "concurrency": 8, "seed": 7, "judge": "./judge.ts", "turnTimeout": 60, ... },
 *   "tuned": { ... } }
 * ```
 *
 * The `retrieval`, `locales` and `tuned` sections are tune's file format
 * (src/research/tune-config.ts validates them); `retrieval.{embedder, mode,
 * rerank}` and the `run` section are the settings that were options before
 * (RUN_SETTINGS: each key and the option whose parser checks its value).
 * The values are set on the command as if given with source `config`, so
 * everything downstream reads them as it read the options, and a mode that
 * does not use a setting refuses it naming the key (each source's module in src/app/sources/,
 * src/cli/options.ts refuseUnusedSettings).
 */
import type { Command } from "commander";
import { DataValidationError } from "../errors.js";
import { readSettings } from "../app/settings/read.js";
import { commandPath, refuseOldSpellings } from "./old-spellings.js";
import { defaultOf, settingsOf, settingValueSchema } from "../app/settings/schema.js";
import { findProject, PROJECT_OPTION_KEYS, projectConfigLayer, type Project } from "./project.js";

export { RUN_SETTINGS, settingKeyOf, type RunSetting } from "../app/settings/keys.js";
export { readSettings, type MergedSettings, type SettingsLayer } from "../app/settings/read.js";

/** The option value source of a setting read from `--config` (commander's sources are "default", "env", "cli", "implied"; this one is ours). */
export const CONFIG_SOURCE = "config";

/** What a command does with the `retrieval` / `locales` sections (other than retrieval.{embedder,mode,rerank}). */
export interface SettingsUse {
  /** The command retrieves with them (eval, trace, beir): they become `retrievalConfig` / `localeConfigs`; else they are refused naming the key. */
  retrieval?: boolean;
  /** Why the sections are not used, for the message (default: "not a setting of retrace NAME"). */
  retrievalWhy?: string;
  /** The project file's `outputs` become `--out` when none is typed (eval, start; default: no). */
  projectOutputs?: boolean;
  /** Whether the project file applies to this run at all (default: always; `label --merge` reads an export). */
  projectWhen?: (actionCmd: Command) => boolean;
  /**
   * The project file's run-selecting keys this command takes as defaults
   * (default: every one it has an option of). A command whose option of the
   * same name means something else (`score -k`: trec_eval cutoffs, not the
   * cards scored per turn) names only those that mean the same.
   */
  projectKeys?: readonly (typeof PROJECT_OPTION_KEYS)[number][];
  /** Whether the project file's `gates` become `--gate` when none is typed (default: yes, on a command with `--gate`). */
  projectGates?: boolean;
}

/**
 * Adds `--config <file|json>` (repeatable) and a preAction hook that reads
 * the values and the project file's sections through the one settings
 * schema (src/app/settings/schema.ts): sets `retrievalConfig` /
 * `localeConfigs` (when the command retrieves with them) and every setting
 * the command reads (settingsOf) on the command with source `config`, its
 * default with source `default` when none is set. A setting the command does
 * not read is exit 2 naming it (the project file's are left alone: it serves
 * every command). An old spelling typed is exit 2 naming the new one first.
 */
export function addConfigOption(cmd: Command, use: SettingsUse = {}): Command {
  cmd.option(
    "--config <file|json>",
    "settings: a JSON file (retrace tune writes one) or an inline JSON object, repeatable (later wins): retrieval (embedder, mode, rerank, denseK, bm25K, fusion, ...), per-locale retrieval, run (concurrency, seed, judge, history, turnTimeout, ...); docs/configuration.md",
    (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
  );
  return applySettingsHook(cmd, use);
}

/** The preAction hook of addConfigOption (for a command that registers `--config` itself). */
export function applySettingsHook(cmd: Command, use: SettingsUse = {}): Command {
  return cmd.hook("preAction", async (_self, actionCmd) => {
    refuseOldSpellings(actionCmd); // first: an old spelling typed is exit 2 naming the new one
    const name = commandPath(actionCmd); // as typed: `cases synth`, not `synth`
    const specs = settingsOf(name);
    // The project file (src/cli/project.ts): its options as defaults, its sections as the first --config layer.
    const project = use.projectWhen === undefined || use.projectWhen(actionCmd) ? findProject() : null;
    const layer =
      project !== null
        ? applyProject(actionCmd, project, {
            outputs: use.projectOutputs === true,
            gates: use.projectGates !== false,
            ...(use.projectKeys !== undefined ? { keys: use.projectKeys } : {}),
          })
        : null;
    const values = (actionCmd.getOptionValue("config") as string[] | undefined) ?? [];
    const read =
      values.length === 0 && layer === null ? null : await readSettings(layer !== null ? [layer, ...values] : values);
    if (read !== null) {
      const { config, settings, traces } = read;
      if (traces !== undefined) actionCmd.setOptionValueWithSource("traceFilters", traces, CONFIG_SOURCE);
      actionCmd.setOptionValueWithSource("config", undefined, CONFIG_SOURCE);
      // As typed, for the "Next:" lines (src/cli/next-steps.ts); the project file's layer is found again by the commands they print.
      if (values.length > 0) actionCmd.setOptionValueWithSource("configArgs", [...values], CONFIG_SOURCE);
      const hasRetrieval = Object.keys(config.retrieval).length > 0 || config.locales !== undefined;
      if (hasRetrieval && use.retrieval === true) {
        actionCmd.setOptionValueWithSource("retrievalConfig", config.retrieval, CONFIG_SOURCE);
        if (config.locales !== undefined)
          actionCmd.setOptionValueWithSource("localeConfigs", config.locales, CONFIG_SOURCE);
      } else if (hasRetrieval && values.length > 0) {
        // Only a --config value's own sections are refused: the project file's serve the commands that retrieve.
        const fromValues = await readSettings(values);
        const key =
          Object.keys(fromValues.config.retrieval).map((k) => `retrieval.${k}`)[0] ??
          (fromValues.config.locales !== undefined ? "locales" : undefined);
        if (key !== undefined)
          throw new DataValidationError([
            { file: "--config", field: key, message: use.retrievalWhy ?? `not a setting of retrace ${name}` },
          ]);
      }
      for (const [key, { value, where }] of settings) {
        const spec = specs.find((s) => s.key === key);
        if (spec === undefined) {
          if (layer !== null && where === layer.where) continue; // the project file serves every command: a setting of others is left alone
          throw new DataValidationError([{ file: where, field: key, message: `not a setting of retrace ${name}` }]);
        }
        if (actionCmd.getOptionValueSource(spec.attribute) === "cli") continue;
        const parsed = settingValueSchema(spec).safeParse(value);
        if (!parsed.success)
          throw new DataValidationError(
            parsed.error.issues.map((i) => ({ file: where, field: key, message: i.message })),
          );
        actionCmd.setOptionValueWithSource(spec.attribute, parsed.data, CONFIG_SOURCE);
      }
    }
    // Each setting's default, where none was set.
    for (const spec of specs) {
      const d = defaultOf(spec, name);
      if (d !== undefined && actionCmd.getOptionValue(spec.attribute) === undefined)
        actionCmd.setOptionValueWithSource(spec.attribute, d, "default");
    }
  });
}

/**
 * Sets the project file's run-selecting keys on the command as defaults
 * (source `config`): an option typed wins, and a source typed (`--graph`,
 * `--traces`) or a data folder typed (`--kb`, `--catalog`) leaves the
 * project's other one out. Its `gates` and `outputs` are the `--gate` and
 * `--out` values when none is typed (`outputs: false`: a command whose
 * `--out` writes something else than a run's report, `label`). Keys of options the command does not
 * have are left alone (the file serves every command). Returns the
 * project's `--config` layer.
 */
export function applyProject(
  actionCmd: Command,
  project: Project,
  {
    outputs = true,
    gates = true,
    keys = PROJECT_OPTION_KEYS,
  }: { outputs?: boolean; gates?: boolean; keys?: readonly (typeof PROJECT_OPTION_KEYS)[number][] } = {},
): ReturnType<typeof projectConfigLayer> {
  const typed = (attr: string) => actionCmd.getOptionValueSource(attr) === "cli";
  const has = (attr: string) => actionCmd.options.some((o) => o.attributeName() === attr);
  const sourceTyped = typed("graph") || typed("traces");
  const dataTyped = typed("kb") || typed("catalog");
  const s = project.settings;
  for (const key of keys) {
    const v = s[key];
    if (v === undefined || !has(key) || typed(key)) continue;
    if ((key === "graph" || key === "traces") && sourceTyped) continue;
    if ((key === "kb" || key === "catalog") && dataTyped) continue;
    actionCmd.setOptionValueWithSource(key, v, CONFIG_SOURCE);
  }
  // `--update-baseline` writes the baseline: the project's gates (which compare with one) are for the runs after it.
  if (gates && s.gates !== undefined && has("gate") && !typed("gate") && !typed("updateBaseline"))
    actionCmd.setOptionValueWithSource("gate", [...s.gates], CONFIG_SOURCE);
  if (outputs && s.outputs !== undefined && has("out") && !typed("out"))
    actionCmd.setOptionValueWithSource("out", [...s.outputs], CONFIG_SOURCE);
  return projectConfigLayer(project);
}
