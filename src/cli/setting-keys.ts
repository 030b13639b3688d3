/**
 * The settings of `--config` that were options (src/cli/settings.ts reads
 * them): each config key and the option whose parser checks its value. No
 * imports, so that src/cli/options.ts can name a setting by its key without
 * loading the config reader.
 */

/** A setting of the `run` section or `retrieval.{embedder,mode,rerank}`: its config key and the option that parses it. */
export interface RunSetting {
  /** `run.concurrency`, `retrieval.embedder`. */
  key: string;
  /** The option whose parser and choices check the value: `--concurrency`. */
  flag: string;
  /** An object value, handed over as is (`run.configurable`). */
  object?: boolean;
}

export const RUN_SETTINGS: readonly RunSetting[] = [
  { key: "retrieval.embedder", flag: "--embedder" },
  { key: "retrieval.mode", flag: "--mode" },
  { key: "retrieval.rerank", flag: "--rerank" },
  { key: "run.concurrency", flag: "--concurrency" },
  { key: "run.workers", flag: "--workers" },
  { key: "run.seed", flag: "--seed" },
  { key: "run.resample", flag: "--resample" },
  { key: "run.history", flag: "--history" },
  { key: "run.replay", flag: "--replay" },
  { key: "run.judge", flag: "--judge" },
  { key: "run.judgeCache", flag: "--judge-cache" },
  { key: "run.timeout", flag: "--timeout" },
  { key: "run.maxCardBytes", flag: "--max-card-bytes" },
  { key: "run.turnTimeout", flag: "--turn-timeout" },
  { key: "run.maxStateMb", flag: "--max-state-mb" },
  { key: "run.loadTimeout", flag: "--load-timeout" },
  { key: "run.graphMemoryMb", flag: "--graph-memory-mb" },
  { key: "run.configurable", flag: "--configurable", object: true },
];

/** The config key that replaces `flag`, or undefined. */
export function settingKeyOf(flag: string): string | undefined {
  return RUN_SETTINGS.find((s) => s.flag === flag)?.key;
}
