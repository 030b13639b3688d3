/**
 * What every use-case over a KB shares: where the KB and the cases are
 * (`resolveDataPaths`), which cases a run selects (`selectCases`), and a
 * `--config` file read into retrieval settings (`readRetrievalConfig`).
 */
import path from "node:path";
import { InvalidArgumentError } from "../errors.js";
import { readConfigFile, type RetrievalConfig } from "../research/tune-config.js";
import { isLocale, type EvalCase } from "../kb/types.js";
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

/** Throws InvalidArgumentError (exit 2) naming `--locale` unless every value is a canonical BCP-47 tag (`EN` is not: `en` is). */
export function checkLocaleOptions(locales: readonly string[] | undefined): void {
  for (const l of locales ?? [])
    if (!isLocale(l))
      throw new InvalidArgumentError(
        "--locale",
        "a canonical BCP-47 language tag (e.g. en, de, fr-CA, ja, zh-Hans)",
        l,
      );
}

/**
 * `selectCases`, refusing an empty selection (a `--locale` no case has, e.g.
 * `fr` on an en/de KB): InvalidArgumentError naming `--locale/--case`. The
 * same check for retrace's graph and for `--graph`, before anything runs.
 */
export function selectRunCases(cases: readonly EvalCase[], o: { locale?: string[]; case?: string[] }): EvalCase[] {
  const selected = selectCases(cases, o);
  if (selected.length === 0)
    throw new InvalidArgumentError("--locale/--case", "a selection matching at least one case", {
      locale: o.locale ?? [],
      case: o.case ?? [],
    });
  return selected;
}

/** The cases of the given locales and ids (none given: all), in dataset order; an unknown id is an InvalidArgumentError naming `--case`. */
export function selectCases(cases: readonly EvalCase[], o: { locale?: string[]; case?: string[] }): EvalCase[] {
  const ids = new Set(o.case ?? []);
  const known = new Set(cases.map((c) => c.id));
  for (const id of ids)
    if (!known.has(id)) throw new InvalidArgumentError("--case", "the id of a case in the dataset", id);
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
    if (c.bm25 !== undefined)
      log.warn(
        `${file}: locales.${tag}.bm25 is not applied (BM25 k1/b are set for the whole index); using retrieval.bm25`,
      );
  return { retrievalConfig: config.retrieval, localeConfigs: config.locales };
}
