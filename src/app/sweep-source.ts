/**
 * The sweep step of a graph eval (src/app/graph-eval.ts `runGraphEval`), one
 * interface for its two sources: a graph run (`--graph`) and recorded traces
 * (`--traces`, src/app/traces-eval.ts). Everything after the sweep — the
 * report, gates, baseline, renderers — is shared.
 */
import type { EvaluatorSpec } from "../eval/measures/evaluators.js";
import type { GraphRunInfo } from "../eval/report/types.js";
import type { IdOptions } from "../eval/sweep/capture.js";
import type { GraphTurn } from "../eval/sweep/external-graph.js";
import type { RecordedGraphTurn } from "../eval/sweep/recorded.js";
import type { EvalCase, KnowledgeBase } from "../kb/types.js";

/** Where a graph eval's turns come from: the graph run, or recorded traces. */
export interface SweepSource {
  /** What the report and baseline identify the source by. */
  module: { file: string; exportName: string; moduleHash?: string };
  configurable?: ParsedConfigurable;
  /** The source in messages (`--graph agent.mjs#graph`, `--traces FILE`). */
  label: string;
  /** The report's `embedderDescription`. */
  description: string;
  /** `selection`: with `--shard`, every selected case (`cases` is this shard's); recorded traces leave out the conversations of the other shards' cases. */
  sweep(
    cases: readonly EvalCase[],
    kb: KnowledgeBase,
    evaluators: EvaluatorSpec[],
    onCaseDone: (d: number, t: number) => void,
    selection?: readonly EvalCase[],
  ): Promise<SweptTurns>;
}

/** What a source's sweep gives the report: the turns (and each repeat's), the id options, and a recorded run's extras. */
export interface SweptTurns {
  turns: GraphTurn[];
  runs: GraphTurn[][];
  ids: IdOptions;
  /** `--traces`: the `run.graph.traces` section (what was read and how it joined). */
  traces?: GraphRunInfo["traces"];
  /** `--traces`: where each scored turn was recorded, for the write-back files (src/app/traces-eval.ts). */
  recorded?: RecordedGraphTurn[];
}

/** A `--configurable` read and checked: the object, and what the report records of it. */
export interface ParsedConfigurable {
  value: Record<string, unknown>;
  /** sha256 of its canonical JSON, and its top-level keys, sorted. */
  record: { hash: string; keys: string[] };
}
