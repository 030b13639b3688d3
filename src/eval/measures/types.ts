/** The evaluator contract (docs/architecture.md §6): what one turn gives an evaluator, and what it returns. Pure types. */
import type { CaseKind, Expect } from "../../kb/types.js";

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
  /** The citation contract (`must_cite_one_of`): hit@k, recall@k, MRR@k, P@k and the answer side read it; [] for a no-match turn or a turn without a contract. */
  gold: string[];
  expect: Expect;
  /**
   * Optional graded relevance (the case turn's `relevant`: card id → grade
   * 0–3): when present, nDCG@k uses these gains (trec_eval's ndcg_cut) instead
   * of binary gains over `gold` (docs/metrics.md).
   */
  relevant?: Record<string, number>;
  /** Optional card ids a person judged for the turn (the case turn's `judged`); with `relevant` and `gold` they make the judged set of judged@k. */
  judged?: string[];
  /**
   * True for a turn with graded `relevant` but no citation contract (no
   * `must_cite_one_of` or `expect`): it is scored for nDCG only; hit@k,
   * recall@k and the answer side emit nothing (`gold` [] and `expect`
   * "answer" are placeholders).
   */
  relevanceOnly?: true;
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

/**
 * The groundedness judge of a run as its report's `judge` section holds it:
 * what the verdicts depend on (model and prompt), and how many of them had no
 * readable score. The same on a cached re-run (docs/determinism.md).
 */
export interface JudgeInfo {
  /** The chat model's name (and model name when it has one): part of the cache key. */
  model: string;
  /** Version of the judge prompt: part of the cache key. */
  prompt: string;
  /** Replies that held no readable score (those turns get no groundedness key). */
  unparsable: number;
}

/**
 * What the judge cost in one run, kept in the report's `timings.judge`: it
 * depends on the cache's state when the run started, not only on the data,
 * the configuration and the seed (docs/determinism.md).
 */
export interface JudgeUsage {
  /** Calls made to the model in this run (cache misses). */
  calls: number;
  /** Verdicts read from the on-disk cache instead of calling the model. */
  cached: number;
  /** Summed token counts of the calls when the model reported them; null when it reported none. */
  inputTokens: number | null;
  outputTokens: number | null;
}

/** Cost of the groundedness judge in a run (extension; docs/langchain-integration.md): the report's `judge` section and `timings.judge` together. */
export interface JudgeCost extends JudgeInfo, JudgeUsage {}
