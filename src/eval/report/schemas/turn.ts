/**
 * One turn of the sweep (`turns[]`): what was asked, retrieved, cited and
 * answered, its evaluator results, trace summary, query attribution and
 * capture.
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";
import { CASE_KINDS, EXPECTS, SPLIT_PARTS } from "../../../kb/schemas.js";
import type { EvalResult } from "../../measures/types.js";
import { count, finite } from "./primitives.js";

/** The attributions of a gold-bearing turn, in the order reports list them (src/eval/report/query-attribution.ts labels them; docs/query-attribution.md). */
export const ATTRIBUTIONS = [
  "ok",
  "rewrite_rescued_it",
  "rewrite_not_needed",
  "rewrite_lost_it",
  "retriever_lost_it",
] as const;
/** Why a gold-bearing turn of a `--graph --counterfactual` run has no attribution (`TurnReport.queriesOff`), in the order reports list them. */
export const UNATTRIBUTED_REASONS = [
  "turn_error",
  "no_retrieval",
  "not_reinvocable",
  "retriever_error",
  "given_up",
] as const;

// The evaluator contract stays hand-written (src/eval/measures/types.ts: users write evaluators against it); the schema checks a report's copy of it.
const EvalResultSchema: z.ZodType<EvalResult> = z.object({
  key: z.string(),
  score: finite,
  comment: z.string().optional(),
});

/** Where each gold card stood at each stage: `{ goldId: { stage: rank } }` (1-based rank of its best chunk, null = absent). */
export const GoldPositionsSchema = z.record(z.record(z.number().nullable()));
export type GoldPositions = z.output<typeof GoldPositionsSchema>;

const traceSummaryObject = z.object({
  query: z.string(),
  k: z.number().int(),
  retrievedIds: z.array(z.string()),
  goldPositions: GoldPositionsSchema,
  /**
   * Extension (docs/html-report.md): the head of each stage's ranked list,
   * `[id, score]` in rank order (chunk ids for dense/bm25/fused/reranked, card
   * ids for parents), at most STAGE_HEAD_LIMIT entries, scores to 4 significant digits.
   */
  stages: z.record(z.array(z.tuple([z.string(), z.number()]))).optional(),
  /** Extension: the full length of each stage's list, before the head cut. */
  stageSizes: z.record(count).optional(),
});
/** A turn's retrieval trace, summarized for the report (src/eval/report/trace-summary.ts). */
export interface TraceSummary extends z.output<typeof traceSummaryObject> {}
const TraceSummarySchema: z.ZodType<TraceSummary> = traceSummaryObject;

/** One captured list of a `--graph` turn: a retriever call's child run, or the call itself (`final`). */
const CapturedListSchema = z.object({
  key: z.string(),
  role: z.enum(["child", "final"]),
  ids: z.array(z.string()),
  error: z.string().nullable(),
  /** The 1-based retrieval step of its call (calls overlapping in time are one step); absent in reports written before steps were recorded per list. */
  step: z.number().int().positive().optional(),
});

const queryOutcomeObject = z.object({
  query: z.string(),
  /** 1-based rank of the best-ranked gold card in the list retrieved for this query (beyond k when known), null when absent. */
  rank: z.number().int().positive().nullable(),
  /** Every retrieval metric at k for this query (`retrieval_hit_at_k`, ...). */
  scores: z.record(finite),
});

const turnQueriesObject = z.object({
  /** One of ATTRIBUTIONS (src/eval/report/query-attribution.ts; precedence in docs/query-attribution.md). */
  attribution: z.enum(ATTRIBUTIONS),
  /** The query the graph retrieved with (the turn's own scores come from it). */
  graph: queryOutcomeObject,
  /** The raw user message, retrieved with the same settings (counterfactual; never changes the turn's scores). */
  raw: queryOutcomeObject,
  /** The case's `standalone` oracle, when the turn has one (counterfactual). */
  standalone: queryOutcomeObject.optional(),
});
/** The three queries of a gold-bearing turn and its attribution (docs/query-attribution.md). */
export interface TurnQueriesReport extends z.output<typeof turnQueriesObject> {}
const TurnQueriesSchema: z.ZodType<TurnQueriesReport> = turnQueriesObject;

const turnReportObject = z.object({
  caseId: z.string(),
  /** 0-based turn index within the case. */
  turn: count,
  locale: z.string(),
  kind: z.enum(CASE_KINDS),
  user: z.string(),
  gold: z.array(z.string()),
  expect: z.enum(EXPECTS),
  /** The retrieved card ids in rank order; null when no retrieval ran (store-less). */
  retrievedIds: z.array(z.string()).nullable(),
  citedIds: z.array(z.string()),
  refused: z.boolean(),
  answer: z.string(),
  results: z.array(EvalResultSchema, {
    required_error: "the turn's evaluator results (an array, [] when nothing was scored)",
  }),
  trace: TraceSummarySchema.optional(),
  /** Query attribution of a gold-bearing turn (absent when counterfactual retrieval was off or the turn has no gold; docs/query-attribution.md). */
  queries: TurnQueriesSchema.optional(),
  /**
   * `--graph --counterfactual`: why this gold-bearing turn has no `queries`
   * (docs/query-attribution.md): `turn_error` the turn itself failed,
   * `no_retrieval` it made no retriever run, `not_reinvocable` its scored call
   * cannot be re-invoked, `retriever_error` re-invoking it threw, `given_up`
   * the counterfactual calls passed the turn deadline or stalled; `detail` says more.
   */
  queriesOff: z.object({ reason: z.enum(UNATTRIBUTED_REASONS), detail: z.string() }).optional(),
  /** `--graph --counterfactual`: the extra retriever calls made for this turn's counterfactual queries (0 when each query equalled the graph's). */
  counterfactualCalls: count.optional(),
  /** Part of the committed split the turn's case is in; absent when the KB has no split (docs/holdout.md). */
  part: z.enum(SPLIT_PARTS).optional(),
  /** `--graph` runs: the graph run of this turn threw, or was given up (`givenUp`); recorded, not scored, not a miss. */
  error: z.string().optional(),
  /**
   * `--graph` runs, with `error`: the turn was given up (docs/reliability.md):
   * `deadline` it exceeded `--turn-timeout`, `stalled` the event loop drained
   * while it was pending.
   */
  givenUp: z.enum(["deadline", "stalled"]).optional(),
  /**
   * `--graph` runs: the turn made no retriever run ("no retrieval"). Judged by
   * the gold (docs/evaluate-your-graph.md): with empty gold it is fine (no
   * retrieval, none needed); a gold-bearing turn is scored as a miss
   * (`retrievedIds: []`, hit/recall/nDCG 0). Reports written before that rule
   * left such turns out of the means (`retrievedIds: null`, no results).
   */
  noRetrieval: z.literal(true).optional(),
  /** A turn to label: its case line gives no `must_cite_one_of` and no `expect` (imported, docs/synthetic-cases.md); it ran and scored nothing (`gold` [] and `expect` "answer" are placeholders). */
  toLabel: z.literal(true).optional(),
  /** A synthetic case's generator (`origin` of its case line; docs/synthetic-cases.md). */
  origin: z.object({ generator: z.string(), version: z.string() }).optional(),
  /** The case turn's graded relevance (card id → grade 0–3), when it has one: its nDCG@k used these gains (docs/metrics.md). */
  relevant: z.record(z.number().int().min(0)).optional(),
  /** The card ids the case turn lists as judged, when it has them (judged@k, docs/metrics.md). */
  judged: z.array(z.string()).optional(),
  /** A turn with graded `relevant` and no citation contract: scored for nDCG@k (and judged@k) only (`gold` [] and `expect` "answer" are placeholders). */
  relevanceOnly: z.literal(true).optional(),
  /**
   * `--graph` runs: about the size in bytes of the turn's final state values
   * serialized as JSON (src/eval/sweep/turn-guard.ts `stateSize`); absent for
   * errored turns and in reports written before it was measured.
   */
  stateBytes: count.optional(),
  /**
   * `--repeat N` runs whose repeats differed: per key, the turn's score in
   * each repeat (repeat 1 first; `results` carry their mean). What the
   * repeats section, the baseline gate's interval-aware test and `retrace
   * merge` are computed from (docs/ci.md, "Repeats and flaky turns").
   */
  repeatScores: z.record(z.array(finite)).optional(),
  /** `--graph` runs: the captured retriever stages (nested runs, then the scored run) and which scored runs had no child runs. */
  captured: z
    .object({
      source: z.enum(["retrace", "callbacks"]),
      /** Names of the scored top-level runs, in start order (one per scored call). */
      retrievers: z.array(z.string()),
      /** Top-level retriever calls of the turn, scored or not. */
      topLevelRuns: count,
      /** Retrieval steps they formed (calls overlapping in time are one step); absent in reports written before steps. */
      steps: count.optional(),
      stages: z.array(CapturedListSchema),
      /** The calls not scored (other steps, with `--retrieval-call` last or first), as `stages`; absent when every call was scored and in reports written before they were recorded. */
      unscored: z.array(CapturedListSchema).optional(),
      noChildRuns: z.array(z.string()),
      /** Ids of the scored top-k that name no KB card or catalog entry; absent when the run had no ids to check against. */
      unknownIds: z.array(z.string()).optional(),
      /**
       * The scored top-k's documents: 1-based rank, card id, page content cut
       * at 600 code points (`truncated: true` when cut). Absent when no scored
       * document had a page content, and in reports written before it was
       * recorded (docs/schema-versions.md).
       */
      documents: z
        .array(
          z.object({
            rank: z.number().int().positive(),
            id: z.string(),
            text: z.string(),
            truncated: z.literal(true).optional(),
          }),
        )
        .optional(),
    })
    .optional(),
  /**
   * Where each gold card that missed the top-k was lost (src/eval/report/lost-at.ts,
   * docs/html-report.md "Turn view"): gold card → `at`, the stage that lost it
   * (`final`: cut at k; `retrieval`: no list held it; otherwise the stage or
   * captured call that dropped it), and `text`, the "lost at" words every
   * rendering prints. Only on a turn with a trace (or a gold-bearing turn that
   * made no retriever run) where some gold card missed; computed when the turn
   * is scored, and filled in when a report written before it is read
   * (docs/schema-versions.md).
   */
  goldLostAt: z.record(z.object({ at: z.string(), text: z.string() })).optional(),
});
/** One turn of the sweep: what was asked, retrieved, cited and answered, and the evaluator results. */
export interface TurnReport extends z.output<typeof turnReportObject> {}
export const TurnReportSchema: z.ZodType<TurnReport> = turnReportObject;
