/**
 * The options of an eval of a graph of your own (`--graph`) or of recorded
 * traces (`--traces`): how the graph is loaded, driven and read, and the
 * run's data, gate and baseline settings (the store, embedder and mode
 * belong to retrace's own graph: src/app/eval-plan.ts).
 */
import type { ShardSpec } from "../eval/gate/shard.js";
import type { ResampleUnit } from "../eval/stats/bootstrap.js";
import type { RetrievalCall } from "../eval/sweep/capture.js";
import type { Replay } from "../eval/sweep/replay.js";
import type { GateOptions, MaxDrop } from "./report.js";
import type { RecordedTracesOptions } from "./traces-eval.js";

/** How a graph of your own is loaded, driven and read (`eval --graph`, `trace --graph`). */
export interface ExternalGraphOptions {
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
  /** The card size limit (src/kb/cards.ts). */
  maxCardBytes?: number;
  /**
   * `configurable` handed to the graph on every turn, merged under retrace's
   * `thread_id` (one thread per case: retrace's wins): an object, or (the
   * CLI's `run.configurable` of --config) a JSON object literal or the path of a .json file
   * holding one. Recorded in the report as a hash and its keys, not its values.
   */
  configurable?: string | Record<string, unknown>;
  /** Per-turn deadline, seconds (default DEFAULT_TURN_TIMEOUT_S = 120): a turn still running then is an error turn (docs/reliability.md). */
  turnTimeout?: number;
  /** How long loading and building the graph (its module, a factory, `--input`, `--id-map`) may take, seconds (default DEFAULT_LOAD_TIMEOUT_S = 30; docs/reliability.md). */
  loadTimeout?: number;
  /** The heap limit of the thread running the graph, MB (default DEFAULT_GRAPH_MEMORY_MB = 4096; docs/reliability.md). */
  graphMemoryMb?: number;
  /** State size above which a turn is listed in the report, MB (default DEFAULT_MAX_STATE_MB = 16; never fails the turn). */
  maxStateMb?: number;
  /**
   * Query attribution (`--counterfactual`; docs/query-attribution.md): after
   * each gold-bearing turn, the scored call's retriever is invoked again with
   * the raw message and the case's `standalone` question. Extra retriever
   * calls (the report counts them); the retriever must be side-effect free.
   * Default off (the report says so).
   */
  counterfactual?: boolean;
  /**
   * What earlier turns the graph sees (`run.replay`; docs/configuration.md#replay-own-or-recorded-history):
   * `own` (default) its own answers on one thread a case; `recorded` each turn on a fresh thread fed the
   * case's recorded conversation (through `--input`'s `turn.history`, or the default input's messages).
   */
  replay?: Replay;
}

/** The options of a graph eval (the store, embedder and mode belong to retrace's own graph). */
export interface GraphEvalOptions extends ExternalGraphOptions, RecordedTracesOptions, GateOptions {
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
  concurrency?: number;
  seed?: number;
  /** Run only this shard of the selected cases; its report is partial and ungated (`retrace merge` gates; docs/reliability.md). */
  shard?: ShardSpec;
  /** A module exporting the judge's LangChain chat model: grades the graph's final answer against the retrieved cards of the KB (docs/langchain-integration.md). */
  judge?: string;
  /** Where judge verdicts are cached (unset: not cached). */
  judgeCache?: string;
  /** What the bootstrap resamples (docs/statistics.md); default whole cases. */
  resample?: ResampleUnit;
  /**
   * Runs every case this many times (default 1), each repeat on fresh threads:
   * per-turn means over the repeats, flaky turns, two-stage intervals and
   * variance shares in the report's `repeats` section (docs/ci.md, "Repeats and flaky turns").
   */
  repeat?: number;
}
