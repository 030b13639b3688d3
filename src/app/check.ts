/**
 * Use-case: the dataset-integrity gate (`retrace check`, `checkData`).
 * Parses and validates the KB, its `analyzers.json` and the eval cases, and
 * counts them per locale and kind, with the paraphrase share measured with
 * the KB's analyzers and the tune/holdout split's parts. Reads only; a
 * problem is a DataValidationError naming file, line and field.
 */
import { lexicalOverlapStats, PARAPHRASE_THRESHOLD, type OverlapStats } from "../research/paraphrase.js";
import { InvalidArgumentError } from "../errors.js";
import { loadKnowledgeBase } from "../kb/cards.js";
import { loadCatalog } from "../kb/catalog.js";
import { loadCases } from "../kb/cases.js";
import { datasetHash, kbHash } from "../kb/hash.js";
import { splitFileFor } from "../kb/load.js";
import { loadSplit, type CaseSplit } from "../kb/split.js";
import { summarize, type Summary } from "../kb/summary.js";
import type { EvalCase } from "../kb/types.js";
import { loadKbAnalyzers } from "../retrieval/analyzer.js";
import { resolveDataPaths, type DataPaths } from "./data.js";

/** Cases and turns per part of the split (docs/holdout.md). */
export interface SplitCounts {
  file: string;
  tune: { cases: number; turns: number };
  holdout: { cases: number; turns: number };
}

/** A valid dataset's counts. */
export interface DataCheck {
  paths: DataPaths;
  /** The catalog file the cases were checked against (`--catalog`), instead of the KB folder. */
  catalog?: string;
  hashes: { kb: string; dataset: string };
  summary: Summary;
  /** null with a catalog (its entries have no text to overlap with). */
  overlap: OverlapStats | null;
  /** null without a split file. */
  split: SplitCounts | null;
}

/** Cases and turns per part of the split, or null without a split file. */
export function splitCounts(split: CaseSplit | null, cases: readonly EvalCase[]): SplitCounts | null {
  if (split === null) return null;
  const count = (part: string) => {
    const cs = cases.filter((c) => split.partOf.get(c.id) === part);
    return { cases: cs.length, turns: cs.reduce((n, c) => n + c.turns.length, 0) };
  };
  return { file: split.file, tune: count("tune"), holdout: count("holdout") };
}

/**
 * Validates the KB (`kb`, default `kb`), its analyzers.json and the cases
 * (`cases`, default `<kb>/eval/cases.jsonl`), and counts them. With `catalog`
 * (an `id<TAB>locale` list standing in for the KB, docs/evaluate-your-graph.md)
 * the cases (`cases`, required) are checked against its entries instead.
 */
export async function checkData(opts: {
  kb?: string;
  cases?: string;
  catalog?: string;
  maxCardBytes?: number;
}): Promise<DataCheck> {
  if (opts.catalog !== undefined) {
    if (opts.kb !== undefined)
      throw new InvalidArgumentError("--kb / --catalog", "one of them, not both", `${opts.kb} / ${opts.catalog}`);
    if (opts.cases === undefined)
      throw new InvalidArgumentError("--cases", "the cases file (required with --catalog)", undefined);
    const kb = await loadCatalog(opts.catalog);
    const cases = await loadCases(opts.cases, kb);
    const split = splitCounts(await loadSplit(splitFileFor(opts.cases), cases), cases);
    return {
      paths: { kb: opts.catalog, cases: opts.cases },
      catalog: opts.catalog,
      hashes: { kb: kbHash(kb), dataset: datasetHash(cases) },
      summary: summarize(kb, cases),
      overlap: null,
      split,
    };
  }
  const paths = resolveDataPaths(opts);
  const kb = await loadKnowledgeBase(
    paths.kb,
    opts.maxCardBytes !== undefined ? { maxCardBytes: opts.maxCardBytes } : {},
  );
  const cases = await loadCases(paths.cases, kb);
  // `<kb>/analyzers.json` is validated with the rest, and the paraphrase measure analyses as the KB's BM25 does (docs/languages.md).
  const { analyzers } = loadKbAnalyzers(paths.kb);
  const summary = summarize(kb, cases);
  const hashes = { kb: kbHash(kb), dataset: datasetHash(cases) };
  const overlap = lexicalOverlapStats(kb, cases, PARAPHRASE_THRESHOLD, analyzers);
  const split = splitCounts(await loadSplit(splitFileFor(paths.cases), cases), cases);
  return { paths, hashes, summary, overlap, split };
}
