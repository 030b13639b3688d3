/**
 * TREC qrels and run files, scored the way trec_eval 10 scores them: the
 * measures retrace reports (`success.k`, `recall.k`, `ndcg_cut.k`, `P.k`,
 * `recip_rank`; docs/decisions/0001-metric-contract.md) and trec_eval's
 * measures for incomplete judgments and more (`map`, `map_cut`, `Rprec`,
 * `bpref`, `infAP`, `rbp`, `rbp_resid`, `unj`, `num_*`; docs/metrics.md).
 *
 * What trec_eval does, and what this module does the same way
 * (trec_eval 9.x/10.x: get_qrels.c, get_trec_results.c, form_res_rels.c,
 * trec_eval.c, m_*.c, meas_print_*.c):
 * - qrels lines are `qid iter docno rel`; run lines `qid Q0 docno rank score tag`
 *   (fields after the tag are ignored); `#` lines are comments;
 * - documents are ranked by score descending, ties broken by docno descending
 *   in strcmp (byte) order; the rank column is ignored;
 * - a document is relevant when rel ≥ 1 (relevance_level 1); ndcg_cut with
 *   `graded` uses the rel values as gains, as trec_eval does;
 * - queries are evaluated in strcmp order of qid, over the judged queries;
 *   results for unjudged queries are ignored; a judged query without relevant
 *   documents scores 0 and counts in `all`; with `complete` (trec_eval -c) a
 *   judged query without results scores 0 and counts too;
 * - `all` is the arithmetic mean over the queries evaluated; values print as
 *   `%-22s\t%s\t%6.4f`.
 *
 * Where it deliberately differs (the first three are reported as warnings):
 * - a judged query without results, without `complete`, is left out of `all`
 *   (trec_eval without -c has no clean behaviour here: the 9.x trec_eval.c
 *   reuses the previous query's results for it);
 * - a document listed twice for a query is kept once, at its first position in
 *   trec order (trec_eval stops with "duplicate docs");
 * - `skipEmpty` applies the ADR's empty-gold rule: a judged query with no
 *   relevant document gets no score and is not counted;
 * - without `graded`, ndcg_cut uses binary gains (the ADR's nDCG); trec_eval
 *   always uses the rel values, which is the same on binary qrels.
 *
 * The parts: src/eval/ir/trec/parse.ts (qrels and run parsing, one line at a
 * time, and the streaming readers), src/eval/ir/trec/score.ts (ranking and
 * scoring), src/eval/ir/trec/measures.ts (trec_eval's measures over a ranked
 * relevance list), src/eval/ir/trec/compact.ts (the byte-level fast path of
 * `retrace score`) and src/eval/ir/trec/format.ts (the text layout and the
 * JSON output); this module re-exports them.
 */
export {
  formatTrecRow,
  formatTrecText,
  formatTrecValue,
  toTrecJson,
  TREC_JSON_VERSION,
  type TrecJson,
} from "./trec/format.js";
export {
  forEachLine,
  parseQrels,
  parseRun,
  QrelsParser,
  readQrels,
  readRun,
  RunParser,
  type Qrels,
  type Run,
  type RunQuery,
} from "./trec/parse.js";
export {
  normalizeCutoffs,
  RELEVANCE_LEVEL,
  scorePlan,
  scoreTrec,
  strcmp,
  trecMeasureNames,
  trecRanking,
  type TrecCounts,
  type TrecOptions,
  type TrecScores,
} from "./trec/score.js";
export { ALL_TREC_NOT_IMPLEMENTED, RBP_PERSISTENCE, TREC_MEASURES, type TrecMeasureSpec } from "./trec/measures.js";
export { readRunCompact, scoreCompact, type CompactRun } from "./trec/compact.js";
