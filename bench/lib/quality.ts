/**
 * Retrieval quality of one system on a query set, with ONE rule for every
 * system: the system's ranked chunk list is mapped to parent card ids, those
 * are deduplicated by first occurrence (`dedupeFirst`) BEFORE the cut, then
 * hit@k and nDCG@k (binary gain) are computed with the project's metric
 * functions (src/eval/measures/metrics.ts).
 */
import { dedupeFirst, hitAtK, ndcgAtK, type Gold } from "../../src/eval/measures/metrics.js";
import { pairedComparison, turnKey, type PairedComparison } from "../../src/eval/stats/bootstrap.js";

export interface ScoredQuery {
  caseId: string;
  turn: number;
  locale: string;
  gold: Gold;
}

export interface Cell {
  n: number;
  hit: number | null;
  ndcg: number | null;
}

export interface Quality extends Cell {
  byLocale: Map<string, Cell>;
  /** Per-query hit@k, keyed `caseId#turn` (for paired comparisons). */
  hits: Map<string, number>;
  ndcgs: Map<string, number>;
}

function meanOf(xs: readonly number[]): number | null {
  return xs.length === 0 ? null : xs.reduce((s, x) => s + x, 0) / xs.length;
}

/**
 * `rankedParents[i]` is query i's ranked list of parent card ids, one per
 * retrieved chunk, duplicates included (they are removed here, first occurrence kept).
 */
export function scoreRankings(
  queries: readonly ScoredQuery[],
  rankedParents: readonly (readonly string[])[],
  k: number,
): Quality {
  if (queries.length !== rankedParents.length) {
    throw new Error(`scoreRankings: ${queries.length} queries but ${rankedParents.length} rankings`);
  }
  const hits = new Map<string, number>();
  const ndcgs = new Map<string, number>();
  const perLocale = new Map<string, { hit: number[]; ndcg: number[] }>();
  const allHit: number[] = [];
  const allNdcg: number[] = [];
  queries.forEach((q, i) => {
    const cards = dedupeFirst(rankedParents[i] ?? []);
    const hit = hitAtK(cards, q.gold, k);
    const ndcg = ndcgAtK(cards, q.gold, k);
    if (hit === null || ndcg === null) return; // no relevant gold: not measured
    const key = turnKey(q.caseId, q.turn);
    hits.set(key, hit);
    ndcgs.set(key, ndcg);
    allHit.push(hit);
    allNdcg.push(ndcg);
    let loc = perLocale.get(q.locale);
    if (loc === undefined) {
      loc = { hit: [], ndcg: [] };
      perLocale.set(q.locale, loc);
    }
    loc.hit.push(hit);
    loc.ndcg.push(ndcg);
  });
  const byLocale = new Map<string, Cell>();
  for (const [locale, v] of [...perLocale].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    byLocale.set(locale, { n: v.hit.length, hit: meanOf(v.hit), ndcg: meanOf(v.ndcg) });
  }
  return { n: allHit.length, hit: meanOf(allHit), ndcg: meanOf(allNdcg), byLocale, hits, ndcgs };
}

/** Paired sign-flip test of B − A on per-query scores (seeded, from src/eval/stats/bootstrap.ts). */
export function comparePaired(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): PairedComparison | null {
  return pairedComparison(a, b, { seed: 42, samples: 10_000 });
}
