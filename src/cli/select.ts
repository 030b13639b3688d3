/** Case selection (`--locale`, `--case`) and the default baseline path, shared by `eval` and `eval --graph`. */
import path from "node:path";
import { InvalidArgumentError } from "../errors.js";
import type { EvalCase } from "../kb/types.js";

export const DEFAULT_BASELINE = path.join("kb", "eval", "baseline.json");

export function selectCases(cases: readonly EvalCase[], o: { locale?: string[]; case?: string[] }): EvalCase[] {
  const ids = new Set(o.case ?? []);
  const known = new Set(cases.map((c) => c.id));
  for (const id of ids) if (!known.has(id)) throw new InvalidArgumentError("--case", "the id of a case in the dataset", id);
  const locales = new Set(o.locale ?? []);
  return cases.filter((c) => (ids.size === 0 || ids.has(c.id)) && (locales.size === 0 || locales.has(c.locale)));
}
