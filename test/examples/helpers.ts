/**
 * Independent per-turn expectations for the examples' tests: the test asks
 * the example's retriever itself for each turn's query (the example agent
 * searches with the latest user message), collapses documents to cards by
 * metadata.parentId, and computes hit/recall/nDCG@k with the formulas
 * written out here — not with retrace's metric functions.
 */
import { readFileSync } from "node:fs";
import type { DocumentInterface } from "@langchain/core/documents";
import { expect } from "vitest";

export interface CaseLine {
  id: string;
  turns: { user: string; must_cite_one_of: string[] }[];
}

export function readCases(file: string): CaseLine[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as CaseLine);
}

/** Card ids by first occurrence of metadata.parentId. */
export function cards(docs: readonly DocumentInterface[]): string[] {
  const out: string[] = [];
  for (const d of docs) {
    const id = String(d.metadata.parentId);
    if (!out.includes(id)) out.push(id);
  }
  return out;
}

/**
 * hit@k = 1 if any gold card is in the top k; recall@k = |gold ∩ top k| / |gold|;
 * nDCG@k = Σ_{gold at 1-based rank r ≤ k} 1/log2(r+1) divided by Σ_{r=1..min(|gold|,k)} 1/log2(r+1).
 */
export function handMetrics(
  ranked: readonly string[],
  gold: readonly string[],
  k: number,
): { hit: number; recall: number; ndcg: number } {
  const top = ranked.slice(0, k);
  const found = gold.filter((g) => top.includes(g));
  let dcg = 0;
  top.forEach((id, i) => {
    if (gold.includes(id)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let r = 1; r <= Math.min(gold.length, k); r++) ideal += 1 / Math.log2(r + 1);
  return { hit: found.length > 0 ? 1 : 0, recall: found.length / gold.length, ndcg: dcg / ideal };
}

interface ReportTurn {
  caseId: string;
  turn: number;
  retrievedIds: string[] | null;
  results: { key: string; score: number }[];
}

/**
 * Asserts every gold-bearing turn of `report` against the hand computation on
 * `rankedFor(query)`; returns how many turns were checked.
 */
export async function expectTurnsMatch(
  report: { turns: ReportTurn[] },
  cases: readonly CaseLine[],
  k: number,
  rankedFor: (query: string) => Promise<string[]>,
): Promise<number> {
  let checked = 0;
  for (const c of cases) {
    for (const [i, t] of c.turns.entries()) {
      const got = report.turns.find((x) => x.caseId === c.id && x.turn === i);
      expect(got, `${c.id}#${i} in the report`).toBeDefined();
      const ranked = await rankedFor(t.user);
      expect(got!.retrievedIds, `${c.id}#${i} ranked ids`).toEqual(ranked.slice(0, k));
      if (t.must_cite_one_of.length === 0) {
        expect(got!.results.filter((r) => r.key.startsWith("retrieval_"))).toEqual([]);
        continue;
      }
      const want = handMetrics(ranked, t.must_cite_one_of, k);
      const score = (key: string) => got!.results.find((r) => r.key === key)?.score;
      expect(score("retrieval_hit_at_k"), `${c.id}#${i} hit`).toBe(want.hit);
      expect(score("retrieval_recall_at_k"), `${c.id}#${i} recall`).toBeCloseTo(want.recall, 12);
      expect(score("retrieval_ndcg_at_k"), `${c.id}#${i} ndcg`).toBeCloseTo(want.ndcg, 12);
      checked += 1;
    }
  }
  return checked;
}
