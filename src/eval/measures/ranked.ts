/**
 * Retrieval metrics over ranked id lists (docs/decisions/0001-metric-contract.md).
 *
 * Pure, synchronous, no I/O. Every metric:
 * - validates `k` (a positive integer, else `InvalidArgumentError`);
 * - deduplicates `ranked` by first occurrence BEFORE the cut, so a duplicate
 *   can neither count a gain twice nor hide a later card;
 * - returns `null` when gold holds no relevant id: nothing to measure is not 0
 *   and not a vacuous 1 (docs/decisions/0002-empty-gold-rule.md);
 * - never mutates its inputs.
 *
 * Gold is either a list / set of relevant ids (binary relevance, every id gain 1)
 * or a map id → graded gain, where an id is relevant when its gain is > 0
 * (trec_eval's relevance_level 1 on integer judgments).
 */
import { InvalidArgumentError } from "../../errors.js";

/** Relevant ids, as a list, a set, or a map id → graded gain (gain > 0 = relevant). */
export type Gold = readonly string[] | ReadonlySet<string> | ReadonlyMap<string, number>;

/**
 * Deduplicate ids keeping the first occurrence of each, in order.
 * `[a, b, a, c, b]` → `[a, b, c]`. Returns a new array; the input is untouched.
 */
export function dedupeFirst(ids: readonly string[]): string[] {
  const seen = new Set<string>();
  const outIds: string[] = [];
  for (const id of ids) {
    if (seen.has(id)) continue;
    seen.add(id);
    outIds.push(id);
  }
  return outIds;
}

function checkK(k: number): void {
  if (typeof k !== "number" || !Number.isInteger(k) || k <= 0) {
    throw new InvalidArgumentError("k", "a positive integer", k);
  }
}

function isGainMap(gold: Gold): gold is ReadonlyMap<string, number> {
  return !Array.isArray(gold) && typeof (gold as { get?: unknown }).get === "function";
}

/** Gold as a map id → gain, relevant ids only (gain > 0). Lists and sets give gain 1. */
function relevantGains(gold: Gold): Map<string, number> {
  const gains = new Map<string, number>();
  if (isGainMap(gold)) {
    for (const [id, gain] of gold) {
      if (typeof gain !== "number" || Number.isNaN(gain) || !Number.isFinite(gain)) {
        throw new InvalidArgumentError(`gold gain of "${id}"`, "a finite number", gain);
      }
      if (gain > 0) gains.set(id, gain);
    }
    return gains;
  }
  for (const id of gold as Iterable<string>) gains.set(id, 1);
  return gains;
}

/**
 * The first `k` distinct ids of `ranked`: first-occurrence dedup, then the
 * cut (fewer than k when the list is short). Not retrieval's `topK`
 * (retrieval/parents.ts), which cuts `Ranked` entries without deduplicating:
 * this one works on bare ids and dedups before the cut, as the metric contract
 * requires (docs/decisions/0001-metric-contract.md), and keeps this module
 * (the `retrace-eval/metrics` entry) free of any retrieval import.
 */
function firstDistinct(ranked: readonly string[], k: number): string[] {
  const seen = new Set<string>();
  const top: string[] = [];
  for (const id of ranked) {
    if (top.length >= k) break;
    if (seen.has(id)) continue;
    seen.add(id);
    top.push(id);
  }
  return top;
}

function hitsInTop(top: readonly string[], gains: ReadonlyMap<string, number>): number {
  let hits = 0;
  for (const id of top) if (gains.has(id)) hits++;
  return hits;
}

/**
 * hit@k (trec_eval `success.k`): 1 when at least one relevant id is among the
 * first k distinct ranked ids, else 0.
 *
 * Edge cases: no relevant gold → null; k larger than the list → the whole
 * (deduplicated) list is the top-k; duplicates are dropped before the cut.
 * Example: gold {a,b}, ranked [c,a,a,d,b], k=3 → top3 = [c,a,d] → 1.
 */
export function hitAtK(ranked: readonly string[], gold: Gold, k: number): number | null {
  checkK(k);
  const gains = relevantGains(gold);
  if (gains.size === 0) return null;
  return hitsInTop(firstDistinct(ranked, k), gains) > 0 ? 1 : 0;
}

/**
 * recall@k (trec_eval `recall.k`): |relevant ∩ top-k| / |relevant|.
 *
 * Under disjunctive gold this is a conservative lower bound (1 of 2 acceptable
 * cards scores 0.5). When k < |relevant| the maximum reachable is k/|relevant|,
 * as in trec_eval. Edge cases: no relevant gold → null; k larger than the list
 * → the whole deduplicated list; duplicates are dropped before the cut.
 * Example: gold {a,b}, ranked [c,a,a,d,b], k=3 → 1/2 = 0.5.
 */
export function recallAtK(ranked: readonly string[], gold: Gold, k: number): number | null {
  checkK(k);
  const gains = relevantGains(gold);
  if (gains.size === 0) return null;
  return hitsInTop(firstDistinct(ranked, k), gains) / gains.size;
}

/**
 * nDCG@k (trec_eval `ndcg_cut.k`): DCG@k / IDCG@k with
 * DCG@k = Σ_{r=1..k} gain(id_r) / log2(r + 1), r the 1-based rank among distinct ids,
 * gain = 1 for a relevant id of a list/set gold, the map's value for a map gold
 * (ids with gain ≤ 0 or absent contribute 0), and IDCG@k the DCG of the relevant
 * gains sorted descending and cut at k (so it holds min(|relevant|, k) terms and
 * the score never exceeds 1).
 *
 * Edge cases: no relevant gold → null; k larger than the list → the whole
 * deduplicated list; duplicates are dropped before the cut.
 * Example: gold {a,b}, ranked [c,a,a,d,b], k=3 → top3 = [c,a,d]:
 * DCG = 1/log2(3); IDCG = 1/log2(2) + 1/log2(3) → (1/log2 3)/(1 + 1/log2 3) ≈ 0.3869.
 */
export function ndcgAtK(ranked: readonly string[], gold: Gold, k: number): number | null {
  checkK(k);
  const gains = relevantGains(gold);
  if (gains.size === 0) return null;
  const top = firstDistinct(ranked, k);
  let dcg = 0;
  for (let i = 0; i < top.length; i++) {
    const gain = gains.get(top[i] as string) ?? 0;
    if (gain > 0) dcg += gain / Math.log2(i + 2);
  }
  const ideal = [...gains.values()].sort((x, y) => y - x);
  const cut = Math.min(ideal.length, k);
  let idcg = 0;
  for (let i = 0; i < cut; i++) idcg += (ideal[i] as number) / Math.log2(i + 2);
  return dcg / idcg;
}

/**
 * precision@k (trec_eval `P.k`): |relevant ∩ top-k| / k. Divides by k even when
 * fewer than k ids were retrieved, as trec_eval does (a short list is not rewarded).
 *
 * Edge cases: no relevant gold → null; duplicates are dropped before the cut.
 * Example: gold {a,b}, ranked [c,a,a,d,b], k=3 → 1/3.
 */
export function precisionAtK(ranked: readonly string[], gold: Gold, k: number): number | null {
  checkK(k);
  const gains = relevantGains(gold);
  if (gains.size === 0) return null;
  return hitsInTop(firstDistinct(ranked, k), gains) / k;
}

/**
 * Reciprocal rank cut at k (MRR@k when averaged): 1 / r where r is the 1-based
 * rank (among distinct ids) of the first relevant id within the top-k; 0 when
 * no relevant id is in the top-k. trec_eval's `recip_rank` is the same with no
 * cut (k = ∞), so it equals this with k ≥ the list length.
 *
 * Edge cases: no relevant gold → null; duplicates are dropped before the cut,
 * so [c,c,a] ranks `a` second.
 * Example: gold {a,b}, ranked [c,a,a,d,b], k=3 → 1/2.
 */
export function reciprocalRankAtK(ranked: readonly string[], gold: Gold, k: number): number | null {
  checkK(k);
  const gains = relevantGains(gold);
  if (gains.size === 0) return null;
  const top = firstDistinct(ranked, k);
  for (let i = 0; i < top.length; i++) {
    if (gains.has(top[i] as string)) return 1 / (i + 1);
  }
  return 0;
}

/**
 * judged@k (ir_measures' `Judged@k`, with one departure): the share of the
 * first k distinct ranked ids that carry a judgment, |top-k ∩ judged| / |top-k|.
 * It says how much of what was retrieved anyone ever labelled, so an unjudged
 * card scored as irrelevant is visible (docs/metrics.md, "judged@k").
 *
 * Departure: ir_measures divides by k (as P@k); this divides by the cards
 * actually in the top-k, so a short list with every card judged scores 1 (a
 * short list has no hole to label). The two agree whenever k or more distinct
 * ids were retrieved.
 *
 * Edge cases: nothing retrieved (empty top-k) → null (nothing to judge);
 * duplicates are dropped before the cut; k larger than the list → the whole
 * deduplicated list. Example: judged {a,c}, ranked [c,a,a,d,b], k=3 → top3 =
 * [c,a,d] → 2/3.
 */
export function judgedAtK(ranked: readonly string[], judged: Iterable<string>, k: number): number | null {
  checkK(k);
  const top = firstDistinct(ranked, k);
  if (top.length === 0) return null;
  const set = new Set(judged);
  let n = 0;
  for (const id of top) if (set.has(id)) n++;
  return n / top.length;
}

/** The first k distinct ranked ids that carry no judgment, in rank order (what judged@k counts as holes). */
export function unjudgedAtK(ranked: readonly string[], judged: Iterable<string>, k: number): string[] {
  checkK(k);
  const set = new Set(judged);
  return firstDistinct(ranked, k).filter((id) => !set.has(id));
}

/**
 * A turn's graded relevance (`relevant`: card id → grade 0–3) as the gold of a
 * graded metric: a map id → gain, gain = grade, as trec_eval's ndcg_cut reads
 * qrels (grade ≤ 0 not relevant). Returns a new map, in key order.
 */
export function gradedGold(relevant: Readonly<Record<string, number>>): Map<string, number> {
  return new Map(Object.entries(relevant));
}

/**
 * judged@k's declaration: not a retrieval-quality metric of METRICS (no
 * floor, no trec_eval measure, no chance level, never a regression), but a
 * measure of how complete the judgments are; it is reported wherever a turn
 * carries judgments (docs/metrics.md).
 */
export const JUDGED = Object.freeze({
  key: "judged_at_k",
  label: "judged@k",
  kDependent: true,
  /**
   * A run whose judged@k is below this level gets a warning naming the turns
   * with unjudged cards in their top-k (docs/metrics.md, "judged@k"): one
   * unjudged card in five retrieved passes, two do not.
   */
  warnBelow: 0.8,
  needsJudgedNonrelevant: true,
  description: "share of the top-k retrieved cards that carry a judgment (judged ∪ relevant ∪ must_cite_one_of)",
} as const);

/**
 * unjudged@k (trec_eval 10's `unj.k`): the number of the first k distinct
 * ranked ids that carry no judgment, divided by k (a short list counts as
 * filled with judged non-relevant ids, as trec_eval defines it).
 * Example: judged {a,c}, ranked [c,a,a,d,b], k=3 → top3 [c,a,d] → 1/3.
 */
export function unjudgedShareAtK(ranked: readonly string[], judged: Iterable<string>, k: number): number {
  return unjudgedAtK(ranked, judged, k).length / k;
}

/**
 * bpref (Buckley and Voorhees; trec_eval's `bpref`) over the whole ranking:
 * ids that carry no judgment are skipped; each relevant id scores
 * 1 − min(judged non-relevant ids above it, R) / min(N, R) (1 when none is
 * above it), and the sum is divided by R (R relevant ids, N judged
 * non-relevant ids). null when nothing is relevant. Duplicates are dropped.
 * Example: relevant {a}, judged non-relevant {x,y}, ranked [x,u,a] →
 * 1 − min(1,1)/min(2,1) = 0.
 */
export function bpref(
  ranked: readonly string[],
  relevant: ReadonlySet<string>,
  judgedNonrelevant: ReadonlySet<string>,
): number | null {
  const R = relevant.size;
  if (R === 0) return null;
  const denom = Math.min(judgedNonrelevant.size, R);
  let above = 0;
  let sum = 0;
  for (const id of dedupeFirst(ranked)) {
    if (relevant.has(id)) sum += above > 0 ? 1 - Math.min(above, R) / denom : 1;
    else if (judgedNonrelevant.has(id)) above++;
  }
  return sum / R;
}
