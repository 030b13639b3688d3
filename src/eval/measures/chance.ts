/**
 * Chance levels of the retrieval metrics (docs/statistics.md, "Chance
 * levels"): the exact expected value of each metric when the top-k is a
 * uniformly random ranking of the N cards of the turn's locale, for the same
 * gold set (g distinct gold cards, all in that locale) and the same k. A
 * reported mean is only informative next to this number: with 10 cards and
 * k = 5, a random ranking already scores hit@5 = 0.5 for a one-card gold.
 *
 * Notation: K = min(k, N) ranks are filled; under a uniform random
 * permutation each rank holds a gold card with probability g/N.
 *
 * Pure functions; N, g and k are counts (no units). Each metric of the
 * registry (./metrics.ts) names its chance function in its `chance` field;
 * `chanceLevel` there looks one up by key.
 */
import { InvalidArgumentError } from "../../errors.js";

function check(N: number, g: number, k: number): void {
  if (!Number.isInteger(N) || N <= 0) throw new InvalidArgumentError("card count N", "a positive integer", N);
  if (!Number.isInteger(g) || g <= 0 || g > N)
    throw new InvalidArgumentError("gold count g", `an integer between 1 and N=${N}`, g);
  if (!Number.isInteger(k) || k <= 0) throw new InvalidArgumentError("k", "a positive integer", k);
}

/**
 * P(no gold in the first r ranks) = C(N − g, r) / C(N, r) = Π_{i=0}^{r−1} (N − g − i)/(N − i)
 * (0 once r > N − g).
 */
function missFirst(N: number, g: number, r: number): number {
  let p = 1;
  for (let i = 0; i < r; i++) {
    const num = N - g - i;
    if (num <= 0) return 0;
    p *= num / (N - i);
  }
  return p;
}

/** E[hit@k] = 1 − C(N − g, K)/C(N, K). Example: N=10, g=1, k=5 → 1 − 9·8·7·6·5/(10·9·8·7·6) = 0.5. */
export function chanceHit(N: number, g: number, k: number): number {
  check(N, g, k);
  return 1 - missFirst(N, g, Math.min(k, N));
}

/** E[recall@k] = E[|gold ∩ top-K|]/g = K·(g/N)/g = K/N. Example: N=10, k=5 → 0.5 whatever g. */
export function chanceRecall(N: number, g: number, k: number): number {
  check(N, g, k);
  return Math.min(k, N) / N;
}

/** E[P@k] = E[|gold ∩ top-K|]/k = K·g/(N·k) (P@k divides by k even when K < k). */
export function chancePrecision(N: number, g: number, k: number): number {
  check(N, g, k);
  return (Math.min(k, N) * g) / (N * k);
}

/**
 * E[nDCG@k] with binary gains = E[DCG]/IDCG, IDCG being a constant for a given
 * g and k: E[DCG] = (g/N)·Σ_{r=1}^{K} 1/log2(r + 1), IDCG = Σ_{r=1}^{min(g,k)} 1/log2(r + 1).
 * Example: N=4, g=1, k=2 → (1/4)(1 + 1/log2 3) / 1 ≈ 0.4077.
 */
export function chanceNdcg(N: number, g: number, k: number): number {
  check(N, g, k);
  let dcg = 0;
  for (let r = 1; r <= Math.min(k, N); r++) dcg += 1 / Math.log2(r + 1);
  let idcg = 0;
  for (let r = 1; r <= Math.min(g, k); r++) idcg += 1 / Math.log2(r + 1);
  return ((g / N) * dcg) / idcg;
}

/**
 * E[nDCG@k] with graded gains (a turn's `relevant`, docs/metrics.md): under a
 * uniform random permutation each rank holds any given card with probability
 * 1/N, so E[DCG] = (Σ gains / N)·Σ_{r=1}^{K} 1/log2(r + 1); IDCG is the DCG of
 * the gains sorted descending, cut at k. Gains ≤ 0 are not relevant and left
 * out. With every gain 1 this is `chanceNdcg`. Example: N=4, gains [3,1],
 * k=2 → (4/4)(1 + 1/log2 3) / (3 + 1/log2 3) ≈ 0.4492.
 */
export function chanceNdcgGraded(N: number, gains: readonly number[], k: number): number {
  const positive = gains.filter((x) => x > 0).sort((a, b) => b - a);
  check(N, positive.length, k);
  let dcg = 0;
  for (let r = 1; r <= Math.min(k, N); r++) dcg += 1 / Math.log2(r + 1);
  let idcg = 0;
  for (let r = 1; r <= Math.min(positive.length, k); r++) idcg += (positive[r - 1] as number) / Math.log2(r + 1);
  const total = positive.reduce((a, b) => a + b, 0);
  return ((total / N) * dcg) / idcg;
}

/**
 * E[RR@k] = Σ_{r=1}^{K} (1/r)·P(first gold at rank r), with
 * P(first gold at r) = [C(N − g, r − 1)/C(N, r − 1)]·g/(N − r + 1).
 * Example: N=3, g=1, k=3 → (1 + 1/2 + 1/3)/3 ≈ 0.6111.
 */
export function chanceMrr(N: number, g: number, k: number): number {
  check(N, g, k);
  let e = 0;
  for (let r = 1; r <= Math.min(k, N); r++) e += (missFirst(N, g, r - 1) * g) / (N - r + 1) / r;
  return e;
}

/** Fraction of a locale's cards at or above which a warning is printed (k ≥ N/3). */
export const SMALL_KB_FRACTION = 1 / 3;

/**
 * The warning for a locale whose card count is small against k (k ≥ N/3), or
 * null. The chance hit@k quoted is for a one-card gold set.
 */
export function smallKbWarning(locale: string, N: number, k: number): string | null {
  if (k < N * SMALL_KB_FRACTION) return null;
  return `k=${k} is at least a third of the ${N} ${locale} cards: a random ranking already scores hit@${k} = ${chanceHit(N, 1, k).toFixed(3)} for a one-card gold; read every ${locale} figure against its chance level`;
}

/** N of the chance levels: the number of cards (or catalog entries) of each locale. */
export function cardsPerLocale(cards: readonly { locale: string }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const c of cards) counts[c.locale] = (counts[c.locale] ?? 0) + 1;
  return counts;
}
