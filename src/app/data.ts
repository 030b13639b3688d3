/**
 * What every use-case over a KB shares: where the KB and the cases are
 * (`resolveDataPaths`) and which cases a run selects (`selectCases`). Settings
 * (`--config`, the project file, the API's `config`) are read by the one
 * settings reader, src/app/settings/read.ts.
 */
import path from "node:path";
import { InvalidArgumentError } from "../errors.js";
import { isLocale, type EvalCase } from "../kb/types.js";

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
