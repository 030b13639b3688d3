/**
 * Loads what every run measures against: the KB cards and the eval cases,
 * validated together (the dataset-integrity check is always on), their
 * tune/holdout split (docs/holdout.md), the chunks, and the hashes that
 * identify them in reports and baselines.
 */
import path from "node:path";
import { loadKnowledgeBase } from "./cards.js";
import { loadCases } from "./cases.js";
import { chunkKnowledgeBase } from "./chunk.js";
import { datasetHash, kbHash } from "./hash.js";
import { loadSplit, type CaseSplit } from "./split.js";
import type { Chunk, EvalCase, KnowledgeBase } from "./types.js";

export interface LoadedData {
  kb: KnowledgeBase;
  cases: EvalCase[];
  chunks: Chunk[];
  hashes: { kb: string; dataset: string };
  /** The committed tune/holdout split beside the cases file, or null. */
  split: CaseSplit | null;
}

/** The split file of a cases file: `split.json` in the same folder (`<kb>/eval/split.json` for the default cases). */
export function splitFileFor(casesFile: string): string {
  return path.join(path.dirname(casesFile), "split.json");
}

/** `casesFile` null: a KB without eval cases (e.g. the Studio graph over a KB that ships none). */
export async function loadData(kbDir: string, casesFile: string | null, options: { maxCardBytes?: number } = {}): Promise<LoadedData> {
  const kb = await loadKnowledgeBase(kbDir, options);
  const cases = casesFile === null ? [] : await loadCases(casesFile, kb);
  const split = casesFile === null ? null : await loadSplit(splitFileFor(casesFile), cases);
  return { kb, cases, chunks: chunkKnowledgeBase(kb), hashes: { kb: kbHash(kb), dataset: datasetHash(cases) }, split };
}
