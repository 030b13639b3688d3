/**
 * The source of an eval's turns, one interface for its three kinds:
 * retrace's own graph (src/app/own-graph/eval.ts), a graph of your own (`--graph`,
 * src/app/graph-eval.ts) and recorded traces (`--traces`,
 * src/app/traces-eval.ts). Everything after the sweep — the report, gates,
 * baseline, renderers — is the one body of src/app/evaluate.ts.
 */
import type { EvaluatorSpec } from "../eval/measures/evaluators.js";
import type { GraphRunInfo, Report, TurnReport } from "../eval/report/types.js";
import type { IdOptions } from "../eval/sweep/capture.js";
import type { GraphTurn, SweepPhases } from "../eval/sweep/external-graph.js";
import type { RecordedGraphTurn } from "../eval/sweep/recorded.js";
import type { EvalCase, KnowledgeBase } from "../kb/types.js";

/** Where an eval's turns come from: retrace's own graph, a graph of your own, or recorded traces. */
export interface SweepSource {
  /** What the report and baseline identify a graph of your own or a recording by (retrace's own graph: its settings in the header). */
  module?: { file: string; exportName: string; moduleHash?: string };
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
  /** The report's `run` header from the turns the sweep gave (combined over repeats) and what it swept; may refuse the run (exit 2: most scored ids name no card). */
  header(turns: TurnReport[], swept: SweptTurns): Report["run"];
  /** True for recorded traces (a shard section says so). */
  recorded?: boolean;
  /** The source's own wall-clock figures for `timings` (retrace's own graph: its embedder's fit and the store's write). */
  setupTimings?(): Partial<NonNullable<Report["timings"]>>;
}

/** What a source's sweep gives the report: the turns (and each repeat's), the id options, and a recorded run's extras. */
export interface SweptTurns {
  turns: GraphTurn[];
  runs: GraphTurn[][];
  ids: IdOptions;
  /** `--traces`: the `run.graph.traces` section (what was read and how it joined). */
  traces?: GraphRunInfo["traces"];
  /**
   * `--traces`: what the header reads of the captures, each turn's capture
   * let go once scored (src/eval/sweep/recorded.ts `CaptureSummary`); the
   * turns' `retrieval` is then null. Sorted.
   */
  captured?: { retrievers: string[]; metadataKeys: string[] };
  /** `--traces`: where each scored turn was recorded, for the write-back files (src/app/traces-eval.ts). */
  recorded?: RecordedGraphTurn[];
  /** Wall time of the graph invocations and the evaluators over every repeat (a source that runs a graph). */
  phases?: SweepPhases;
  /** Each traced turn's stage timings, keyed `caseId#turn`, in dataset order (turns with a retrace trace; wall clock). */
  stageTimings?: Record<string, Record<string, number>>;
}

/** A `--configurable` read and checked: the object, and what the report records of it. */
export interface ParsedConfigurable {
  value: Record<string, unknown>;
  /** sha256 of its canonical JSON, and its top-level keys, sorted. */
  record: { hash: string; keys: string[] };
}

/** A graph of your own or a recording, before the eval gives it its header (src/app/graph-eval.ts): identified by its module. */
export type ModuleSource = Omit<SweepSource, "header" | "module"> & {
  module: NonNullable<SweepSource["module"]>;
  /** Whether its turns get query attribution, and why not (the report's `queryAttribution` header; docs/query-attribution.md). */
  counterfactual: { enabled: boolean; reason?: string };
};
