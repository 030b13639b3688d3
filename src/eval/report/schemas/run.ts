/**
 * The report's `run` header: what was run, on which data, with which
 * configuration; the `--graph` run's facts; the run's retrieval settings,
 * opaque to the harness.
 *
 * One section of the schemas indexed by ../schemas.ts (src/eval/report/schemas.ts).
 */
import { z } from "zod";
import { count, storeKind } from "./primitives.js";
import { sourceKind } from "./source.js";
import type { JsonValue } from "../../../contract/trace.js";

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
  /**
   * `retrace eval --traces` (docs/recorded-traces.md): what was read —
   * the format, the files, spans or runs, conversations and turns — and how
   * the recording joined the cases: turns scored, turns whose user text
   * differs from the case's (not scored), recorded turns past their case's
   * end, case turns past the recording's, conversations with no case, cases
   * with no conversation, conversations that named no id. Lists keep at most
   * 20 entries; their counts are exact. Absent on `--graph` runs.
   */
  traces: z
    .object({
      /** The format read: a registered trace format's name (`--traces-format`; src/eval/traces/formats/registry.ts). */
      format: z.string().min(1),
      /**
       * How the format names itself and its records in the recorded-traces
       * header ("LangSmith runs", "runs"), from its format module when the run
       * was made; a report written before they were recorded gets them on read
       * (./legacy-trace-words.ts).
       */
      label: z.string().min(1),
      recordsName: z.string().min(1),
      files: z.array(z.string()),
      records: count,
      conversations: count,
      turns: count,
      filteredOut: count,
      scoredTurns: count,
      mismatches: count,
      mismatchExamples: z.array(
        z.object({ case: z.string(), turn: count, recorded: z.string(), expected: z.string(), where: z.string() }),
      ),
      turnsWithoutCaseTurn: count,
      caseTurnsWithoutTrace: count,
      conversationsWithoutCase: count,
      conversationsWithoutCaseExamples: z.array(z.string()),
      casesWithoutTrace: count,
      casesWithoutTraceExamples: z.array(z.string()),
      anonymousConversations: count,
      anonymousExamples: z.array(z.string()),
      /** Turns whose retriever calls cannot be attached (a parent link missing from the export): not scored; absent in reports written before it was counted. */
      unattachedTurns: count.optional(),
      /** Retriever calls with no turn (their parent link missing). */
      unattachedCalls: count.optional(),
      unattachedExamples: z.array(z.string()).optional(),
    })
    .optional(),
});
/**
 * The keys of `run.graph` that identify a `--graph` run and how it was scored
 * (the rest are counts over its turns): the shards of one run agree on them,
 * and `retrace merge` recomputes the others from the merged turns.
 */
export const GRAPH_IDENTITY_KEYS = [
  "file",
  "exportName",
  "moduleHash",
  "idKey",
  "retrievalCall",
  "catalog",
  "idMapHash",
  "configurable",
  "turnTimeoutSeconds",
] as const satisfies readonly (keyof z.output<typeof graphRunInfoObject>)[];

/** Header facts of a `--graph` run (docs/evaluate-your-graph.md). */
export interface GraphRunInfo extends z.output<typeof graphRunInfoObject> {}
const GraphRunInfoSchema: z.ZodType<GraphRunInfo> = graphRunInfoObject;

/** A JSON value: what the agent's opaque settings may hold (shape only; the agent's own schemas validate their meaning). */
const jsonValue: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonValue), z.record(jsonValue)]),
);
const jsonObject = z.record(jsonValue);

const retrievalRunConfigObject = z.object({
  /** The embedder id of this locale's turns, when the run had per-locale embedders (docs/models.md); absent: `run.embedder`. */
  embedder: z.string().min(1).optional(),
  denseK: z.number().int(),
  bm25K: z.number().int(),
  /**
   * Fusion of the hybrid mode (docs/fusion-and-tuning.md): a method name and
   * its parameters. Opaque to the report: the agent's fusion registry
   * validates them; the report checks the shape only, and records, compares
   * and prints them as data.
   */
  fusion: z.object({ method: z.string().min(1), params: jsonObject }).strict(),
  /** The rest of the agent's retrieval identity, opaque (docs/fusion-and-tuning.md); absent when the agent records none. */
  settings: jsonObject.optional(),
});
/** The retrieval settings of a run: a trace's config (`RetrievalTraceConfig`) without what `run` records elsewhere (embedder, mode, rerank). */
export interface RetrievalRunConfig extends z.output<typeof retrievalRunConfigObject> {}
export const RetrievalRunConfigSchema: z.ZodType<RetrievalRunConfig> = retrievalRunConfigObject;

const runInfoObject = z.object({
  datasetHash: z.string().min(1),
  kbHash: z.string(),
  /**
   * What ran (report version 5; docs/schema-versions.md): retrace's own graph
   * (`own`), a graph of your own (`graph`: its module and export in `graph`)
   * or recorded traces (`traces`: what was read in `graph.traces`).
   */
  source: sourceKind,
  /** The id of the embedder retrace ran, or null when it ran none: no retrieval, or a `--graph` or `--traces` run (the graph's own retrievers; what they are is in `embedderDescription`). */
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
  /**
   * `recorded` when the run replayed each turn on the case's recorded conversation (`run.replay: recorded`,
   * docs/configuration.md#replay-own-or-recorded-history); absent when the graph saw its own answers (the default).
   */
  replay: z.literal("recorded").optional(),
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
export const RunInfoSchema: z.ZodType<RunInfo> = runInfoObject.superRefine((run, ctx) => {
  // A graph's module and export live in `graph` (the baseline's `source` is built from them).
  if (run.source === "graph" && run.graph === undefined)
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: ["graph"],
      message: "missing: a --graph run's report records its graph (module, export, how it was scored)",
    });
});
