/** Data contracts of the evaluation core (DESIGN.md §3.4, §3.5). Pure types. */
import type { CaseKind, Expect } from "../kb/types.js";

export interface EvalResult {
  key: string;
  score: number;
  comment?: string;
}

export interface TurnArtifacts {
  caseId: string;
  /** 0-based turn index. */
  turn: number;
  locale: string;
  kind: CaseKind;
  gold: string[];
  expect: Expect;
  /** null = the retrieval node did not run (store-less). */
  retrievedIds: string[] | null;
  citedIds: string[];
  answer: string;
  refused: boolean;
  /** Ids of every card in the KB, so citation correctness can check existence. Optional for users' own artifacts. */
  knownIds?: ReadonlySet<string>;
}

/** An evaluator maps one turn's artifacts to results; `[]` contributes no keys. */
export type Evaluator = (a: TurnArtifacts) => EvalResult[];

/** A key that had nothing to measure in this run, and why (e.g. "no store"). */
export interface VacuousKey {
  key: string;
  reason: string;
}

export interface Aggregate {
  mean: number;
  n: number;
  /** 95% percentile-bootstrap interval of the mean (seeded). Absent when n < 2. */
  ci95?: [number, number];
}

/** Where each gold card stood at each stage: `{ goldId: { stage: rank } }` (1-based rank of its best chunk, null = absent). */
export type GoldPositions = Record<string, Record<string, number | null>>;

export interface TraceSummary {
  query: string;
  k: number;
  retrievedIds: string[];
  goldPositions: GoldPositions;
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
}

export interface RunInfo {
  datasetHash: string;
  kbHash: string;
  /** Embedder id, or null when no retrieval ran. */
  embedder: string | null;
  embedderDescription?: string;
  k: number;
  /** "local" (self-started Chroma), a URL, or "none" (store-less). */
  store: string;
  mode?: string;
  rerank?: string | null;
}

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
}

export interface GateFailure {
  /** "floor" | "regression" | "not_measured" | "baseline_mismatch" */
  kind: "floor" | "regression" | "not_measured" | "baseline_mismatch";
  key: string;
  reason: string;
}

export interface GateResult {
  passed: boolean;
  failures: GateFailure[];
}

/**
 * Significance test of one split group against a reference group (extension
 * of DESIGN.md §3.5, so locale deltas are not merely indicative): a
 * two-sample permutation test, since the groups hold different turns.
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
  /** Bootstrap interval of `diff` (absent when a group has < 2 values). */
  ci95?: [number, number];
  /** Two-sided permutation-test p-value (+1 corrected). */
  pValue: number;
}

export const REPORT_VERSION = 1 as const;

export interface Report {
  version: typeof REPORT_VERSION;
  run: RunInfo;
  aggregates: Record<string, Aggregate>;
  splits: {
    kind: Record<string, Record<string, Aggregate>>;
    locale: Record<string, Record<string, Aggregate>>;
  };
  /** Keys not measured in this run (DESIGN.md §3.5). */
  vacuous: string[];
  /** Why each vacuous key was not measured. */
  vacuousReasons: Record<string, string>;
  turns: TurnReport[];
  gate: GateResult | null;
  /** Extension: per-locale deltas against the reference locale, with significance tests. */
  deltas?: GroupDelta[];
  /** Extension: how the ci95 intervals and p-values were resampled, so they can be reproduced. */
  bootstrap?: { seed: number; samples: number };
  /** Wall-clock figures only (never compared): see `Timings`. */
  timings?: Timings;
}
