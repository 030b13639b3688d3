/**
 * What every use-case over a KB shares: where the KB and the cases are
 * (`resolveDataPaths`), which cases a run selects (`selectCases`), and a
 * `--config` file read into retrieval settings (`readRetrievalConfig`).
 */
import path from "node:path";
import { InvalidArgumentError } from "../errors.js";
import { readConfigFile, type RetrievalConfig } from "../eval/ir/tune-config.js";
import type { EvalCase } from "../kb/types.js";
import { log } from "../log.js";

export interface DataPaths {
  kb: string;
  cases: string;
}

/** `kb` (default `kb`) and `cases` (default `<kb>/eval/cases.jsonl`). */
export function resolveDataPaths(opts: { kb?: string; cases?: string }): DataPaths {
  const kb = opts.kb ?? "kb";
  return { kb, cases: opts.cases ?? path.join(kb, "eval", "cases.jsonl") };
}

/** The baseline `eval --graph --update-baseline` writes when no `--baseline` is given. */
export const DEFAULT_BASELINE = path.join("kb", "eval", "baseline.json");

/** The cases of the given locales and ids (none given: all), in dataset order; an unknown id is an InvalidArgumentError naming `--case`. */
export function selectCases(cases: readonly EvalCase[], o: { locale?: string[]; case?: string[] }): EvalCase[] {
  const ids = new Set(o.case ?? []);
  const known = new Set(cases.map((c) => c.id));
  for (const id of ids) if (!known.has(id)) throw new InvalidArgumentError("--case", "the id of a case in the dataset", id);
  const locales = new Set(o.locale ?? []);
  return cases.filter((c) => (ids.size === 0 || ids.has(c.id)) && (locales.size === 0 || locales.has(c.locale)));
}

/** The retrieval settings of a configuration file (retrace tune's output; docs/fusion-and-tuning.md). */
export interface RetrievalSettingsFile {
  /** Its `retrieval` part. */
  retrievalConfig: RetrievalConfig;
  /** Its `locales` part: per-locale overrides applied to the turns of each locale. */
  localeConfigs?: Record<string, RetrievalConfig>;
}

/**
 * Reads a configuration file (exit 2 naming a bad key, before anything
 * starts). A per-locale `bm25` is reported as not applied: k1/b belong to
 * the one BM25 index the retriever builds (docs/fusion-and-tuning.md).
 */
export async function readRetrievalConfig(file: string): Promise<RetrievalSettingsFile> {
  const config = await readConfigFile(file);
  if (config.locales === undefined) return { retrievalConfig: config.retrieval };
  for (const [tag, c] of Object.entries(config.locales))
    if (c.bm25 !== undefined) log.warn(`${file}: locales.${tag}.bm25 is not applied (BM25 k1/b are set for the whole index); using retrieval.bm25`);
  return { retrievalConfig: config.retrieval, localeConfigs: config.locales };
}
