/**
 * `retrace-eval/metrics`: the pure metric functions, the trec_eval-exact
 * scorer and the statistics, with no LangChain or LangGraph import at all
 * (see docs/metrics.md for every formula and edge case).
 */
export {
  dedupeFirst,
  gradedGold,
  hitAtK,
  judgedAtK,
  ndcgAtK,
  precisionAtK,
  recallAtK,
  reciprocalRankAtK,
  unjudgedAtK,
  JUDGED,
  METRICS,
  TRIAD_KEYS,
  type FloorOption,
  type Gold,
  type MetricName,
  type MetricSpec,
  type TrecMeasure,
} from "./eval/measures/metrics.js";
export {
  formatTrecText,
  formatTrecRow,
  formatTrecValue,
  parseQrels,
  parseRun,
  readQrels,
  readRun,
  scoreTrec,
  toTrecJson,
  trecMeasureNames,
  trecRanking,
  TREC_JSON_VERSION,
  RELEVANCE_LEVEL,
  type Qrels,
  type Run,
  type RunQuery,
  type TrecCounts,
  type TrecJson,
  type TrecOptions,
  type TrecScores,
} from "./eval/ir/trec.js";
export {
  bootstrapCI,
  mean,
  pairedComparison,
  permutationTest,
  DEFAULT_ALPHA,
  DEFAULT_SAMPLES,
  DEFAULT_SEED,
  type BootstrapOptions,
  type PairedComparison,
  type ResampleOptions,
  type TwoSampleComparison,
} from "./eval/stats/bootstrap.js";
