/**
 * The metric registry (docs/decisions/0001-metric-contract.md): each metric's
 * name, key, label, direction, trec_eval measure, chance function and gate
 * floor declared once (DECLARED), everything else reads it; the measures for
 * incomplete judgments; a turn's chance level. The metrics themselves, pure
 * functions over ranked id lists, are in ./ranked.ts (re-exported here).
 */
import { hitAtK, ndcgAtK, precisionAtK, recallAtK, reciprocalRankAtK, type Gold } from "./ranked.js";
import { chanceHit, chanceMrr, chanceNdcg, chanceNdcgGraded, chancePrecision, chanceRecall } from "./chance.js";
export {
  dedupeFirst,
  hitAtK,
  recallAtK,
  ndcgAtK,
  precisionAtK,
  reciprocalRankAtK,
  judgedAtK,
  unjudgedAtK,
  gradedGold,
  JUDGED,
  unjudgedShareAtK,
  bpref,
  type Gold,
} from "./ranked.js";

/**
 * The measures for incomplete judgments a report gives on turns that carry
 * judgments (`judged` from the labelling page, or graded `relevant`), beside
 * judged@k (docs/metrics.md, "Incomplete judgments in reports"): each needs
 * judged-non-relevant information, so a turn without judgments gets none of
 * them (never a vacuous number). `higherIsBetter` is false for unjudged@k (a
 * share of holes).
 */
export const INCOMPLETE_JUDGMENT_MEASURES = Object.freeze([
  {
    key: "unjudged_at_k",
    label: "unjudged@k",
    kDependent: true,
    higherIsBetter: false,
    needsJudgedNonrelevant: true,
    trec: "unj",
    description: "unjudged cards in the top-k divided by k (trec_eval 10's unj.k)",
  },
  {
    key: "retrieval_ndcg_condensed_at_k",
    label: "condensed nDCG@k",
    kDependent: true,
    higherIsBetter: true,
    needsJudgedNonrelevant: true,
    trec: "ndcg_cut (-J)",
    description:
      "nDCG@k of the ranking without the cards outside judged ∪ relevant ∪ gold (trec_eval -J's judged-only ranking)",
  },
  {
    key: "retrieval_bpref",
    label: "bpref",
    kDependent: false,
    higherIsBetter: true,
    needsJudgedNonrelevant: true,
    trec: "bpref",
    description:
      "how often relevant cards rank above judged non-relevant ones; unjudged cards skipped (trec_eval's bpref)",
  },
] as const);

/** The key of unjudged@k. */
export const UNJUDGED_KEY = "unjudged_at_k";

/** trec_eval's measure a metric equals, as `retrace score` computes and prints it (src/eval/ir/trec/score.ts). */
export interface TrecMeasure {
  /** trec_eval's name: `success`, `recall`, `ndcg_cut`, `recip_rank`, `P`. */
  name: string;
  /**
   * true: computed at each cutoff and printed `name_k` (`success_5`); false:
   * over the whole ranking, no cutoff (`recip_rank`: the metric with k ≥ the
   * list length).
   */
  cut: boolean;
  /** Its place in trec_eval's print order (the order of trec_eval's measure table); `retrace score` sorts by it. */
  printOrder: number;
  /** With `retrace score --graded` it reads the qrels' relevance values as gains (trec_eval's ndcg_cut); otherwise binary relevance. */
  graded: boolean;
}

/**
 * One metric of the registry (METRICS): everything the rest of retrace knows
 * about it, declared once. The retrieval evaluator, aggregation, chance
 * levels, the gate and its CLI options, every rendering (the HTML page gets
 * it in its data), baselines, compare and `retrace score` read it here.
 */
export interface MetricSpec {
  /** Short metric family name (the retrieval evaluator's comment: `hit=1 recall=0.50 ...`). */
  name: MetricName;
  /** Output key (docs/decisions/0001-metric-contract.md), e.g. `retrieval_hit_at_k`. */
  key: string;
  /** Part of the ADR's metric triad (hit, recall, nDCG): its split deltas are reported. */
  triad: boolean;
  /** Human label, e.g. `hit@k`. */
  label: string;
  /** Depends on the cutoff k: renderings show its label with the run's k (`hit@5`). */
  kDependent: boolean;
  /** Said after its label in renderings (`recall@5 (lower bound)`), when the number needs it. */
  caveat?: string;
  /** Higher is better: floors are minimums and a drop against a baseline is a regression (every retrace metric). */
  direction: "higher";
  /** trec_eval's equivalent measure (docs/decisions/0001-metric-contract.md: every metric matches trec_eval). */
  trec: TrecMeasure;
  /** trec_eval's name for this measure at cutoff k, e.g. `success_5`, `ndcg_cut_10`, `recip_rank` (from `trec`). */
  trecName(k: number): string;
  /** Its expected value under a uniformly random ranking of N cards, g of them gold, at cutoff k (./chance.ts). */
  chance: (N: number, g: number, k: number) => number;
  /** The CI gate's floor on its mean (`retrace eval --gate min-hit=X`; this flag names the check: `--gate min-hit`), if it has one. */
  floor?: { option: FloorOption; flag: string };
  /**
   * The gate's drop check against a baseline: `always` (a baseline without it
   * is a mismatch), `if-both` (checked when the baseline and the run both have
   * it) or `never`.
   */
  drop: "always" | "if-both" | "never";
  fn: (ranked: readonly string[], gold: Gold, k: number) => number | null;
  /**
   * Whether it needs judged-non-relevant information (a `judged` list from the
   * labelling page, or graded `relevant` with grade 0) besides the relevant
   * cards: false for every metric of METRICS (unjudged cards count as not
   * relevant), true for judged@k and the measures for incomplete judgments
   * (INCOMPLETE_JUDGMENT_MEASURES).
   */
  needsJudgedNonrelevant: boolean;
  description: string;
}

/** What a metric declares: its MetricSpec but `trecName` (derived from `trec`), its name and floor option as written. */
type MetricDeclaration = Omit<MetricSpec, "name" | "trecName" | "floor"> & {
  name: string;
  floor?: { option: string; flag: string };
};

/** Each metric declared once; METRICS adds what follows from the declaration. The triad first, in the ADR's order. */
const DECLARED = [
  {
    name: "hit",
    key: "retrieval_hit_at_k",
    triad: true,
    label: "hit@k",
    kDependent: true,
    direction: "higher",
    trec: { name: "success", cut: true, printOrder: 5, graded: false },
    chance: chanceHit,
    floor: { option: "minHit", flag: "--min-hit" },
    drop: "always",
    fn: hitAtK,
    needsJudgedNonrelevant: false,
    description: "1 if at least one gold card is in the top-k retrieved, else 0 (primary signal: gold is disjunctive)",
  },
  {
    name: "recall",
    key: "retrieval_recall_at_k",
    triad: true,
    label: "recall@k",
    kDependent: true,
    caveat: "lower bound",
    direction: "higher",
    trec: { name: "recall", cut: true, printOrder: 3, graded: false },
    chance: chanceRecall,
    floor: { option: "minRecall", flag: "--min-recall" },
    drop: "always",
    fn: recallAtK,
    needsJudgedNonrelevant: false,
    description: "|gold ∩ top-k| / |gold|; a conservative lower bound under disjunctive gold",
  },
  {
    name: "ndcg",
    key: "retrieval_ndcg_at_k",
    triad: true,
    label: "nDCG@k",
    kDependent: true,
    direction: "higher",
    trec: { name: "ndcg_cut", cut: true, printOrder: 4, graded: true },
    chance: chanceNdcg,
    floor: { option: "minNdcg", flag: "--min-ndcg" },
    drop: "always",
    fn: ndcgAtK,
    needsJudgedNonrelevant: false,
    description: "binary-gain nDCG over the top-k, ideal ranking with min(|gold|, k) hits, discount log2(rank+1)",
  },
  {
    name: "mrr",
    key: "retrieval_mrr_at_k",
    triad: false,
    label: "MRR@k",
    kDependent: true,
    direction: "higher",
    // trec_eval's recip_rank has no cutoff.
    trec: { name: "recip_rank", cut: false, printOrder: 1, graded: false },
    chance: chanceMrr,
    floor: { option: "minMrr", flag: "--min-mrr" },
    drop: "if-both",
    fn: reciprocalRankAtK,
    needsJudgedNonrelevant: false,
    description: "1/rank of the first gold card within the top-k, else 0",
  },
  {
    name: "precision",
    key: "retrieval_precision_at_k",
    triad: false,
    label: "P@k",
    kDependent: true,
    direction: "higher",
    trec: { name: "P", cut: true, printOrder: 2, graded: false },
    chance: chancePrecision,
    drop: "never",
    fn: precisionAtK,
    needsJudgedNonrelevant: false,
    description: "|gold ∩ top-k| / k (divides by k even when fewer were retrieved)",
  },
] as const satisfies readonly MetricDeclaration[];

/** `hit`, `recall`, `ndcg`, `mrr`, `precision`: the registry's metric names. */
export type MetricName = (typeof DECLARED)[number]["name"];
/** `minHit`, ...: the GateThresholds / CLI option of each metric with a floor. */
export type FloorOption = Extract<(typeof DECLARED)[number], { floor: unknown }>["floor"]["option"];

/** The one registry of retrieval metrics; the triad first, in the ADR's order. */
export const METRICS: readonly MetricSpec[] = Object.freeze(
  DECLARED.map((d): MetricSpec => ({
    ...d,
    trecName: (k: number) => (d.trec.cut ? `${d.trec.name}_${k}` : d.trec.name),
  })),
);

/** Keys of the ADR's metric triad, in order: hit, recall, nDCG. */
export const TRIAD_KEYS: readonly string[] = Object.freeze(METRICS.filter((m) => m.triad).map((m) => m.key));

/** The output key of the metric named `name`. */
export function metricKey(name: MetricName): string {
  return (METRICS.find((m) => m.name === name) as MetricSpec).key;
}

const METRIC_BY_KEY: ReadonlyMap<string, MetricSpec> = new Map(METRICS.map((m) => [m.key, m]));

/** The registry's entry for `key`, or undefined when the key is not a retrieval metric. */
export function metricSpec(key: string): MetricSpec | undefined {
  return METRIC_BY_KEY.get(key);
}

/** hit@k's key: the primary signal (missed turns, flips, "retrieval not measured"). */
export const HIT_KEY = metricKey("hit");

/** The chance level of one turn for `key` (its metric's `chance`), or null when the key has no chance level (not a retrieval metric). */
export function chanceLevel(key: string, N: number, g: number, k: number): number | null {
  const spec = metricSpec(key);
  return spec === undefined ? null : spec.chance(N, g, k);
}

/** The number of distinct values of a short list (a turn's gold: one or two ids mostly), without a Set. */
function distinctCount(xs: readonly string[]): number {
  if (xs.length < 2) return xs.length;
  if (xs.length > 16) return new Set(xs).size;
  let n = 0;
  for (let i = 0; i < xs.length; i++) if (xs.indexOf(xs[i]!) === i) n++;
  return n;
}

/**
 * The chance level of one turn for `key` at cutoff k over N cards: a graded
 * metric (`trec.graded`, nDCG) of a turn with graded `relevant` uses its gains
 * (`chanceNdcgGraded`), every other metric the turn's g distinct gold cards
 * (at most N). Null when the key has no chance level or the turn has nothing
 * relevant for it.
 */
export function turnChanceLevel(
  key: string,
  N: number,
  turn: { gold: readonly string[]; relevant?: Readonly<Record<string, number>> | undefined },
  k: number,
): number | null {
  const spec = metricSpec(key);
  if (spec === undefined) return null;
  if (spec.trec.graded && turn.relevant !== undefined) {
    const gains = Object.values(turn.relevant).filter((x) => x > 0);
    return gains.length === 0 ? null : chanceNdcgGraded(N, gains, k);
  }
  const g = Math.min(distinctCount(turn.gold), N);
  return g === 0 ? null : spec.chance(N, g, k);
}
