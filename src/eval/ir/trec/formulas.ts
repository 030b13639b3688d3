/**
 * trec_eval 10's per-query formulas, the way its m_*.c files compute them: average precision, bpref, infAP,
 * nDCG at a cutoff, rbp and its residual. Pure, no I/O; read by ./measures.ts `evaluateQuery`.
 */
import type { EvalSettings, QueryJudgments } from "./judgments.js";
import { INFAP_EPSILON, NONPOOL, RBP_PERSISTENCE, UNJUDGED } from "./judgments.js";

export function averagePrecision(rels: ArrayLike<number>, n: number, numRel: number, L: number, k: number): number {
  if (numRel === 0) return 0;
  let relSoFar = 0;
  let sum = 0;
  const top = Math.min(k, n);
  for (let i = 0; i < top; i++) {
    if ((rels[i] as number) >= L) {
      relSoFar++;
      sum += relSoFar / (i + 1);
    }
  }
  return sum / numRel;
}

/** m_bpref.c: unjudged documents are skipped; each relevant one scores 1 − min(nonrel above, R) / min(N, R). */
export function bpref(rels: ArrayLike<number>, n: number, q: QueryJudgments, L: number): number {
  const R = q.numRel;
  const denom = Math.min(q.numNonrel, R);
  let nonrelSoFar = 0;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const r = rels[i] as number;
    if (r < 0) continue;
    if (r < L) nonrelSoFar++;
    else sum += nonrelSoFar > 0 ? 1 - Math.min(nonrelSoFar, R) / denom : 1;
  }
  return R > 0 ? sum / R : 0;
}

/** m_infap.c (Yilmaz and Aslam): precision above each relevant document estimated from the judged ones. */
export function infAP(rels: ArrayLike<number>, n: number, numRel: number, L: number): number {
  let nonrel = 0;
  let rel = 0;
  let poolUnjudged = 0;
  let sum = 0;
  for (let j = 0; j < n; j++) {
    const r = rels[j] as number;
    if (r === NONPOOL) continue;
    if (r === UNJUDGED) {
      poolUnjudged++;
      continue;
    }
    if (r < L) nonrel++;
    else {
      rel++;
      if (j === 0) sum += 1;
      else {
        const fj = j;
        sum +=
          1 / (fj + 1) +
          (fj / (fj + 1)) *
            ((rel - 1 + nonrel + poolUnjudged) / fj) *
            ((rel - 1 + INFAP_EPSILON) / (rel - 1 + nonrel + 2 * INFAP_EPSILON));
      }
    }
  }
  return numRel > 0 ? sum / numRel : 0;
}

/** A ranked document's gain: its qrels value (graded) or 1 when relevant (binary); 0 when unjudged. */
export function gainOf(r: number, s: EvalSettings): number {
  if (r <= 0) return 0;
  return s.graded ? r : r >= s.relevanceLevel ? 1 : 0;
}

/**
 * m_ndcg_cut.c: DCG of the top k over the ideal DCG of the top k of every
 * judged document sorted by gain (graded: every judged value > 0; binary:
 * the relevant ones, gain 1). 0 when the ideal is 0.
 */
export function ndcgCut(rels: ArrayLike<number>, n: number, q: QueryJudgments, s: EvalSettings, k: number): number {
  let dcg = 0;
  const top = Math.min(k, n);
  for (let i = 0; i < top; i++) {
    const g = gainOf(rels[i] as number, s);
    if (g > 0) dcg += g / Math.log2(i + 2);
  }
  let idcg = 0;
  let i = 0;
  if (s.graded) {
    for (let lvl = q.levels.length - 1; lvl > 0 && i < k; lvl--) {
      const count = q.levels[lvl] as number;
      for (let c = 0; c < count && i < k; c++, i++) idcg += lvl / Math.log2(i + 2);
    }
  } else {
    const count = Math.min(q.numRel, k);
    for (; i < count; i++) idcg += 1 / Math.log2(i + 2);
  }
  return idcg > 0 ? dcg / idcg : 0;
}

/**
 * m_rbp.c (Moffat and Zobel), p = 0.9: (1 − p) Σ gain_i p^(i−1). Graded gains
 * are the qrels values scaled to [0, 1] by the query's highest judged value
 * when it exceeds 1, as trec_eval normalizes them; binary gains are 1 for a
 * relevant document.
 */
export function rbp(rels: ArrayLike<number>, n: number, q: QueryJudgments, s: EvalSettings): number {
  const p = RBP_PERSISTENCE;
  const maxLevel = q.levels.length - 1;
  const scale = s.graded && maxLevel > 1 ? maxLevel : 1;
  let sum = 0;
  let cur = 1;
  for (let i = 0; i < n; i++) {
    const g = gainOf(rels[i] as number, s);
    if (g !== 0) sum += (g / scale) * cur;
    cur *= p;
  }
  return (1 - p) * sum;
}

/**
 * m_rbp_resid.c, p = 0.9: the most rbp could still rise if every unjudged
 * document were relevant, p^n + (1 − p) Σ_{unjudged i} p^(i−1); 0 when the
 * ranking has no unjudged document (trec_eval then leaves the value unset).
 */
export function rbpResid(rels: ArrayLike<number>, n: number): number {
  const p = RBP_PERSISTENCE;
  let unj = 0;
  let sum = 0;
  let cur = 1;
  for (let i = 0; i < n; i++) {
    if ((rels[i] as number) < 0) {
      unj++;
      sum += cur;
    }
    cur *= p;
  }
  return unj > 0 ? cur + (1 - p) * sum : 0;
}
