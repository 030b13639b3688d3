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

/** Cost of the groundedness judge in a run (extension; docs/langchain-integration.md). */
export interface JudgeCost {
  /** The chat model's name (and model name when it has one): part of the cache key. */
  model: string;
  /** Version of the judge prompt: part of the cache key. */
  prompt: string;
  /** Calls made to the model in this run (cache misses). */
  calls: number;
  /** Verdicts read from the on-disk cache instead of calling the model. */
  cached: number;
  /** Summed token counts of the calls when the model reported them; null when it reported none. */
  inputTokens: number | null;
  outputTokens: number | null;
  /** Replies that held no readable score (those turns get no groundedness key). */
  unparsable: number;
}
