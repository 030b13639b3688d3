/**
 * The settings of `--config` that select how a run retrieves and runs
 * (docs/configuration.md): each config key and the option attribute the
 * commands read its value under. No imports, so that src/cli/options.ts can
 * name a setting by its key without loading the settings schema
 * (src/app/settings/schema.ts holds each key's value schema and default).
 */

/** A setting of the `run` section or `retrieval.{embedder,mode,rerank}`: its config key and the attribute commands read. */
export interface RunSetting {
  /** `run.concurrency`, `retrieval.embedder`. */
  key: string;
  /** The option attribute the command reads (`concurrency`). */
  attribute: string;
  /** An object value, handed over as is (`run.configurable`). */
  object?: boolean;
}

const RUN_SETTING_ROWS = [
  { key: "retrieval.embedder", attribute: "embedder" },
  { key: "retrieval.mode", attribute: "mode" },
  { key: "retrieval.rerank", attribute: "rerank" },
  { key: "run.concurrency", attribute: "concurrency" },
  { key: "run.workers", attribute: "workers" },
  { key: "run.seed", attribute: "seed" },
  { key: "run.resample", attribute: "resample" },
  { key: "run.history", attribute: "history" },
  { key: "run.replay", attribute: "replay" },
  { key: "run.judge", attribute: "judge" },
  { key: "run.judgeCache", attribute: "judgeCache" },
  { key: "run.timeout", attribute: "timeout" },
  { key: "run.maxCardBytes", attribute: "maxCardBytes" },
  { key: "run.turnTimeout", attribute: "turnTimeout" },
  { key: "run.callTimeout", attribute: "callTimeout" },
  { key: "run.maxStateMb", attribute: "maxStateMb" },
  { key: "run.loadTimeout", attribute: "loadTimeout" },
  { key: "run.graphMemoryMb", attribute: "graphMemoryMb" },
  { key: "run.configurable", attribute: "configurable", object: true },
] as const satisfies readonly RunSetting[];

export const RUN_SETTINGS: readonly RunSetting[] = RUN_SETTING_ROWS;

/** The option attribute a setting's key is read under (`"run.concurrency"` → `"concurrency"`): the type of RUN_SETTINGS' rows. */
export type SettingAttribute<Key extends string = string> = Extract<
  (typeof RUN_SETTING_ROWS)[number],
  { key: Key }
>["attribute"];

/** The config key read under option attribute `attribute`, or undefined. */
export function settingKeyOf(attribute: string): string | undefined {
  return RUN_SETTINGS.find((s) => s.attribute === attribute)?.key;
}
