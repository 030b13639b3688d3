/**
 * What trec_eval's measures read of one query (docs/metrics.md, "retrace score"): the markers of unlisted and
 * unjudged documents, the counts of its judgments, the evaluation settings, and trec_eval's constants.
 * Re-exported by ./measures.ts.
 */

/** A retrieved document the qrels do not list. */
export const NONPOOL = -1;
/** A retrieved document the qrels list with a negative value (pooled, not judged). */
export const UNJUDGED = -2;
/** trec_eval.h: the floor of a value in a geometric mean (gm_map, gm_bpref). */
export const MIN_GEO_MEAN = 0.00001;
/** trec_eval.h: infAP's smoothing constant. */
export const INFAP_EPSILON = 0.00001;
/** m_rbp.c: rbp's persistence when not given. */
export const RBP_PERSISTENCE = 0.9;

/** One query's judgments, as counts: what trec_eval's form_res_rels gives every measure. */
export interface QueryJudgments {
  /** levels[r] = judged documents with relevance value r (r ≥ 0). */
  levels: readonly number[];
  /** Documents with relevance ≥ the relevance level. */
  numRel: number;
  /** Judged documents with 0 ≤ relevance < the relevance level. */
  numNonrel: number;
}

/** How values are computed: trec_eval's -l, and whether gains are graded (the qrels values) or binary. */
export interface EvalSettings {
  relevanceLevel: number;
  graded: boolean;
}
