/**
 * `--config FILE|JSON` on `eval`, `start` and `trace` (docs/configuration.md):
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
import type { ConfigFile, RetrievalConfig } from "../research/tune-config.js";
import { parseJsonOrThrow } from "../kb/json.js";
import { readTextFileOrThrow } from "../kb/text.js";
import { log } from "../log.js";
import { parseTraceFilters } from "../eval/traces/filters.js";
import type { TraceFilters } from "../eval/traces/types.js";
import { refuseOldSpellings } from "./old-spellings.js";
import { RUN_SETTINGS } from "./setting-keys.js";
import { defaultOf, settingsOf, settingValueSchema } from "./settings-schema.js";
import { findProject, PROJECT_OPTION_KEYS, projectConfigLayer, type Project } from "./project.js";

export { RUN_SETTINGS, settingKeyOf, type RunSetting } from "./setting-keys.js";

/** The option value source of a setting read from `--config` (commander's sources are "default", "env", "cli", "implied"; this one is ours). */
export const CONFIG_SOURCE = "config";

type Json = Record<string, unknown>;
const isObject = (x: unknown): x is Json => typeof x === "object" && x !== null && !Array.isArray(x);

/** A settings layer given as an object (the project file's sections, src/cli/project.ts), with where it came from. */
export interface SettingsLayer {
  where: string;
  raw: Json;
}

/** One `--config` value read: a file (a path) or an inline object (a value starting with `{`); a layer object as it is. */
async function readOne(value: string | SettingsLayer): Promise<{ where: string; raw: Json }> {
  if (typeof value !== "string") return value;
  const inline = value.trimStart().startsWith("{");
  const where = inline ? "--config" : value;
  const raw = inline
    ? parseJsonOrThrow(value, {
        file: "--config",
        expected: "an inline JSON object of settings (docs/configuration.md)",
      })
    : parseJsonOrThrow(await readTextFileOrThrow(value), {
        file: value,
        expected: "a retrace config JSON file (docs/configuration.md)",
      });
  if (!isObject(raw))
    throw new DataValidationError([
      { file: where, field: "(root)", message: "expected a JSON object of settings (docs/configuration.md)" },
    ]);
  // A file says its format version; an inline object may leave it out.
  return { where, raw: inline && !("version" in raw) ? { version: 1, ...raw } : raw };
}

/** Merges retrieval sections key by key (weights and bm25 by their own keys). */
function mergeRetrieval(a: RetrievalConfig | undefined, b: RetrievalConfig): RetrievalConfig {
  if (a === undefined) return b;
  return {
    ...a,
    ...b,
    ...(a.weights !== undefined || b.weights !== undefined ? { weights: { ...a.weights, ...b.weights } } : {}),
    ...(a.bm25 !== undefined || b.bm25 !== undefined ? { bm25: { ...a.bm25, ...b.bm25 } } : {}),
  };
}

/** What the `--config` values give, merged in order. */
export interface MergedSettings {
  config: ConfigFile;
  /** Each setting's value and where it came from (a file, or `--config`). */
  settings: Map<string, { value: unknown; where: string }>;
  /** The `traces` sections (filters of `eval --traces`), merged key by key; undefined when no value has one. */
  traces?: TraceFilters;
}

/** Reads and merges every `--config` value (exit 2 naming the file and key of a bad one). */
export async function readSettings(values: readonly (string | SettingsLayer)[]): Promise<MergedSettings> {
  const settings = new Map<string, { value: unknown; where: string }>();
  let config: ConfigFile = { version: 1, retrieval: {} };
  let traces: TraceFilters | undefined;
  const localeEmbedders = new Map<string, { value: string; where: string }>();
  for (const value of values) {
    const { where, raw } = await readOne(value);
    const rest: Json = { ...raw };
    const run = rest.run;
    delete rest.run;
    if (rest.traces !== undefined) {
      traces = { ...traces, ...parseTraceFilters(rest.traces, where) };
      delete rest.traces;
    }
    if (run !== undefined) {
      if (!isObject(run))
        throw new DataValidationError([{ file: where, field: "run", message: "expected an object of run settings" }]);
      for (const [k, v] of Object.entries(run)) {
        if (!RUN_SETTINGS.some((s) => s.key === `run.${k}`))
          throw new DataValidationError([
            {
              file: where,
              field: `run.${k}`,
              message: `unknown key (run settings: ${RUN_SETTINGS.filter((s) => s.key.startsWith("run."))
                .map((s) => s.key.slice(4))
                .join(", ")})`,
            },
          ]);
        settings.set(`run.${k}`, { value: v, where });
      }
    }
    if (isObject(rest.retrieval)) {
      const retrieval = { ...rest.retrieval };
      for (const k of ["embedder", "mode", "rerank"])
        if (k in retrieval) {
          settings.set(`retrieval.${k}`, { value: retrieval[k], where });
          delete retrieval[k];
        }
      rest.retrieval = retrieval;
    }
    // `locales.<tag>.embedder`: a model for that locale's texts (docs/models.md, "Per-locale embedders"), folded into retrieval.embedder's spec below.
    if (isObject(rest.locales)) {
      const locs: Json = {};
      for (const [tag, c] of Object.entries(rest.locales)) {
        if (isObject(c) && "embedder" in c) {
          const { embedder, ...others } = c;
          if (typeof embedder !== "string" || embedder.trim() === "" || /[;=]/.test(embedder))
            throw new DataValidationError([
              {
                file: where,
                field: `locales.${tag}.embedder`,
                message: "expected an embedder spec (a model id, lsa, auto)",
              },
            ]);
          localeEmbedders.set(tag, { value: embedder.trim(), where });
          if (Object.keys(others).length > 0) locs[tag] = others;
        } else locs[tag] = c;
      }
      rest.locales = locs;
    }
    // Loaded on use: the schema pulls in the fusion registry, which `--help` does not need.
    const { parseConfig } = await import("../research/tune-config.js");
    const parsed = parseConfig(rest, where);
    const locales: Record<string, RetrievalConfig> = {
      ...(config.locales as Record<string, RetrievalConfig> | undefined),
    };
    for (const [tag, c] of Object.entries((parsed.locales ?? {}) as Record<string, RetrievalConfig>)) {
      if (c.bm25 !== undefined)
        log.warn(
          `${where}: locales.${tag}.bm25 is not applied (BM25 k1/b are set for the whole index); using retrieval.bm25`,
        );
      locales[tag] = mergeRetrieval(locales[tag], c);
    }
    config = {
      version: 1,
      retrieval: mergeRetrieval(config.retrieval, parsed.retrieval),
      ...(Object.keys(locales).length > 0 ? { locales } : {}),
      ...(parsed.tuned !== undefined || config.tuned !== undefined
        ? { tuned: { ...config.tuned, ...parsed.tuned } }
        : {}),
    };
  }
  if (localeEmbedders.size > 0) {
    const base = settings.get("retrieval.embedder");
    const { parseLocaleSpec, formatLocaleSpec } = await import("../retrieval/embedders/locale-routed.js");
    const parsed = parseLocaleSpec(typeof base?.value === "string" ? base.value : "auto");
    for (const [tag, { value }] of localeEmbedders) parsed.locales[tag] = value;
    const where = [...localeEmbedders.values()].at(-1)!.where;
    settings.set("retrieval.embedder", { value: formatLocaleSpec(parsed), where: base?.where ?? where });
  }
  return { config, settings, ...(traces !== undefined ? { traces } : {}) };
}

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
}

/**
 * Adds `--config <file|json>` (repeatable) and a preAction hook that reads
 * the values and the project file's sections through the one settings
 * schema (src/cli/settings-schema.ts): sets `retrievalConfig` /
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
    const name = actionCmd.name();
    const specs = settingsOf(name);
    // The project file (src/cli/project.ts): its options as defaults, its sections as the first --config layer.
    const project = use.projectWhen === undefined || use.projectWhen(actionCmd) ? findProject() : null;
    const layer = project !== null ? applyProject(actionCmd, project, { outputs: use.projectOutputs === true }) : null;
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
  { outputs = true }: { outputs?: boolean } = {},
): ReturnType<typeof projectConfigLayer> {
  const typed = (attr: string) => actionCmd.getOptionValueSource(attr) === "cli";
  const has = (attr: string) => actionCmd.options.some((o) => o.attributeName() === attr);
  const sourceTyped = typed("graph") || typed("traces");
  const dataTyped = typed("kb") || typed("catalog");
  const s = project.settings;
  for (const key of PROJECT_OPTION_KEYS) {
    const v = s[key];
    if (v === undefined || !has(key) || typed(key)) continue;
    if ((key === "graph" || key === "traces") && sourceTyped) continue;
    if ((key === "kb" || key === "catalog") && dataTyped) continue;
    actionCmd.setOptionValueWithSource(key, v, CONFIG_SOURCE);
  }
  // `--update-baseline` writes the baseline: the project's gates (which compare with one) are for the runs after it.
  if (s.gates !== undefined && has("gate") && !typed("gate") && !typed("updateBaseline"))
    actionCmd.setOptionValueWithSource("gate", [...s.gates], CONFIG_SOURCE);
  if (outputs && s.outputs !== undefined && has("out") && !typed("out"))
    actionCmd.setOptionValueWithSource("out", [...s.outputs], CONFIG_SOURCE);
  return projectConfigLayer(project);
}
