/**
 * The output formats of the evaluation, each defined once as a zod schema:
 * the report JSON (`retrace eval --json` / `--report-json`) and the
 * regression baseline (`--update-baseline`). The report's TypeScript types
 * (`Report`, `TurnReport`, `RunInfo`, …; re-exported by ./types.ts) are
 * inferred from these schemas, so the documentation of a field, its type and
 * its validation are written once, here. Both formats carry `schemaVersion`;
 * files of an older version are migrated on read, files of an unknown
 * version are refused with exit 2, naming the version needed and the one
 * found. Versions and migrations are listed in docs/schema-versions.md.
 * Over 400 lines because it is the whole report format, field by field with
 * its documentation: one schema, one file.
 *
 * The report schema describes every field retrace writes (a test parses a
 * full report and gets every field back) and lets unknown fields through, so
 * a report that gained a section still reads; the baseline is strict at the
 * top level.
 *
 * Each object type is named by an interface that extends the schema's
 * inferred type (nothing is declared twice), and the schema is exported
 * typed by that interface, so the types that contain it (and the API
 * report) name it instead of spelling it out.
 */
import { z } from "zod";
import { DataValidationError, type DataIssue } from "../../errors.js";
import { parseWithSchema } from "../../kb/schema-issues.js";
import { CASE_KINDS, EXPECTS, SPLIT_PARTS } from "../../kb/schemas.js";
import type { EvalResult, JudgeInfo, JudgeUsage } from "../measures/types.js";

/** The attributions of a gold-bearing turn, in the order reports list them (src/eval/report/query-attribution.ts labels them; docs/query-attribution.md). */
export const ATTRIBUTIONS = ["ok", "rewrite_rescued_it", "rewrite_not_needed", "rewrite_lost_it", "retriever_lost_it"] as const;
/** Why a gold-bearing turn of a `--graph --counterfactual` run has no attribution (`TurnReport.queriesOff`), in the order reports list them. */
export const UNATTRIBUTED_REASONS = ["turn_error", "no_retrieval", "not_reinvocable", "retriever_error", "given_up"] as const;

/** Current `schemaVersion` of the report JSON (docs/schema-versions.md). Version 1 (`"version": 1`) and version 2 files are migrated on read. */
export const REPORT_VERSION = 3 as const;
/** Current `schemaVersion` of baseline files (docs/schema-versions.md). Version 1 files (`"version": 1`) are migrated on read. */
export const BASELINE_VERSION = 2 as const;

const finite = z.number().finite();
const count = z.number().int().nonnegative();
const interval = z.tuple([finite, finite]);
/** What a store choice resolved to (docs/decisions/0006-one-composition-root-and-store-vocabulary.md); `graph`: a `--graph` run, whose graph brings its own store. */
const storeKind = z.enum(["local", "remote", "memory", "none", "graph"]);

const aggregateObject = z
  .object({
    /** Turn-weighted mean (over the turns that have the key). */
    mean: finite,
    /** Number of turns. */
    n: z.number().int().positive(),
    /** 95% percentile-bootstrap interval of the mean (seeded), resampling the unit of `Report.bootstrap.unit`. Absent when fewer than 2 units. */
    ci95: interval.optional(),
    /** Number of distinct cases among those turns (docs/statistics.md). */
    nCases: z.number().int().positive().optional(),
    /** Exact expected value under a uniformly random ranking of the locale's cards, averaged over the same turns (retrieval metrics only; docs/statistics.md). */
    chance: finite.optional(),
  })
  .strict();
/** One aggregated key: mean over n turns, optional 95% bootstrap interval, case count and chance level (docs/statistics.md). */
export interface Aggregate extends z.output<typeof aggregateObject> {}
export const AggregateSchema: z.ZodType<Aggregate> = aggregateObject;

// The evaluator contract stays hand-written (src/eval/measures/types.ts: users write evaluators against it); the schema checks a report's copy of it.
const EvalResultSchema: z.ZodType<EvalResult> = z.object({ key: z.string(), score: finite, comment: z.string().optional() });

const JudgeInfoSchema: z.ZodType<JudgeInfo> = z.object({
  model: z.string(),
  prompt: z.string(),
  unparsable: count,
});

/** The run-dependent counters of the judge (`timings.judge`; in the `judge` section up to schemaVersion 2). */
const JudgeUsageSchema: z.ZodType<JudgeUsage> = z.object({
  calls: count,
  cached: count,
  inputTokens: count.nullable(),
  outputTokens: count.nullable(),
});

/** Where each gold card stood at each stage: `{ goldId: { stage: rank } }` (1-based rank of its best chunk, null = absent). */
const GoldPositionsSchema = z.record(z.record(z.number().nullable()));
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
  results: z.array(EvalResultSchema, { required_error: "the turn's evaluator results (an array, [] when nothing was scored)" }),
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
      documents: z.array(z.object({ rank: z.number().int().positive(), id: z.string(), text: z.string(), truncated: z.literal(true).optional() })).optional(),
    })
    .optional(),
});
/** One turn of the sweep: what was asked, retrieved, cited and answered, and the evaluator results. */
export interface TurnReport extends z.output<typeof turnReportObject> {}
export const TurnReportSchema: z.ZodType<TurnReport> = turnReportObject;

const graphRunInfoObject = z.object({
  /**
   * The graph module, relative to the project root (the working directory; `/`
   * separators), so `graph.mjs`, `./graph.mjs` and its absolute path are one
   * graph (reports written before it kept the path as typed); and the export evaluated.
   */
  file: z.string(),
  exportName: z.string(),
  /** sha256 of the graph module file (its own bytes, not its imports); absent in older reports. */
  moduleHash: z.string().optional(),
  /** Names of the scored top-level retrievers seen, sorted. */
  retrievers: z.array(z.string()),
  /** The id keys tried (`--id-key`, the default chain, or `--id-map`). */
  idKey: z.string(),
  retrievalCall: z.enum(["last", "first", "all"]),
  /** Turns whose graph run threw, and turns with no retriever run. */
  errors: count,
  noRetrieval: count,
  /**
   * The facts below were added with the no-retrieval, step and unknown-id
   * rules (docs/evaluate-your-graph.md); absent in older reports.
   * The no-retrieval turns split by gold: gold-bearing (scored as misses) and empty gold (none needed).
   */
  noRetrievalMisses: count.optional(),
  noRetrievalNoneNeeded: count.optional(),
  /** Turns with more than one top-level retriever call; of them, those with calls in parallel (overlapping in time) and those with several steps. */
  multiCallTurns: count.optional(),
  parallelCallTurns: count.optional(),
  multiStepTurns: count.optional(),
  /** Turns that made a retriever call, and those whose scored list was empty. */
  retrievalTurns: count.optional(),
  emptyRetrievalTurns: count.optional(),
  /** Ids in the scored top-k lists over the run, those naming no KB card or catalog entry, and up to 5 of the latter. */
  scoredIds: count.optional(),
  unknownIds: count.optional(),
  unknownExamples: z.array(z.string()).optional(),
  /** Locales whose turns made retriever calls but retrieved no card of that locale. */
  localesWithoutCards: z.array(z.string()).optional(),
  /** Where the KB ids came from: the `--kb` folder or the `--catalog` file. */
  catalog: z.string().optional(),
  /** sha256 of the `--id-map` module file, when one mapped the documents to card ids. */
  idMapHash: z.string().optional(),
  /**
   * `--configurable`: the sha256 of its canonical JSON (keys sorted) and its
   * top-level keys, sorted; the values are not recorded (they may hold user
   * ids or keys). Absent when none was given.
   */
  configurable: z.object({ hash: z.string(), keys: z.array(z.string()) }).optional(),
  /**
   * The safeguards (docs/reliability.md); absent in reports written before them:
   * the per-turn deadline (`--turn-timeout`, seconds), the state size limit
   * (`--max-state-mb`, in bytes), the largest state of a turn and the turns above the limit.
   */
  turnTimeoutSeconds: z.number().positive().optional(),
  maxStateBytes: count.optional(),
  largestStateBytes: count.optional(),
  largeStateTurns: count.optional(),
});
/**
 * The keys of `run.graph` that identify a `--graph` run and how it was scored
 * (the rest are counts over its turns): the shards of one run agree on them,
 * and `retrace merge` recomputes the others from the merged turns.
 */
export const GRAPH_IDENTITY_KEYS = ["file", "exportName", "moduleHash", "idKey", "retrievalCall", "catalog", "idMapHash", "configurable", "turnTimeoutSeconds"] as const satisfies readonly (keyof z.output<typeof graphRunInfoObject>)[];

/** Header facts of a `--graph` run (docs/evaluate-your-graph.md). */
export interface GraphRunInfo extends z.output<typeof graphRunInfoObject> {}
const GraphRunInfoSchema: z.ZodType<GraphRunInfo> = graphRunInfoObject;

const retrievalRunConfigObject = z.object({
  denseK: z.number().int(),
  bm25K: z.number().int(),
  /**
   * Fusion method of the hybrid mode, by name (docs/fusion-and-tuning.md).
   * Opaque to the report: the agent's fusion registry validates its settings;
   * the report records, compares and prints the name.
   */
  fusion: z.string().min(1),
  /** The RRF constant (used by `rrf` only, recorded always). */
  rrfK: z.number(),
  /** Per-list fusion weights; absent in traces written before fusion methods existed. */
  weights: z.object({ dense: z.number(), bm25: z.number() }).optional(),
  /** δ of the `signals` fusion; present when `fusion` is "signals" (absent in reports written before it was recorded). */
  signalsShift: z.number().optional(),
  /** BM25 parameters of the index; absent in old traces. */
  bm25Params: z.object({ k1: z.number(), b: z.number() }).optional(),
});
/** The retrieval settings of a run: a trace's config (`RetrievalTraceConfig`) without what `run` records elsewhere (embedder, mode, rerank). */
export interface RetrievalRunConfig extends z.output<typeof retrievalRunConfigObject> {}
const RetrievalRunConfigSchema: z.ZodType<RetrievalRunConfig> = retrievalRunConfigObject;

const runInfoObject = z.object({
  datasetHash: z.string().min(1),
  kbHash: z.string(),
  /** Embedder id, or null when no retrieval ran. */
  embedder: z.string().nullable(),
  embedderDescription: z.string().optional(),
  k: z.number().int().positive(),
  /** "local" (self-started Chroma), "memory", a URL, or "none" (store-less). */
  store: z.string(),
  /** What the store choice resolved to (docs/decisions/0006-one-composition-root-and-store-vocabulary.md); absent in reports written before it was recorded. */
  storeKind: storeKind.optional(),
  mode: z.string().optional(),
  rerank: z.string().nullable().optional(),
  /** Set on `--graph` runs. */
  graph: GraphRunInfoSchema.optional(),
  /** Locales of the run for which the built-in graph has no tables and uses generic rules (docs/languages.md). */
  genericLocales: z.array(z.string()).optional(),
  /** Who answered: "rule-based, offline" (the default extractive answerer) or the chat model's name. */
  answerer: z.string().optional(),
  /** The split file the turns' parts come from, or null when the KB has none (docs/holdout.md). */
  split: z.string().nullable().optional(),
  /**
   * The retrieval settings the turns ran with, by locale (`*` for turns without
   * one), as the retriever recorded them in the first such turn's trace
   * (docs/fusion-and-tuning.md); absent for store-less and `--graph` runs.
   */
  retrieval: z.record(RetrievalRunConfigSchema).optional(),
});
/** What was run, on which data, with which configuration (the report's `run` header). */
export interface RunInfo extends z.output<typeof runInfoObject> {}
export const RunInfoSchema: z.ZodType<RunInfo> = runInfoObject;

const timingsObject = z.object({
  /** ISO time the sweep started. */
  started: z.string(),
  /** Wall time of the sweep, ms. */
  durationMs: z.number(),
  /** Per-stage retrieval timings (ms) of each turn, keyed `caseId#turn`. */
  turns: z.record(z.record(z.number())),
  /**
   * Where the sweep's wall time went, ms: `graph` = Σ graph invocations,
   * `evaluate` = Σ evaluator runs, `report` = statistics and gate after the
   * sweep. At concurrency > 1 the sums overlap and can exceed `durationMs`.
   */
  phases: z.object({ graph: z.number(), evaluate: z.number(), report: z.number() }).optional(),
  /** What the groundedness judge cost in this run (calls, cache hits, tokens): depends on the cache, so it lives here (present only when `--judge` ran one). */
  judge: JudgeUsageSchema.optional(),
  /**
   * Before the sweep, ms (retrace's own graph; absent for `--graph`, whose
   * retriever is the user's): `embedder` = making the embedder ready
   * (`lsa-fit`: the corpus-fit LSA fitted; `lsa-load`: its saved state read;
   * `model-load`; `none`: built-in; `chanceMs`: the part of an `lsa-fit`
   * the chance baseline took), `store` = the ingest into Chroma
   * (embedding the chunks and writing them; `up-to-date`: only the check),
   * null for the memory store.
   */
  setup: z
    .object({
      embedder: z.object({ kind: z.enum(["lsa-fit", "lsa-load", "model-load", "none"]), ms: z.number(), chanceMs: z.number().optional() }),
      store: z.object({ status: z.enum(["ingested", "up-to-date"]), writeMs: z.number() }).nullable(),
    })
    .optional(),
});
/**
 * Every run-dependent figure of a run — wall-clock times, and the judge's
 * calls, cache hits and tokens — kept in one section so that everything else
 * in the report is a pure function of data, configuration and seed
 * (docs/determinism.md). Comparisons and `retrace merge` ignore it by name.
 */
export interface Timings extends z.output<typeof timingsObject> {}
const TimingsSchema: z.ZodType<Timings> = timingsObject;

const gateFailureObject = z.object({
  kind: z.enum(["floor", "regression", "flips", "not_measured", "baseline_mismatch", "turn_errors", "no_retrieval", "flaky"]),
  key: z.string(),
  reason: z.string(),
  /** Scope of a scoped check ("all", a locale, "golden", "adversarial", "tune", "holdout"); absent = "all". */
  scope: z.string().optional(),
});
/** Why the gate failed: one entry per failed check or refusal. */
export interface GateFailure extends z.output<typeof gateFailureObject> {}
const GateFailureSchema: z.ZodType<GateFailure> = gateFailureObject;

const gateCheckObject = z.object({
  /**
   * floor: mean ≥ threshold; drop: baseline mean − mean ≤ threshold; flips: count of hit 1→0 turns ≤ threshold;
   * `--graph` runs: turn_errors: turns whose graph run threw ≤ threshold (`--max-errors`), no_retrieval:
   * gold-bearing turns with no retriever run ≤ threshold (`--max-no-retrieval`), flaky: turns hit in some
   * repeats and missed in others ≤ threshold (`--max-flaky`, with `--repeat`).
   */
  kind: z.enum(["floor", "drop", "flips", "turn_errors", "no_retrieval", "flaky"]),
  key: z.string(),
  scope: z.string(),
  /** The CLI option the check comes from, e.g. `--min-hit en=0.950`. */
  option: z.string(),
  threshold: z.number(),
  /** Mean (floor), drop (drop) or flip count (flips); null when not measured. */
  observed: z.number().nullable(),
  n: count,
  /** The baseline's mean over the same scope (drop checks). */
  baseline: z.number().optional(),
  /**
   * Drop checks of the interval-aware test (a `--repeat` run; `dropTest`):
   * the one-sided lower bound of the drop at the test's level; the check
   * fails when it exceeds the threshold.
   */
  bound: z.number().optional(),
  verdict: z.enum(["pass", "fail", "not_measured"]),
  reason: z.string(),
});
/** One check the gate made, with its verdict (docs/gates-and-exit-codes.md). */
export interface GateCheck extends z.output<typeof gateCheckObject> {}
const GateCheckSchema: z.ZodType<GateCheck> = gateCheckObject;

const gateFlipObject = z.object({
  caseId: z.string(),
  turn: count,
  locale: z.string(),
  kind: z.string(),
  user: z.string(),
  gold: z.array(z.string()),
  retrievedIds: z.array(z.string()),
  /** Where each gold card is now, per stage (1-based rank; null = absent), from the trace summary. */
  goldPositions: GoldPositionsSchema.optional(),
});
/** A gold-bearing turn whose hit@k was 1 in the baseline and is 0 now. */
export interface GateFlip extends z.output<typeof gateFlipObject> {}
const GateFlipSchema: z.ZodType<GateFlip> = gateFlipObject;

const gateResultObject = z.object({
  passed: z.boolean(),
  failures: z.array(GateFailureSchema),
  /** Every floor and baseline check with its verdict (absent in reports written before gates recorded them). */
  checks: z.array(GateCheckSchema).optional(),
  /** With a baseline: the tolerance of the drop checks and where it came from. */
  tolerance: z.object({ maxDrop: z.number(), source: z.string() }).optional(),
  /**
   * With a baseline: how the drop checks decided (docs/statistics.md,
   * "Baseline gates with repeats"): `point` compares the means (a run
   * without repeats, or whose repeats were identical); `repeat-bootstrap`
   * fails only when the one-sided lower bound of the drop, at `level`, exceeds
   * the tolerance. `description` says it in words, as the gate output prints it.
   */
  dropTest: z.object({ method: z.enum(["point", "repeat-bootstrap"]), level: z.number().optional(), description: z.string() }).optional(),
  /** With a baseline: every hit@k 1→0 turn (gated only with maxFlips), quarantined turns left out. */
  flips: z.array(GateFlipSchema).optional(),
  /**
   * With `--quarantine FILE`: the turns of this run the gate left out (they
   * stay in the report and its aggregates; docs/ci.md). `listed` counts the
   * file's entries, `count` those that are turns of this run.
   */
  quarantine: z
    .object({
      file: z.string(),
      listed: count,
      count: count,
      turns: z.array(z.object({ caseId: z.string(), turn: count, locale: z.string(), reason: z.string() })),
    })
    .optional(),
});
/** The gate's verdict (docs/gates-and-exit-codes.md). */
export interface GateResult extends z.output<typeof gateResultObject> {}
export const GateResultSchema: z.ZodType<GateResult> = gateResultObject;

const groupDeltaObject = z.object({
  key: z.string(),
  /** Split dimension, e.g. "locale". */
  split: z.string(),
  group: z.string(),
  reference: z.string(),
  nGroup: z.number().int(),
  nReference: z.number().int(),
  meanGroup: finite,
  meanReference: finite,
  /** meanGroup − meanReference. */
  diff: finite,
  /** Distinct cases in each group. */
  nCasesGroup: count.optional(),
  nCasesReference: count.optional(),
  /** Unadjusted 95% percentile-bootstrap interval of `diff` (absent when a group has < 2 units). */
  ci95: interval.optional(),
  /** Raw two-sided p-value, inverted from the same bootstrap interval (p < 0.05 exactly when ci95 excludes 0). */
  pValue: finite,
  /** Holm–Bonferroni adjusted p-value within the family of all deltas of the same key. */
  pAdjusted: finite.optional(),
  /** Number of tests in that family. */
  familySize: count.optional(),
  /** pAdjusted < 0.05. */
  significant: z.boolean().optional(),
});
/**
 * Significance test of one split group against a reference group (extension
 * of the report, so split deltas are not merely indicative): a stratified
 * case-level bootstrap of the difference, the p-value inverted from the same
 * interval, Holm-adjusted within the key's family (docs/statistics.md).
 */
export interface GroupDelta extends z.output<typeof groupDeltaObject> {}
const GroupDeltaSchema: z.ZodType<GroupDelta> = groupDeltaObject;

const answerSideObject = z.object({
  /** "holdout": headline answer-side figures are on held-out turns only; "all": no split, every turn. */
  scope: z.enum(["holdout", "all"]),
  /** The answer-side keys of the run (keys outside the retrieval metric registry), in key order. */
  keys: z.array(z.string()),
  /** Turns of each part in this run (0 and 0 without a split). */
  turns: z.object({ tune: count, holdout: count }),
});
/** Where the answer-side headline figures come from (src/eval/report/parts.ts, docs/holdout.md). */
export interface AnswerSide extends z.output<typeof answerSideObject> {}
const AnswerSideSchema: z.ZodType<AnswerSide> = answerSideObject;

const shardObject = z
  .object({
    /** This shard, 1..count. */
    index: z.number().int().positive(),
    count: z.number().int().positive(),
    /** The assignment rule (SHARD_RULE). */
    rule: z.string().min(1),
    /** This shard's case ids, in dataset order, and its number of turns. */
    caseIds: z.array(z.string()),
    turns: count,
    /** The whole selection the shards split: the datasetHash an unsharded run reports, its case ids in dataset order, its turns. */
    dataset: z.object({ datasetHash: z.string().min(1), caseIds: z.array(z.string()), turns: count }).strict(),
  })
  .strict()
  .refine((s) => s.index <= s.count, { message: "the shard index must not exceed the shard count", path: ["index"] });
/**
 * Marks a partial report written by `retrace eval --shard i/n` (src/eval/gate/shard.ts,
 * docs/reliability.md "Sharded sweeps"). Its aggregates cover this shard's
 * turns only and its gate is not evaluated; `retrace merge` turns all n
 * shards into the full report.
 */
export interface ShardInfo extends z.output<typeof shardObject> {}
export const ShardSchema: z.ZodType<ShardInfo> = shardObject;

const attributionCountsObject = z.record(count);

const queryAttributionObject = z.object({
  /** False when counterfactual retrieval was off (`--no-counterfactual`, a store-less run, or `--graph` without `--counterfactual`). */
  enabled: z.boolean(),
  /** Why it was off. */
  reason: z.string().optional(),
  /** Gold-bearing turns attributed, and of them those with a `standalone` oracle. */
  turns: count,
  withStandalone: count,
  /** Attribution → turns, in ATTRIBUTIONS order. */
  counts: attributionCountsObject,
  /** split → group → attribution counts (position, kind, locale, part). */
  splits: z.record(z.record(attributionCountsObject)),
  /** query variant (graph, raw, standalone) → metric key → aggregate over the attributed turns that have that query. */
  means: z.record(z.record(AggregateSchema)),
  /** `--graph --counterfactual`: gold-bearing turns left unattributed, by reason (`TurnReport.queriesOff`); absent when none. */
  unattributed: z.record(count).optional(),
  /** `--graph --counterfactual`: the extra retriever calls made (the sum of the turns' `counterfactualCalls`); absent on retrace's own graph. */
  retrieverCalls: count.optional(),
});
/** The report's query-attribution section (docs/query-attribution.md). */
export interface QueryAttributionReport extends z.output<typeof queryAttributionObject> {}
const QueryAttributionSchema: z.ZodType<QueryAttributionReport> = queryAttributionObject;

const funnelStageObject = z.object({
  /** A stage id of the stage registry (`query`, `dense`, `bm25`, `fused`, `reranked`, `parents`, `final`). */
  stage: z.string(),
  label: z.string(),
  /** Gold-bearing turns where the stage was measured, and of them those with a gold card still present. */
  n: count,
  present: count,
  nCases: count,
  /** present / n. */
  share: finite,
  /** 95% percentile-bootstrap interval of the share, resampling `Report.bootstrap.unit` (cases by default). */
  ci95: interval.optional(),
});
/** One stage of the funnel as a statistic (docs/metrics.md, "Stage funnel"). */
export interface FunnelStage extends z.output<typeof funnelStageObject> {}
const FunnelStageSchema: z.ZodType<FunnelStage> = funnelStageObject;

const funnelObject = z.object({
  /** Every stage this run measured, in pipeline order. */
  stages: z.array(FunnelStageSchema),
  /** split → group → stages (position, kind, locale, part). */
  splits: z.record(z.record(z.array(FunnelStageSchema))),
});
/** The stage funnel with intervals (src/eval/report/funnel-stats.ts). */
export interface FunnelReport extends z.output<typeof funnelObject> {}
export const FunnelSchema: z.ZodType<FunnelReport> = funnelObject;

const judgmentHoleObject = z.object({
  caseId: z.string(),
  turn: count,
  /** The turn's judged@k. */
  judged: finite,
  /** Its top-k cards without a judgment, in rank order. */
  unjudged: z.array(z.string()),
});
/** A turn whose top-k holds cards nobody judged (docs/metrics.md, "judged@k"). */
export interface JudgmentHole extends z.output<typeof judgmentHoleObject> {}

const judgmentsObject = z.object({
  /** Turns whose nDCG@k was scored with graded gains (the case turn's `relevant`); every other turn's nDCG@k is binary over `must_cite_one_of`. */
  gradedTurns: count,
  /** Of the graded turns, those without a citation contract: scored for nDCG@k only. */
  relevanceOnlyTurns: count,
  /** Turns that carry judgments (`judged` or `relevant`): the turns judged@k is measured on. */
  judgedTurns: count,
  /** The judged@k below which a run is warned about (docs/metrics.md). */
  warnBelow: finite,
  /** Turns with unjudged cards in their top-k, in report order. */
  holes: z.array(judgmentHoleObject),
});
/** Which nDCG a run used and how complete its judgments are (docs/metrics.md); present when a turn carries `relevant` or `judged`. */
export interface JudgmentsSection extends z.output<typeof judgmentsObject> {}
const JudgmentsSchema: z.ZodType<JudgmentsSection> = judgmentsObject;

/** Split groups: group → key → aggregate. */
const splitGroups = z.record(z.record(AggregateSchema));

const repeatsObject = z.object({
  /** Repeats per case (`--repeat N`), each on a fresh thread. */
  n: z.number().int().min(2),
  /** Every turn scored the same in every repeat (a deterministic graph): the aggregates are a single run's. */
  identical: z.boolean(),
  /** Gold-bearing turns hit in some repeats and missed in others, in dataset order, with their hit rate over the repeats. */
  flaky: z.array(z.object({ caseId: z.string(), turn: count, hits: count, n: count, rate: finite })),
  /** Turns that errored in at least one repeat (reported as error turns). */
  errorTurns: count,
  /**
   * Per key: the mean over turns of each turn's mean over repeats, its 95%
   * two-stage bootstrap interval (cases, then repeats within each case;
   * src/eval/stats/repeats.ts) — the interval the key's overall aggregate
   * carries — and the within-case (repeat) and between-case shares of the
   * variance of the turn × repeat values.
   */
  metrics: z.record(
    z.object({
      mean: finite,
      n: count,
      ci95: interval.optional(),
      withinShare: finite,
      betweenShare: finite,
    }),
  ),
});
/** A `--repeat N` run's repeat statistics (docs/ci.md, "Repeats and flaky turns"). */
export interface RepeatsSection extends z.output<typeof repeatsObject> {}

const reportObject = z.object({
  schemaVersion: z.literal(REPORT_VERSION),
  run: RunInfoSchema,
  aggregates: z.record(AggregateSchema),
  splits: z
    .object({
      kind: splitGroups,
      locale: splitGroups,
      /** Extension: per part of the split (`tune`, `holdout`), every key; absent without a split (docs/holdout.md). */
      part: splitGroups.optional(),
    })
    // Any further split of the cases, same shape (docs/statistics.md); a split a report does not have reads as undefined.
    .catchall(splitGroups.optional()),
  /** Keys not measured in this run (docs/architecture.md §7). */
  vacuous: z.array(z.string()),
  /** Why each vacuous key was not measured. */
  vacuousReasons: z.record(z.string()),
  turns: z.array(TurnReportSchema),
  gate: GateResultSchema.nullable(),
  /** Extension: per-split deltas (kind vs golden, locale vs the reference locale) with their tests (docs/statistics.md). */
  deltas: z.array(GroupDeltaSchema).optional(),
  /** Extension: how the ci95 intervals and p-values were resampled, so they can be reproduced (docs/statistics.md). */
  bootstrap: z
    .object({
      seed: z.number().int(),
      samples: z.number().int().positive(),
      /** What was resampled: whole cases (default) or single turns. */
      unit: z.enum(["case", "turn"]).optional(),
      /** How deltas were tested and adjusted. */
      test: z.string().optional(),
      correction: z.string().optional(),
    })
    .optional(),
  /** Extension: card counts behind the chance levels, and small-KB warnings (docs/statistics.md). */
  chance: z.object({ cardsPerLocale: z.record(count), warnings: z.array(z.string()) }).optional(),
  /** Extension: where the answer-side headline figures come from (held-out turns, or all turns without a split). */
  answerSide: AnswerSideSchema.optional(),
  /** Extension: query attribution (docs/query-attribution.md); absent in reports written before it. */
  queryAttribution: QueryAttributionSchema.optional(),
  /** Extension: the stage funnel with case-level intervals (docs/metrics.md); absent when no turn had a trace. */
  funnel: FunnelSchema.optional(),
  /** Extension: graded relevance and judged@k (docs/metrics.md): present only when a turn carries `relevant` or `judged`. */
  judgments: JudgmentsSchema.optional(),
  /** Extension: the groundedness judge (model, prompt, unparsable replies; present only when `--judge` ran one). What it cost is in `timings.judge`. */
  judge: JudgeInfoSchema.optional(),
  /** Extension: present only with `--repeat N` (N ≥ 2) on a `--graph` run: flaky turns, two-stage intervals, variance shares. */
  repeats: repeatsObject.optional(),
  /** Extension: present only on the partial report of one shard (`retrace eval --shard i/n`; docs/reliability.md). */
  shard: ShardSchema.optional(),
  /** Wall-clock figures only (never compared): see `Timings` (docs/determinism.md). */
  timings: TimingsSchema.optional(),
});
/** The report JSON, schemaVersion 3 (docs/architecture.md §7): one object, built by `buildReport`, from which every rendering is made. */
export interface Report extends z.output<typeof reportObject> {}
export const ReportSchema: z.ZodType<Report> = reportObject;

/**
 * How a `--graph` baseline was scored (a comparison across a different
 * `retrievalCall` or `idKey` / `idMapHash` is refused: it would measure the
 * scoring change, not the graph) and what ran (a different `moduleHash` or
 * `configurableHash` is reported as a note: that is what a regression check is for).
 */
export const BaselineGraphSchema = z
  .object({
    /** The module relative to the project root, and the export. */
    module: z.string(),
    exportName: z.string(),
    /** sha256 of the module file. */
    moduleHash: z.string(),
    retrievalCall: z.enum(["last", "first", "all"]),
    /** The id keys tried (`describeIdKeys`), or `idMap (--id-map)`. */
    idKey: z.string(),
    /** sha256 of the `--id-map` module file, or null. */
    idMapHash: z.string().nullable(),
    /** sha256 of the canonical JSON of `--configurable`, or null. */
    configurableHash: z.string().nullable(),
  })
  .strict();
export type BaselineGraph = z.infer<typeof BaselineGraphSchema>;

const baselineFields = {
  created: z.string().min(1),
  datasetHash: z.string().min(1),
  kbHash: z.string(),
  k: z.number().int().positive(),
  config: z
    .object({
      embedder: z.string().nullable(),
      mode: z.string().nullable(),
      rerank: z.string().nullable(),
    })
    .strict(),
  /** Store kind of the run the baseline was made from (absent in baselines written before it was recorded). */
  storeKind: storeKind.optional(),
  /** `--graph` runs: how the run was scored and what ran (absent in baselines of retrace's own graph and in those written before it was recorded). */
  graph: BaselineGraphSchema.optional(),
  /** The run's retrieval settings per locale (the report's `run.retrieval`: fusion, weights, signals shift, depths, BM25 k1/b); absent for runs without retrieval and in baselines written before it was recorded. */
  retrieval: z.record(RetrievalRunConfigSchema).optional(),
  aggregates: z.record(aggregateObject),
  /** The report's split aggregates: split → group → key → aggregate (absent in older baselines). */
  splits: z.record(z.record(z.record(aggregateObject))).optional(),
  /** `caseId#turn` → key → score. */
  perTurn: z.record(z.record(finite)),
  /** The report's stage funnel, for `--max-stage-drop` (absent in older baselines). */
  funnel: z.array(funnelStageObject).optional(),
  /**
   * Written from a `--repeat N` run (absent otherwise and in older
   * baselines): the repeats per turn, whether they were identical, and, when
   * they differed, each turn's score per repeat (`caseId#turn` → key →
   * scores, repeat 1 first) — what the gate's interval-aware test resamples
   * (docs/statistics.md, "Baseline gates with repeats").
   */
  repeats: z
    .object({ n: z.number().int().min(2), identical: z.boolean(), perTurn: z.record(z.record(z.array(finite).min(1))).optional() })
    .strict()
    .optional(),
};

/** The baseline JSON, schemaVersion 2. */
export const BaselineSchema = z.object({ schemaVersion: z.literal(BASELINE_VERSION), ...baselineFields }).strict();
export type BaselineData = z.infer<typeof BaselineSchema>;

/** The baseline JSON as written before `schemaVersion` (0.1.0): `"version": 1`, otherwise the same fields. */
export const BaselineV1Schema = z.object({ version: z.literal(1), ...baselineFields }).strict();
export type BaselineV1 = z.infer<typeof BaselineV1Schema>;

/** Baseline 1 → 2: `version: 1` becomes `schemaVersion: 2`; every other field is kept as it is. Pure. */
export function migrateBaselineV1(v1: BaselineV1): BaselineData {
  const { version: _version, ...rest } = v1;
  return { schemaVersion: 2, ...rest };
}

/**
 * Report 1 → 2: `version: 1` becomes `schemaVersion: 2` (first key, as
 * written by retrace); every other field is kept as it is. Pure; the result
 * is then checked by ReportSchema.
 */
export function migrateReportV1(v1: Record<string, unknown>): Record<string, unknown> {
  const { version: _version, ...rest } = v1;
  // Version 1 kept its wall-clock figures in `run`; version 2 has them in `timings` (docs/determinism.md).
  const run = (typeof rest.run === "object" && rest.run !== null ? rest.run : {}) as Record<string, unknown>;
  const { started, durationMs, ...runRest } = run;
  const timings = typeof started === "string" && typeof durationMs === "number" ? { timings: { started, durationMs, turns: {} } } : {};
  return { schemaVersion: 2, ...rest, run: runRest, ...timings };
}

/**
 * Report 2 → 3: the judge's run-dependent counters (`calls`, `cached`,
 * `inputTokens`, `outputTokens`) move from the `judge` section into
 * `timings.judge` (docs/determinism.md); `model`, `prompt` and `unparsable`
 * stay. Every other field and the key order are kept. A version 2 report
 * without a `timings` section keeps no counters (retrace always wrote one).
 * Pure; the result is then checked by ReportSchema.
 */
export function migrateReportV2(v2: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...v2, schemaVersion: 3 };
  const judge = v2.judge;
  if (typeof judge !== "object" || judge === null || Array.isArray(judge)) return out;
  const { calls, cached, inputTokens, outputTokens, ...info } = judge as Record<string, unknown>;
  out.judge = info;
  const timings = v2.timings;
  if (typeof timings === "object" && timings !== null && !Array.isArray(timings) && calls !== undefined)
    out.timings = { ...(timings as Record<string, unknown>), judge: { calls, cached, inputTokens, outputTokens } };
  return out;
}

/**
 * The schema version a parsed JSON file declares: `schemaVersion`, or 1 for
 * the files of 0.1.0, which carried `"version": 1` instead; undefined when it
 * declares neither.
 */
export function declaredVersion(data: unknown): unknown {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  const o = data as Record<string, unknown>;
  if ("schemaVersion" in o) return o.schemaVersion;
  if (o.version === 1) return 1;
  return o.version;
}

function versionError(file: string, what: string, current: number, found: unknown, older: string): DataValidationError {
  const hint =
    typeof found === "number" && found > current
      ? "; it was written by a newer retrace, upgrade to read it"
      : found === undefined
        ? `; is this a retrace ${what} file?`
        : "";
  return new DataValidationError([
    { file, field: "schemaVersion", message: `expected ${what} schemaVersion ${current} (or ${older}, migrated on read), got ${found === undefined ? "none" : JSON.stringify(found)}${hint}` },
  ]);
}

function orThrow<T>(r: { data: T; issues: [] } | { data?: undefined; issues: DataIssue[] }): T {
  if (r.data === undefined) throw new DataValidationError(r.issues);
  return r.data;
}

/** Validate a parsed baseline of any known version, migrating it to the current one; DataValidationError (exit 2) otherwise. */
export function parseBaselineData(data: unknown, file: string): BaselineData {
  const version = declaredVersion(data);
  if (version === BASELINE_VERSION) return orThrow(parseWithSchema(BaselineSchema, data, { file }));
  if (version === 1) return migrateBaselineV1(orThrow(parseWithSchema(BaselineV1Schema, data, { file })));
  throw versionError(file, "baseline", BASELINE_VERSION, version, "1");
}

/**
 * Throws DataValidationError (exit 2, naming the file and each bad field)
 * unless `data` matches `schema`; the caller then keeps `data` itself, not
 * zod's output, which rebuilds every object in the schema's key order and
 * leaves out the keys the schema does not declare. Sound for schemas that
 * only check (no transform, default or coercion): the `ZodType<T, _, T>`
 * parameter asks for input type = output type.
 */
function assertMatches<T>(schema: z.ZodType<T, z.ZodTypeDef, T>, data: unknown, file: string): asserts data is T {
  orThrow(parseWithSchema(schema, data, { file }));
}

/**
 * A report JSON read back from disk (`retrace eval --report-json` / `--json`)
 * before `retrace report`, `retrace compare`, `retrace merge`, the gate or
 * `retrace baseline floors` use it: validated by ReportSchema (a version 1
 * or 2 file migrated first), so a missing or malformed field is a
 * DataValidationError naming the file and the field (e.g.
 * `turns[3].results`), exit 2 — never a TypeError deep inside a statistic
 * (docs/gates-and-exit-codes.md). The report comes back as it was read: key
 * order and fields the schema does not know are kept, so a report rendered
 * again from its file has the bytes it was written with.
 */
export function parseReport(data: unknown, file: string): Report {
  const version = declaredVersion(data);
  if (version === REPORT_VERSION) {
    assertMatches(ReportSchema, data, file);
    return data;
  }
  if (version === 1 || version === 2) {
    const v2 = version === 1 ? migrateReportV1(data as Record<string, unknown>) : (data as Record<string, unknown>);
    const migrated = migrateReportV2(v2);
    assertMatches(ReportSchema, migrated, file);
    return migrated;
  }
  throw versionError(file, "report", REPORT_VERSION, version, "1 or 2");
}
