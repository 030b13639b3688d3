/**
 * The project's own retrieval benchmark input: the KB's chunks and every
 * gold-bearing turn of the eval set as a query.
 *
 * Query text: the turn's user text; for a turn after the first, the previous
 * turn's user text, a space, then this turn's text (one turn of context, no
 * more, the same for every system). Gold = the turn's `must_cite_one_of`
 * (card ids); turns with empty gold are not queries (they have nothing to
 * measure; docs/metrics.md).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadKnowledgeBase } from "../../src/kb/cards.js";
import { loadCases } from "../../src/kb/cases.js";
import { chunkKnowledgeBase } from "../../src/kb/chunk.js";
import type { CaseKind, Chunk, KnowledgeBase, Locale } from "../../src/kb/types.js";

/** Repository root (bench/lib/ is two levels down). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

export interface EvalQuery {
  caseId: string;
  /** 0-based turn index. */
  turn: number;
  locale: Locale;
  kind: CaseKind;
  text: string;
  gold: string[];
}

export interface EvalSet {
  kb: KnowledgeBase;
  chunks: Chunk[];
  queries: EvalQuery[];
  cases: number;
}

export async function loadEvalSet(root: string = REPO_ROOT): Promise<EvalSet> {
  const kb = await loadKnowledgeBase(path.join(root, "kb"));
  const chunks = chunkKnowledgeBase(kb);
  const cases = await loadCases(path.join(root, "kb", "eval", "cases.jsonl"), kb);
  const queries: EvalQuery[] = [];
  for (const c of cases) {
    c.turns.forEach((t, i) => {
      if (t.must_cite_one_of === undefined || t.must_cite_one_of.length === 0) return;
      const prev = i > 0 ? c.turns[i - 1] : undefined;
      queries.push({
        caseId: c.id,
        turn: i,
        locale: c.locale,
        kind: c.kind,
        text: prev === undefined ? t.user : `${prev.user} ${t.user}`,
        gold: [...(t.must_cite_one_of ?? [])],
      });
    });
  }
  return { kb, chunks, queries, cases: cases.length };
}
