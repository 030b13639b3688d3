/** Data contracts of the evaluation core (docs/architecture.md §6, §7). Pure types. */
import type { RetrievalTraceConfig } from "../../retrieval/types.js";
import type { SplitPart } from "../../kb/split.js";
import type { CaseKind, Expect } from "../../kb/types.js";
import type { EvalResult, JudgeCost } from "../measures/types.js";
export type { JudgeCost };

/** A key that had nothing to measure in this run, and why (e.g. "no store"). */
export interface VacuousKey {
  key: string;
  reason: string;
}

export interface Aggregate {
  /** Turn-weighted mean (over the turns that have the key). */
  mean: number;
  /** Number of turns. */
  n: number;
  /** Number of distinct cases among those turns (docs/statistics.md). */
  nCases?: number;
  /** 95% percentile-bootstrap interval of the mean (seeded), resampling the unit of `Report.bootstrap.unit`. Absent when fewer than 2 units. */
  ci95?: [number, number];
  /** Exact expected value under a uniformly random ranking of the locale's cards, averaged over the same turns (retrieval metrics only; docs/statistics.md). */
  chance?: number;
}

/** Where each gold card stood at each stage: `{ goldId: { stage: rank } }` (1-based rank of its best chunk, null = absent). */
export type GoldPositions = Record<string, Record<string, number | null>>;

export interface TraceSummary {
  query: string;
  k: number;
  retrievedIds: string[];
  goldPositions: GoldPositions;
  /**
   * Extension (docs/html-report.md): the head of each stage's ranked list,
   * `[id, score]` in rank order (chunk ids for dense/bm25/fused/reranked, card
   * ids for parents), at most STAGE_HEAD_LIMIT entries, scores to 4 significant digits.
   */
  stages?: Record<string, [string, number][]>;
  /** Extension: the full length of each stage's list, before the head cut. */
  stageSizes?: Record<string, number>;
}

export interface TurnReport {
  caseId: string;
  turn: number;
  locale: string;
  kind: CaseKind;
  user: string;
  gold: string[];
  expect: Expect;
  retrievedIds: string[] | null;
  citedIds: string[];
  refused: boolean;
  answer: string;
  results: EvalResult[];
  trace?: TraceSummary;
  /** Part of the committed split the turn's case is in; absent when the KB has no split (docs/holdout.md). */
  part?: SplitPart;
  /** `--graph` runs: the graph run of this turn threw (recorded, not scored, not a miss). */
  error?: string;
  /** `--graph` runs: the turn made no retriever run ("no retrieval captured"; left out of retrieval means). */
  noRetrieval?: true;
  /** `--graph` runs: the captured retriever stages (nested runs, then the scored run) and which scored runs had no child runs. */
  captured?: { source: "retrace" | "callbacks"; retrievers: string[]; topLevelRuns: number; stages: { key: string; role: "child" | "final"; ids: string[]; error: string | null }[]; noChildRuns: string[] };
}

/** Header facts of a `--graph` run (docs/evaluate-your-graph.md). */
export interface GraphRunInfo {
  /** The graph file as given, and the export evaluated. */
  file: string;
  exportName: string;
  /** Names of the scored top-level retrievers seen, sorted. */
  retrievers: string[];
  /** The id keys tried (`--id-key`, the default chain, or `--id-map`). */
  idKey: string;
  retrievalCall: "last" | "first" | "all";
  /** Turns whose graph run threw, and turns with no retriever run. */
  errors: number;
  noRetrieval: number;
  /** Where the KB ids came from: the `--kb` folder or the `--catalog` file. */
  catalog?: string;
}

export interface RunInfo {
  datasetHash: string;
  kbHash: string;
  /** Embedder id, or null when no retrieval ran. */
  embedder: string | null;
  embedderDescription?: string;
  k: number;
  /** "local" (self-started Chroma), "memory", a URL, or "none" (store-less). */
  store: string;
  /** What the store choice resolved to (docs/decisions/0006-one-composition-root-and-store-vocabulary.md); absent in reports written before it was recorded. */
  storeKind?: "local" | "remote" | "memory" | "none";
  mode?: string;
  rerank?: string | null;
  /** Set on `--graph` runs. */
  graph?: GraphRunInfo;
  /** Locales of the run for which the built-in graph has no tables and uses generic rules (docs/languages.md). */
  genericLocales?: string[];
  /** Who answered: "rule-based, offline" (the default extractive answerer) or the chat model's name. */
  answerer?: string;
  /** The split file the turns' parts come from, or null when the KB has none (docs/holdout.md). */
  split?: string | null;
  /**
   * The retrieval settings the turns ran with, by locale (`*` for turns without
   * one), as the retriever recorded them in the first such turn's trace
   * (docs/fusion-and-tuning.md); absent for store-less and `--graph` runs.
   */
  retrieval?: Record<string, RetrievalRunConfig>;
}

/** The retrieval settings of a run: a trace's config without what `run` records elsewhere. */
export type RetrievalRunConfig = Omit<RetrievalTraceConfig, "embedder" | "mode" | "rerank">;

/**
 * Every wall-clock figure of a run, kept in one section so that everything
 * else in the report is a pure function of data, configuration and seed
 * (docs/determinism.md). Comparisons and `retrace merge` ignore it by name.
 */
export interface Timings {
  /** ISO time the sweep started. */
  started: string;
  /** Wall time of the sweep, ms. */
  durationMs: number;
  /** Per-stage retrieval timings (ms) of each turn, keyed `caseId#turn`. */
  turns: Record<string, Record<string, number>>;
  /**
   * Where the sweep's wall time went, ms: `graph` = Σ graph invocations,
   * `evaluate` = Σ evaluator runs, `report` = statistics and gate after the
   * sweep. At concurrency > 1 the sums overlap and can exceed `durationMs`.
   */
  phases?: { graph: number; evaluate: number; report: number };
}

export interface GateFailure {
  kind: "floor" | "regression" | "flips" | "not_measured" | "baseline_mismatch" | "turn_errors" | "no_retrieval";
  key: string;
  reason: string;
  /** Scope of a scoped check ("all", a locale, "golden", "adversarial", "tune", "holdout"); absent = "all". */
  scope?: string;
}

/** One check the gate made, with its verdict (docs/gates-and-exit-codes.md). */
export interface GateCheck {
  /** floor: mean ≥ threshold; drop: baseline mean − mean ≤ threshold; flips: count of hit 1→0 turns ≤ threshold. */
  kind: "floor" | "drop" | "flips";
  key: string;
  scope: string;
  /** The CLI option the check comes from, e.g. `--min-hit en=0.950`. */
  option: string;
  threshold: number;
  /** Mean (floor), drop (drop) or flip count (flips); null when not measured. */
  observed: number | null;
  n: number;
  /** The baseline's mean over the same scope (drop checks). */
  baseline?: number;
  verdict: "pass" | "fail" | "not_measured";
  reason: string;
}

/** A gold-bearing turn whose hit@k was 1 in the baseline and is 0 now. */
export interface GateFlip {
  caseId: string;
  turn: number;
  locale: string;
  kind: string;
  user: string;
  gold: string[];
  retrievedIds: string[];
  /** Where each gold card is now, per stage (1-based rank; null = absent), from the trace summary. */
  goldPositions?: GoldPositions;
}

export interface GateResult {
  passed: boolean;
  failures: GateFailure[];
  /** Every floor and baseline check with its verdict (absent in reports written before gates recorded them). */
  checks?: GateCheck[];
  /** With a baseline: the tolerance of the drop checks and where it came from. */
  tolerance?: { maxDrop: number; source: string };
  /** With a baseline: every hit@k 1→0 turn (gated only with maxFlips). */
  flips?: GateFlip[];
}

/**
 * Significance test of one split group against a reference group (extension
 * of the report, so split deltas are not merely indicative): a stratified
 * case-level bootstrap of the difference, the p-value inverted from the same
 * interval, Holm-adjusted within the key's family (docs/statistics.md).
 */
export interface GroupDelta {
  key: string;
  /** Split dimension, e.g. "locale". */
  split: string;
  group: string;
  reference: string;
  nGroup: number;
  nReference: number;
  meanGroup: number;
  meanReference: number;
  /** meanGroup − meanReference. */
  diff: number;
  /** Distinct cases in each group. */
  nCasesGroup?: number;
  nCasesReference?: number;
  /** Unadjusted 95% percentile-bootstrap interval of `diff` (absent when a group has < 2 units). */
  ci95?: [number, number];
  /** Raw two-sided p-value, inverted from the same bootstrap interval (p < 0.05 exactly when ci95 excludes 0). */
  pValue: number;
  /** Holm–Bonferroni adjusted p-value within the family of all deltas of the same key. */
  pAdjusted?: number;
  /** Number of tests in that family. */
  familySize?: number;
  /** pAdjusted < 0.05. */
  significant?: boolean;
}

/** Where the answer-side headline figures come from (src/eval/report/parts.ts, docs/holdout.md). */
export interface AnswerSide {
  /** "holdout": headline answer-side figures are on held-out turns only; "all": no split, every turn. */
  scope: "holdout" | "all";
  /** The answer-side keys of the run (keys outside the retrieval metric registry), in key order. */
  keys: string[];
  /** Turns of each part in this run (0 and 0 without a split). */
  turns: Record<SplitPart, number>;
}


/**
 * Marks a partial report written by `retrace eval --shard i/n` (src/eval/gate/shard.ts,
 * docs/reliability.md "Sharded sweeps"). Its aggregates cover this shard's
 * turns only and its gate is not evaluated; `retrace merge` turns all n
 * shards into the full report.
 */
export interface ShardInfo {
  /** This shard, 1..count. */
  index: number;
  count: number;
  /** The assignment rule (SHARD_RULE). */
  rule: string;
  /** This shard's case ids, in dataset order, and its number of turns. */
  caseIds: string[];
  turns: number;
  /** The whole selection the shards split: the datasetHash an unsharded run reports, its case ids in dataset order, its turns. */
  dataset: { datasetHash: string; caseIds: string[]; turns: number };
}

/** Current `schemaVersion` of the report JSON (ReportSchema in src/eval/report/schemas.ts; docs/schema-versions.md). */
export const REPORT_VERSION = 2 as const;

export interface Report {
  schemaVersion: typeof REPORT_VERSION;
  run: RunInfo;
  aggregates: Record<string, Aggregate>;
  splits: {
    kind: Record<string, Record<string, Aggregate>>;
    locale: Record<string, Record<string, Aggregate>>;
    /** Extension: per part of the split (`tune`, `holdout`), every key; absent without a split (docs/holdout.md). */
    part?: Record<string, Record<string, Aggregate>>;
    /** Any further split of the cases, same shape (docs/statistics.md). */
    [split: string]: Record<string, Record<string, Aggregate>> | undefined;
  };
  /** Keys not measured in this run (docs/architecture.md §7). */
  vacuous: string[];
  /** Why each vacuous key was not measured. */
  vacuousReasons: Record<string, string>;
  turns: TurnReport[];
  gate: GateResult | null;
  /** Extension: per-split deltas (kind vs golden, locale vs the reference locale) with their tests (docs/statistics.md). */
  deltas?: GroupDelta[];
  /** Extension: how the ci95 intervals and p-values were resampled, so they can be reproduced (docs/statistics.md). */
  bootstrap?: {
    seed: number;
    samples: number;
    /** What was resampled: whole cases (default) or single turns. */
    unit?: "case" | "turn";
    /** How deltas were tested and adjusted. */
    test?: string;
    correction?: string;
  };
  /** Extension: card counts behind the chance levels, and small-KB warnings (docs/statistics.md). */
  chance?: { cardsPerLocale: Record<string, number>; warnings: string[] };
  /** Extension: where the answer-side headline figures come from (held-out turns, or all turns without a split). */
  answerSide?: AnswerSide;
  /** Extension: what the groundedness judge cost (present only when `--judge` ran one). */
  judge?: JudgeCost;
  /** Extension: present only on the partial report of one shard (`retrace eval --shard i/n`). */
  shard?: ShardInfo;
  /** Wall-clock figures only (never compared): see `Timings`. */
  timings?: Timings;
}
