/**
 * Loads what every run measures against: the KB cards and the eval cases,
 * validated together (the dataset-integrity check is always on), the chunks,
 * and the hashes that identify them in reports and baselines.
 */
import { loadKnowledgeBase } from "./cards.js";
import { loadCases } from "./cases.js";
import { chunkKnowledgeBase } from "./chunk.js";
import { datasetHash, kbHash } from "./hash.js";
import type { Chunk, EvalCase, KnowledgeBase } from "./types.js";

export interface LoadedData {
  kb: KnowledgeBase;
  cases: EvalCase[];
  chunks: Chunk[];
  hashes: { kb: string; dataset: string };
}

/** `casesFile` null: a KB without eval cases (e.g. the Studio graph over a KB that ships none). */
export async function loadData(kbDir: string, casesFile: string | null): Promise<LoadedData> {
  const kb = await loadKnowledgeBase(kbDir);
  const cases = casesFile === null ? [] : await loadCases(casesFile, kb);
  return { kb, cases, chunks: chunkKnowledgeBase(kb), hashes: { kb: kbHash(kb), dataset: datasetHash(cases) } };
}
