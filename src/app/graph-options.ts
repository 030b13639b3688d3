/**
 * The options of an eval of a graph of your own (`--graph`) or of recorded
 * traces (`--traces`): how the graph is loaded, driven and read, and the
 * run's data, gate and baseline settings (the store, embedder and mode
 * belong to retrace's own graph: src/app/eval-plan.ts).
 */
import type { ShardSpec } from "../eval/gate/shard.js";
import type { RetrievalCall } from "../eval/sweep/capture.js";
import type { GateOptions, MaxDrop } from "./report.js";
import type { SettingValues } from "./settings/schema.js";
import type { OwnGraphOnlySetting } from "./settings/source-families.js";
import type { RecordedTracesOptions } from "./traces-eval.js";

/**
 * How a graph of your own is loaded, driven and read (`eval --graph`, `trace
 * --graph`): the module, its input and id rules, and every setting of the
 * settings schema `retrace trace` reads but retrace's own graph's
 * (`configurable`, `turnTimeout`, `loadTimeout`, `graphMemoryMb`,
 * `maxStateMb`, `maxCardBytes`, `replay`; docs/configuration.md gives each
 * one's values and default), derived from the schema's rows
 * (./settings/schema.ts `SettingValues`): a setting added there appears here.
 */
export interface ExternalGraphOptions extends Omit<SettingValues<"trace">, OwnGraphOnlySetting> {
  /** The module and export of the graph (`agent.ts#graph`; default export name `graph`). */
  graph?: string;
  /** A module whose function (turn, case) => input builds each turn's graph input (default: a human message on the messages channel). */
  input?: string;
  /** The metadata field holding the card id (default: parentId, doc_id, id, source, then Document.id; src/eval/measures/doc-id.ts). */
  idKey?: string;
  /** A module whose function (document) => id maps a retrieved document to a card id. */
  idMap?: string;
  /** Which retriever calls of a turn are scored: `last` (default) the last step (calls overlapping in time), `first` the first step, `all` every call. */
  retrievalCall?: RetrievalCall;
  /** `id<TAB>locale` a line, standing in for the KB when the documents live in your own store. */
  catalog?: string;
  /**
   * Query attribution (`--counterfactual`; docs/query-attribution.md): after
   * each gold-bearing turn, the scored call's retriever is invoked again with
   * the raw message and the case's `standalone` question. Extra retriever
   * calls (the report counts them); the retriever must be side-effect free.
   * Default off (the report says so).
   */
  counterfactual?: boolean;
}

/**
 * The options of a graph eval: how the graph is loaded and read, the
 * recording, data, case selection, gate and baseline, and every setting of
 * the settings schema `retrace eval` reads but retrace's own graph's (the
 * store, embedder, mode, history and worker threads belong to retrace's own
 * graph: src/app/eval-plan.ts), derived from the schema's rows
 * (`concurrency`, `seed`, `resample`, `judge`, `judgeCache`, …).
 */
export interface GraphEvalOptions
  extends ExternalGraphOptions, RecordedTracesOptions, GateOptions, Omit<SettingValues<"eval">, OwnGraphOnlySetting> {
  kb?: string;
  cases?: string;
  /** Cards scored per turn (default 5). */
  k?: number;
  locale?: string[];
  case?: string[];
  baseline?: string;
  /** `--gate max-drop=X`; `auto`: DEFAULT_MAX_DROP (0.02) — a user's graph may not be deterministic, so never the 0 of retrace's own pipeline. Unset: drops not checked. */
  maxDrop?: MaxDrop;
  updateBaseline?: boolean;
  /** Turns whose graph run throws that the gate tolerates (default 0). */
  maxErrors?: number;
  /** Gold-bearing turns with no retriever run (scored as misses) the gate tolerates (default: not gated). */
  maxNoRetrieval?: number;
  /** Run only this shard of the selected cases; its report is partial and ungated (`retrace merge` gates; docs/reliability.md). */
  shard?: ShardSpec;
  /**
   * Runs every case this many times (default 1), each repeat on fresh threads:
   * per-turn means over the repeats, flaky turns, two-stage intervals and
   * variance shares in the report's `repeats` section (docs/ci.md, "Repeats and flaky turns").
   */
  repeat?: number;
}
