/**
 * The one reader of settings (docs/configuration.md): a `--config` value (a
 * JSON file, `retrace tune` writes one, or an inline JSON object), the
 * project file's sections, and the settings given to the programmatic API
 * all go through it and the one settings schema (./schema.ts), so that the
 * same bad setting is refused with the same message on every path.
 *
 * - `readSettings` reads and merges `--config` values and layers, in order
 *   (later wins key by key): the `retrieval`, `locales` and `tuned`
 *   sections (tune's file format, src/research/tune-config.ts), the `run`
 *   section and `retrieval.{embedder, mode, rerank}` (the settings of
 *   ./schema.ts SETTINGS), and the `traces` filters.
 * - `resolveSettings` is the API's side: a use-case's options, whose
 *   `config` is read with `readSettings` and whose settings given directly
 *   (`concurrency`, `embedder`, …) are checked by the same schema, naming
 *   the key (``Expected `run.concurrency` to be a positive integer, got "0"``).
 */
import { DataValidationError } from "../../errors.js";
import type { ConfigFile, RetrievalConfig } from "../../research/tune-config.js";
import { parseJsonOrThrow } from "../../kb/json.js";
import { readTextFileOrThrow } from "../../kb/text.js";
import { log } from "../../log.js";
import { parseTraceFilters } from "../../eval/traces/filters.js";
import type { TraceFilters } from "../../eval/traces/types.js";
import { RUN_SETTINGS } from "./keys.js";
import { settingsOf, settingValueSchema, type SettingSpec, type SettingsCommand } from "./schema.js";

type Json = Record<string, unknown>;
const isObject = (x: unknown): x is Json => typeof x === "object" && x !== null && !Array.isArray(x);

/** A settings layer given as an object (the project file's sections, src/cli/project.ts), with where it came from. */
export interface SettingsLayer {
  where: string;
  raw: Json;
}

/** One `--config` value read: a file (a path) or an inline object (a value starting with `{`); a layer object as it is. */
export async function readOne(value: string | SettingsLayer): Promise<{ where: string; raw: Json }> {
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
    const { parseConfig } = await import("../../research/tune-config.js");
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
    const { parseLocaleSpec, formatLocaleSpec } = await import("../../retrieval/embedders/locale-routed.js");
    const parsed = parseLocaleSpec(typeof base?.value === "string" ? base.value : "auto");
    for (const [tag, { value }] of localeEmbedders) parsed.locales[tag] = value;
    const where = [...localeEmbedders.values()].at(-1)!.where;
    settings.set("retrieval.embedder", { value: formatLocaleSpec(parsed), where: base?.where ?? where });
  }
  return { config, settings, ...(traces !== undefined ? { traces } : {}) };
}

/** The value of `spec` checked by its schema, or DataValidationError naming `from` and the key. */
function checkSetting(spec: SettingSpec, value: unknown, from: string): unknown {
  const parsed = settingValueSchema(spec).safeParse(value);
  if (!parsed.success)
    throw new DataValidationError(
      parsed.error.issues.map((i) => ({ file: from, field: spec.key, message: i.message })),
    );
  return parsed.data;
}

/**
 * Checks the settings `command` reads that `options` gives (a use-case that
 * takes no `config`: `runTune`, `ingestKb`, `planLabel`) by the one schema,
 * DataValidationError naming `where` and the key, as `--config` would.
 */
export function checkGivenSettings(command: SettingsCommand, options: object, where: string): void {
  const given = options as Record<string, unknown>;
  for (const spec of settingsOf(command))
    if (given[spec.attribute] !== undefined) checkSetting(spec, given[spec.attribute], where);
}

/** The settings a use-case reads from its options: `config` (a file or an inline JSON object), the sections it sets, and the setting attributes (`concurrency`, `embedder`, …). */
export interface SettingsOptions {
  /** A settings file (`retrace tune` writes one) or an inline JSON object: read as `--config` is (docs/configuration.md). */
  config?: string;
  retrievalConfig?: RetrievalConfig;
  localeConfigs?: Record<string, RetrievalConfig>;
  traceFilters?: TraceFilters;
}

/**
 * The options of a use-case with their settings read and checked the way
 * the CLI reads and checks them (the API's side of the one settings
 * schema): each setting `command` reads that is given directly (e.g.
 * `concurrency: 0`) is checked by its schema, the error naming its key
 * (``Expected `run.concurrency` to be a positive integer, got "0"``) and
 * `where` (the options' name, e.g. `runEval options`); the `retrieval` and
 * `locales` given directly by tune's schema; then `config`, if any, is read
 * with `readSettings`: its settings fill those not given directly (a given
 * option wins, as a flag does over `--config`), a setting the command does
 * not read is DataValidationError naming it, and its sections become
 * `retrievalConfig` / `localeConfigs` (merged under the given ones, key by
 * key) and `traceFilters`. The result has no `config`: nothing downstream
 * reads the file again.
 */
export async function resolveSettings<O extends SettingsOptions>(
  command: SettingsCommand,
  options: O,
  where: string,
): Promise<O> {
  const specs = settingsOf(command);
  const o = { ...options } as O;
  const set = o as Record<string, unknown>;
  const check = checkSetting;
  for (const spec of specs)
    if (set[spec.attribute] !== undefined) set[spec.attribute] = check(spec, set[spec.attribute], where);
  if (o.retrievalConfig !== undefined || o.localeConfigs !== undefined) {
    const { parseConfig } = await import("../../research/tune-config.js");
    const parsed = parseConfig(
      {
        version: 1,
        ...(o.retrievalConfig !== undefined ? { retrieval: o.retrievalConfig } : {}),
        ...(o.localeConfigs !== undefined ? { locales: o.localeConfigs } : {}),
      },
      where,
    );
    if (o.retrievalConfig !== undefined) o.retrievalConfig = parsed.retrieval;
  }
  if (options.config === undefined) return o;
  const read = await readSettings([options.config]);
  delete o.config;
  for (const [key, { value, where: from }] of read.settings) {
    const spec = specs.find((s) => s.key === key);
    if (spec === undefined)
      throw new DataValidationError([{ file: from, field: key, message: `not a setting of retrace ${command}` }]);
    if (set[spec.attribute] === undefined) set[spec.attribute] = check(spec, value, from);
  }
  const { retrieval, locales } = read.config;
  if (Object.keys(retrieval).length > 0) o.retrievalConfig = mergeRetrieval(retrieval, o.retrievalConfig ?? {});
  if (locales !== undefined) {
    const merged: Record<string, RetrievalConfig> = { ...(locales as Record<string, RetrievalConfig>) };
    for (const [tag, c] of Object.entries(o.localeConfigs ?? {})) merged[tag] = mergeRetrieval(merged[tag], c);
    o.localeConfigs = merged;
  }
  if (read.traces !== undefined) o.traceFilters = { ...read.traces, ...o.traceFilters };
  return o;
}
