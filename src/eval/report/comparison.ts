/**
 * The comparison of two runs, as src/eval/gate/compare.ts `buildComparison`
 * computes it once: per metric the paired bootstrap (B − A, its interval, p
 * and worded verdict), the hit@k flips, the turns that moved while hit@k held
 * (in one order), the stage funnels and their paired differences, the run
 * properties that differ, and the two method lines. It is the document
 * `retrace compare --json` prints (version COMPARISON_VERSION); the terminal
 * text, the compare page and the pull-request comment only format it
 * (docs/statistics.md, docs/ci.md). Types only: the renderers under
 * ./render/ and ./html/ read them without importing the gate.
 */
import type { PairedBootstrap, ResampleUnit } from "../stats/bootstrap.js";
import type { FunnelStageDiff } from "./funnel-stats.js";
import type { FunnelStage } from "./types.js";

/** The `version` of the comparison document (`retrace compare --json`): fields are only added within a version. */
export const COMPARISON_VERSION = 1;

/** The smallest |B − A| of recall@k or nDCG@k for which a turn whose hit@k held is listed as moved (docs/html-report.md). */
export const SHIFT_THRESHOLD = 0.2;

/** The verdict every rendering prints for a row: "significant" exactly when its interval excludes 0. */
export type Verdict = "significant" | "not significant";

export interface KeyComparison extends PairedBootstrap {
  key: string;
  /** Holm-adjusted p within the metric's family; the family is this one test, so it equals pValue. */
  pAdjusted: number;
  familySize: number;
  /** pAdjusted < 0.05, which is exactly "ci95 excludes 0". */
  significant: boolean;
  /** `significant` worded, as every rendering prints it. */
  verdict: Verdict;
  /** The turns paired: every shared turn, or (answer-side keys of a run with a split) the held-out ones only. */
  turns: "all" | "holdout";
}

/** A turn whose hit@k differs between the two runs. */
export interface TurnFlip {
  /** `caseId#turn` */
  id: string;
  caseId: string;
  turn: number;
  /** The turn's locale, from a report side (absent between two baselines, which do not record it). */
  locale?: string;
  direction: "hit→miss" | "miss→hit";
}

/** A turn whose hit@k is the same in both runs but whose recall@k or nDCG@k moved by at least the threshold. */
export interface MovedTurn {
  /** `caseId#turn` */
  id: string;
  caseId: string;
  turn: number;
  /** The turn's locale, from a report side (absent between two baselines). */
  locale?: string;
  /** hit@k, the same in both runs. */
  hit: number;
  /** B − A of recall@k and of nDCG@k (unrounded). */
  recall: number;
  ndcg: number;
  /** The larger-magnitude change of the two (recall's on a tie): what the turns are ordered by, and what the compare page words. */
  largest: number;
  /** `largest` worded: "drop" when it is below 0, else "gain". */
  change: "drop" | "gain";
}

/** How the comparison resampled and tested: what every rendering of a comparison names (docs/statistics.md). */
export interface ComparisonMethod {
  unit: ResampleUnit;
  seed: number;
  samples: number;
  test: string;
  correction: string;
}

/** Both runs' stage funnels and the paired difference per stage. */
export interface FunnelComparison {
  a: FunnelStage[];
  b: FunnelStage[];
  /** B − A per stage measured in both, over the turns both measured, with the paired interval. */
  diff: FunnelStageDiff[];
}

/** One run's count at a funnel stage, as its report counted it (`funnel.stages`). */
export interface FunnelCount {
  present: number;
  n: number;
  share: number;
}

/**
 * One row of the stage funnel's change between two reports (the pull-request
 * comment's table): each run's count as its report counted it, and B − A in
 * turns. Stages in A's order, then the stages only B measured.
 */
export interface FunnelChangeRow {
  stage: string;
  label: string;
  /** null: that run did not measure the stage. */
  a: FunnelCount | null;
  b: FunnelCount | null;
  /** B's present − A's present (gold-bearing turns with gold at the stage); null unless both measured it. */
  turns: number | null;
}

/** A run property that differs between two runs (src/eval/gate/run-diff.ts). */
export interface RunDifference {
  /** Dotted path in the report (`run.embedder`, `run.retrieval.en.denseK`; per-locale paths that differ alike are merged: `run.retrieval.{en,de}.denseK`). */
  path: string;
  /** Readable name: "embedder", "retrieval settings [en, de]: dense k". */
  name: string;
  /** The values in A and B (JSON values; undefined = the run does not record it). */
  a: unknown;
  b: unknown;
  /** A result of the run rather than a setting (a graph run's counts). */
  outcome: boolean;
}

/** The comparison of run A (the reference) and run B, computed once. */
export interface Comparison {
  version: typeof COMPARISON_VERSION;
  /** The files compared (as named on the command line, or the reference's file and "this run"). */
  a: string;
  b: string;
  datasetHash: string;
  k: number;
  /** Every run property that differs (settings, then outcomes). */
  differences: RunDifference[];
  method: ComparisonMethod;
  /** The two lines under every rendering: the test, unit, resamples and seed; when a row is significant and the correction. */
  note: [string, string];
  /** What the pairing should say but does not refuse (a `--graph` module changed, a run that does not record how it was scored). */
  notes: string[];
  /** One row per metric both runs hold: registry metrics first, then the others by name. */
  comparisons: KeyComparison[];
  /** The turns whose hit@k flipped: hit→miss first, then miss→hit, each in the first report side's order. */
  flips: { hitToMiss: number; missToHit: number; turns: TurnFlip[] };
  /** The turns whose hit@k held but recall@k or nDCG@k moved by ≥ threshold: biggest drop first, biggest gain last (ties in the first report side's order). */
  moved: { threshold: number; turns: MovedTurn[] };
  /** How many held-out turns the answer-side rows are paired over (null: no side carries a tune/holdout split). */
  heldOutTurns: number | null;
  /** Both stage funnels and their paired differences; absent when a side is a baseline (no per-turn stages). */
  funnels?: FunnelComparison;
  /** Both reports' funnel counts per stage and the change in turns; absent unless both sides are reports with a funnel. */
  funnelChange?: FunnelChangeRow[];
}
