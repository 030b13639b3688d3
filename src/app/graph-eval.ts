/**
 * Use-case: an eval of a user's own LangGraph.js graph (`retrace eval --graph
 * FILE[#export]`, `runGraphEval` for library users; docs/evaluate-your-graph.md),
 * and the graph sweep `retrace trace --graph` shares. Retrieval is captured
 * from the graph's retriever runs with a callback handler; nothing in the
 * user's code changes. The KB (`kb`) or a catalog (`catalog`, `id<TAB>locale`
 * a line) gives the ids the integrity check resolves gold against; with
 * neither, the run is refused.
 *
 * The same rules as retrace's own graph (src/app/eval-plan.ts), checked before the graph module is loaded: `--locale`
 * / `--case` against the data, the baseline at `<kb>/eval/baseline.json` unless `--baseline` names one (a drop or flip
 * tolerance without a baseline file is exit 2), the baseline against the dataset, k, the graph and how it is scored.
 * The graph is identified by its module relative to the project root plus the export, and a sha256 of the module file
 * is recorded (docs/evaluate-your-graph.md, "Baselines").
 *
 * The gate fails on floors, baseline drops and flips, turn errors beyond
 * `maxErrors`, and gold-bearing turns with no retrieval beyond
 * `maxNoRetrieval`; a run most of whose retrieved ids name no card is
 * refused (src/eval/sweep/graph-checks.ts). A shard (`shard`) runs whole
 * cases and writes a partial, ungated report for `retrace merge`.
 */
import { resolveSettings } from "./settings/read.js";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { DocumentInterface } from "@langchain/core/documents";
import { BaselineMismatchError, InvalidArgumentError } from "../errors.js";
import {
  assertComparable,
  checkBaselineTurns,
  GRAPH_PREFIX,
  normalizeGraphId,
  readBaseline,
  type Baseline,
} from "../eval/gate/baseline.js";
import { shardCases, type ShardSpec } from "../eval/gate/shard.js";
import {
  checkKnownIds,
  graphRunFacts,
  graphRunInfo,
  stateLimitBytes,
  type GraphRunIdentity,
} from "../eval/sweep/graph-checks.js";
import { readQuarantine } from "../eval/gate/quarantine.js";
import { DEFAULT_MAX_STATE_MB, DEFAULT_TURN_TIMEOUT_S } from "../eval/sweep/turn-guard.js";
import { cardsPerLocale } from "../eval/measures/chance.js";
import { groundednessEvaluator, retrievalSideEvaluators, type EvaluatorSpec } from "../eval/measures/evaluators.js";
import type { Report, TurnReport } from "../eval/report/types.js";
import type { ResampleUnit } from "../eval/stats/bootstrap.js";
import { describeIdKeys, type IdOptions, type RetrievalCall } from "../eval/sweep/capture.js";
import { baseRetrieversFor } from "../eval/sweep/retriever-instances.js";
import {
  capturedRetrievers,
  DEFAULT_GRAPH_EXPORT,
  loadFunction,
  loadGraph,
  parseModuleSpec,
  runGraphSweep,
  type GraphTurn,
  type InputMapper,
  type SweepPhases,
} from "../eval/sweep/external-graph.js";
import { loadCatalog } from "../kb/catalog.js";
import { loadKnowledgeBase } from "../kb/cards.js";
import { caseIndexOf, loadCases } from "../kb/cases.js";
import { kbHash } from "../kb/hash.js";
import type { Replay } from "../eval/sweep/replay.js";
import { readTextFileOrThrow } from "../kb/text.js";
import type { EvalCase, KnowledgeBase } from "../kb/types.js";
import { log } from "../log.js";
import { userModulePath } from "../user-module.js";
import { defaultBaselineFile } from "./baseline.js";
import { checkLocaleOptions, selectRunCases } from "./data.js";
import { checkRepeatOptions, EVAL_DEFAULTS, runDatasetHash } from "./eval-plan.js";
import { openJudge } from "./judge.js";
import type { UseCaseHooks } from "./progress.js";
import { wantsBaseline, type GateOptions, type MaxDrop } from "./report.js";
import { sweepRepeats } from "../eval/sweep/repeat-loop.js";
import { recordedTracesSource, type RecordedTracesOptions } from "./traces-eval.js";
import { checkSourceSettings } from "./source-settings.js";
import type { ModuleSource, ParsedConfigurable, SweptTurns } from "./sweep-source.js";
import { evaluate, type EvalOutcome } from "./evaluate.js";
import { isolatedGraphSweep, isolationLimits, type GraphWorkerInit } from "./graph-isolation.js";
export type { ParsedConfigurable } from "./sweep-source.js";
import { MAX_JSON_DEPTH, parseJsonOrThrow, TOO_DEEP, tooDeepAt, valueTooDeep } from "../kb/json.js";

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

/**
 * The project a file belongs to (docs/evaluate-your-graph.md, "One identity
 * wherever you run from"): the nearest folder at or above the file's own that
 * holds a package.json — so each package of a monorepo is its own project —
 * else the working directory.
 */
export function projectRootOf(file: string, cwd: string = process.cwd()): string {
  const abs = path.resolve(cwd, file);
  for (let dir = path.dirname(abs); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) return cwd;
  }
}

/**
 * `file` relative to its project root (projectRootOf), `/` separators: one
 * name for `./agent.ts` from the project root, `agent.ts` from its own
 * folder and its absolute path from anywhere.
 */
export function projectPath(file: string, cwd: string = process.cwd()): string {
  const abs = path.resolve(cwd, file);
  return path.relative(projectRootOf(abs, cwd), abs).split(path.sep).join("/");
}

/**
 * Reads a `--graph` baseline's module as this run names it. A baseline
 * written before graphs were named relative to their project root named the
 * module relative to the folder it was written from (`sub/agent.mts` from
 * the project root); it is the same module when that path, resolved from
 * here, is this module, or when it is a trailing part of this module's path
 * (no `..`). Then the baseline's names are migrated in memory and a note
 * says so; otherwise the baseline is left as it is (and refused by the
 * comparison that follows).
 */
export function migrateGraphBaseline(
  baseline: Baseline,
  moduleFile: string,
  exportName: string,
  file: string,
  cwd: string = process.cwd(),
): string | undefined {
  const embedder = baseline.config.embedder;
  if (embedder === null || !embedder.startsWith(GRAPH_PREFIX)) return undefined;
  const body = embedder.slice(GRAPH_PREFIX.length);
  const hash = body.lastIndexOf("#");
  const written = hash < 0 ? body : body.slice(0, hash);
  const writtenExport = hash < 0 ? DEFAULT_GRAPH_EXPORT : body.slice(hash + 1);
  const now = projectPath(moduleFile, cwd);
  if (writtenExport !== exportName || written === now) return undefined;
  const abs = path.resolve(cwd, moduleFile);
  const parts = written.split(/[\\/]+/).filter((p) => p !== "" && p !== ".");
  const trailing =
    !path.isAbsolute(written) &&
    !parts.includes("..") &&
    abs.split(path.sep).slice(-parts.length).join("/") === parts.join("/");
  if (path.resolve(cwd, written) !== abs && !trailing) return undefined;
  baseline.config.embedder = `${GRAPH_PREFIX}${now}#${exportName}`;
  if (baseline.graph !== undefined) baseline.graph.module = now;
  return `${file} names the graph module ${written} (relative to the folder it was written from); read as ${now}, relative to its project ${path.relative(cwd, projectRootOf(abs, cwd)) || "."} — \`--update-baseline\` rewrites it so`;
}

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/** sha256 of a module file named by `file[#export]`, checked as loading it checks it (userModulePath: exit 2 naming the option). */
async function moduleFileHash(spec: string, option: string, defaultExport: string): Promise<string> {
  const { file, exportName } = parseModuleSpec(spec, defaultExport);
  return sha256(await readFile(userModulePath(file, option, exportName)));
}

/** What identifies a graph: its module relative to the project root, the export, and a sha256 of the module file (its own bytes, not its imports). */
export interface GraphModuleIdentity {
  file: string;
  exportName: string;
  moduleHash: string;
}

/** The identity of the graph `spec` names (`file[#export]`), read without loading it. */
export async function graphModuleIdentity(spec: string): Promise<GraphModuleIdentity> {
  const { file, exportName } = parseModuleSpec(spec, DEFAULT_GRAPH_EXPORT);
  return {
    file: projectPath(file),
    exportName,
    moduleHash: await moduleFileHash(spec, "--graph", DEFAULT_GRAPH_EXPORT),
  };
}

/** JSON with object keys sorted at every level: the text a configurable is hashed by. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (typeof v === "object" && v !== null)
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(v) ?? "null";
}

const CONFIGURABLE_EXPECTED = 'a JSON object (e.g. {"user_id": "u1"}) or the path of a .json file holding one';

/**
 * Reads `run.configurable`: an object (library users), a JSON object literal
 * (text starting with `{`), or the path of a .json file holding one. Anything
 * else — not valid JSON, an array, a string, a number, a missing file — is an
 * InvalidArgumentError (exit 2) naming `run.configurable`; a file's bad JSON is a
 * DataValidationError naming the file. A `thread_id` in it is replaced by
 * retrace's (one thread per case), with a warning.
 */
export async function parseConfigurable(given: string | Record<string, unknown>): Promise<ParsedConfigurable> {
  let value: unknown = given;
  if (typeof given === "string") {
    const text = given.trim();
    if (text.startsWith("{")) {
      try {
        value = JSON.parse(text);
      } catch (e) {
        throw new InvalidArgumentError("run.configurable", `${CONFIGURABLE_EXPECTED} (${(e as Error).message})`, given);
      }
      const deep = tooDeepAt(text);
      if (deep >= 0)
        throw new InvalidArgumentError(
          "run.configurable",
          `${CONFIGURABLE_EXPECTED} (${TOO_DEEP}, at column ${deep + 1})`,
          `${text.slice(0, 20)}…`,
        );
    } else {
      if (!existsSync(given)) throw new InvalidArgumentError("run.configurable", CONFIGURABLE_EXPECTED, given);
      value = parseJsonOrThrow(await readTextFileOrThrow(given), {
        file: given,
        expected: "a JSON object for run.configurable",
      }); // file:line:column (src/kb/json.ts)
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new InvalidArgumentError(
      "run.configurable",
      CONFIGURABLE_EXPECTED,
      Array.isArray(value) ? "an array" : value === null ? "null" : typeof value,
    );
  const obj = value as Record<string, unknown>;
  // Hashed and sent to the graph by code that recurses: deeper than any JSON retrace reads is exit 2 (src/kb/json.ts).
  if (valueTooDeep(obj))
    throw new InvalidArgumentError(
      "run.configurable",
      `${CONFIGURABLE_EXPECTED}, with at most ${MAX_JSON_DEPTH} levels of nesting`,
      `an object nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
  if ("thread_id" in obj)
    log.warn(
      "run.configurable: its thread_id is replaced by retrace's own (one thread per case, so each case's turns share their history)",
    );
  return { value: obj, record: { hash: sha256(canonicalJson(obj)), keys: Object.keys(obj).sort() } };
}

/** KB (or catalog) and cases for a graph run; exit 2 when neither exists. */
export async function loadGraphData(
  o: Pick<GraphEvalOptions, "kb" | "cases" | "catalog" | "maxCardBytes">,
): Promise<{ kb: KnowledgeBase; cases: EvalCase[]; kbLabel: string; casesFile: string }> {
  if (o.catalog !== undefined) {
    if (o.cases === undefined)
      throw new InvalidArgumentError("--cases", "the cases file (required with --catalog)", undefined);
    const kb = await loadCatalog(o.catalog);
    return { kb, cases: await loadCases(o.cases, kb), kbLabel: o.catalog, casesFile: o.cases };
  }
  const kbDir = o.kb ?? "kb";
  if (!existsSync(path.join(kbDir, "cards")))
    throw new InvalidArgumentError(
      "--kb or --catalog",
      "a KB folder with cards/<locale>/ or a catalog file (the integrity check is always on)",
      kbDir,
    );
  const casesFile = o.cases ?? path.join(kbDir, "eval", "cases.jsonl");
  const kb = await loadKnowledgeBase(kbDir, o.maxCardBytes !== undefined ? { maxCardBytes: o.maxCardBytes } : {});
  return { kb, cases: await loadCases(casesFile, kb), kbLabel: kbDir, casesFile };
}

/** The id options from `idKey` / `idMap`. */
export async function idOptionsFor(o: Pick<ExternalGraphOptions, "idKey" | "idMap">): Promise<IdOptions> {
  if (o.idKey !== undefined && o.idMap !== undefined)
    throw new InvalidArgumentError("--id-key / --id-map", "one of them, not both", `${o.idKey} / ${o.idMap}`);
  if (o.idMap !== undefined)
    return {
      idMap: await loadFunction<(d: DocumentInterface) => string | null | undefined>(
        o.idMap,
        "--id-map",
        () => "a retrieved document",
      ),
    };
  return o.idKey !== undefined ? { idKey: o.idKey } : {};
}

/** What a graph sweep gives: each repeat's turns (the first repeat's as `turns`), the module, the id options and the phases' times. */
export interface GraphSweepOutcome {
  turns: GraphTurn[];
  runs: GraphTurn[][];
  file: string;
  exportName: string;
  ids: IdOptions;
  phases: SweepPhases;
}

/**
 * Loads everything a graph run needs and runs the sweep over `cases` (`extra`:
 * a configurable already read, evaluators other than retrieval's). The
 * user's modules (`--graph`, `--input`, `--id-map`) are loaded, built and run
 * in a thread of their own, under a memory limit, a load-and-build timeout
 * and the per-turn deadline, their output captured (src/app/graph-isolation.ts;
 * docs/reliability.md, "Your graph runs in a thread of its own"); the judge
 * (any evaluator other than retrace's retrieval ones) runs here.
 */
export async function sweepGraph(
  o: Pick<
    GraphEvalOptions,
    | "graph"
    | "input"
    | "idKey"
    | "idMap"
    | "retrievalCall"
    | "k"
    | "configurable"
    | "turnTimeout"
    | "counterfactual"
    | "loadTimeout"
    | "graphMemoryMb"
    | "replay"
  >,
  cases: readonly EvalCase[],
  kb: KnowledgeBase,
  concurrency: number,
  onCaseDone?: (d: number, t: number) => void,
  extra: { configurable?: ParsedConfigurable; evaluators?: readonly EvaluatorSpec[]; repeat?: number } = {},
): Promise<GraphSweepOutcome> {
  if (o.graph === undefined) throw new InvalidArgumentError("--graph", "a graph module", undefined);
  const k = o.k ?? EVAL_DEFAULTS.k;
  const configurable =
    extra.configurable ?? (o.configurable !== undefined ? await parseConfigurable(o.configurable) : undefined);
  if (o.idKey !== undefined && o.idMap !== undefined)
    throw new InvalidArgumentError("--id-key / --id-map", "one of them, not both", `${o.idKey} / ${o.idMap}`);
  const limits = isolationLimits(o);
  const { runs, file, exportName, phases } = await isolatedGraphSweep(
    {
      options: {
        graph: o.graph,
        ...(o.input !== undefined ? { input: o.input } : {}),
        ...(o.idKey !== undefined ? { idKey: o.idKey } : {}),
        ...(o.idMap !== undefined ? { idMap: o.idMap } : {}),
        ...(o.retrievalCall !== undefined ? { retrievalCall: o.retrievalCall } : {}),
        k,
        turnTimeoutMs: limits.turnTimeoutMs,
        counterfactual: o.counterfactual === true,
        ...(o.replay !== undefined ? { replay: o.replay } : {}),
      },
      cases,
      knownIds: [...kb.byId.keys()],
      concurrency,
      ...(configurable !== undefined ? { configurable: configurable.value } : {}),
      repeat: extra.repeat ?? 1,
      evaluators: [],
    },
    {
      label: (({ file, exportName }) => `--graph ${file}#${exportName}`)(
        parseModuleSpec(o.graph, DEFAULT_GRAPH_EXPORT),
      ),
      evaluators: extra.evaluators ?? retrievalSideEvaluators({ k }),
      knownIds: new Set(kb.byId.keys()),
      limits,
      ...(onCaseDone !== undefined ? { onCaseDone } : {}),
    },
  );
  // The id options as the report describes them: the map itself lives in the graph's thread.
  const ids: IdOptions =
    o.idMap !== undefined ? { idMap: () => null } : o.idKey !== undefined ? { idKey: o.idKey } : {};
  return { turns: runs[0]!, runs, file: projectPath(file), exportName, ids, phases };
}

/**
 * The sweep itself, in the thread that runs it (the graph's thread:
 * src/app/graph-worker.ts): loads the modules `init` names, builds the
 * graph (`hooks.loaded` once done) and runs every repeat of the cases.
 */
export async function sweepGraphHere(
  init: GraphWorkerInit,
  evaluators: readonly EvaluatorSpec[],
  hooks: {
    loaded?: () => void;
    onTurn?: (where: string, phase: "start" | "end") => void;
    onCaseDone?: (d: number, t: number) => void;
  } = {},
): Promise<{ runs: GraphTurn[][]; file: string; exportName: string; phases: SweepPhases }> {
  const o = init.options;
  const ids = await idOptionsFor(o);
  const input =
    o.input !== undefined
      ? await loadFunction<InputMapper>(o.input, "--input", (turn, c) => `case ${c.id} turn ${turn.index}`)
      : undefined;
  const loaded = await loadGraph(o.graph);
  if (loaded.addedCheckpointer)
    log.info(
      `graph ${loaded.file}#${loaded.exportName} has no checkpointer: an in-memory one was added (one thread per case)`,
    );
  // Counterfactual retrieval records which retriever ran each call: the BaseRetriever classes of the @langchain/core copies the graph uses.
  const retrieverBases = o.counterfactual
    ? await baseRetrieversFor(loaded.file, { exports: loaded.exports, graph: loaded.graph })
    : [];
  hooks.loaded?.();
  const phases: SweepPhases = { graph: 0, evaluate: 0 };
  const knownIds = new Set(init.knownIds);
  const runs = await sweepRepeats(
    init.repeat,
    (_r, threadPrefix, progress) =>
      runGraphSweep({
        graph: loaded.graph,
        cases: init.cases,
        evaluators,
        knownIds,
        k: o.k,
        ...ids,
        ...(input !== undefined ? { input } : {}),
        retrievalCall: o.retrievalCall ?? "last",
        concurrency: init.concurrency,
        turnTimeoutMs: o.turnTimeoutMs,
        threadPrefix,
        ...(o.replay !== undefined ? { replay: o.replay } : {}),
        ...(init.configurable !== undefined ? { configurable: init.configurable } : {}),
        ...(o.counterfactual ? { counterfactual: true, retrieverBases } : {}),
        phases,
        ...(progress !== undefined ? { onCaseDone: progress } : {}),
        ...(hooks.onTurn !== undefined ? { onTurn: hooks.onTurn } : {}),
      }),
    hooks.onCaseDone,
  );
  return { runs, file: loaded.file, exportName: loaded.exportName, phases };
}

/** Why a `--graph` run's report has no query attribution, when it has none: the one reason text (docs/query-attribution.md). */
export const GRAPH_COUNTERFACTUAL_OFF =
  "not asked for: a --graph run attributes queries only with --counterfactual, which invokes your retriever again with each gold-bearing turn's raw message and standalone question (extra retriever calls; the retriever must be side-effect free)";

/** Why a `--traces` run's report has no query attribution: nothing is re-run (docs/recorded-traces.md). */
export const TRACES_COUNTERFACTUAL_OFF =
  "not possible on recorded traces: attribution retrieves again with the raw message and the standalone question, and a recording is scored as it is, never re-run";

/** Whether a graph run does counterfactual retrieval, and why not (the report's `queryAttribution` header). */
export function graphCounterfactualOf(o: Pick<ExternalGraphOptions, "counterfactual">): {
  enabled: boolean;
  reason?: string;
} {
  return o.counterfactual === true ? { enabled: true } : { enabled: false, reason: GRAPH_COUNTERFACTUAL_OFF };
}

/** The baseline file a graph eval reads (with `--max-drop` / `--max-flips` / `--baseline`) or writes (`--update-baseline`): `baseline`, else `<kb>/eval/baseline.json` — as for retrace's own graph. */
export function graphBaselineFile(o: Pick<GraphEvalOptions, "baseline" | "kb">): string {
  return o.baseline ?? defaultBaselineFile(o.kb ?? "kb");
}

/** `retrace eval --graph SPEC [--kb KB] [--baseline FILE] …` for messages. */
function graphCommandLine(o: GraphEvalOptions, extra: string): string {
  const parts = ["retrace", "eval", "--graph", o.graph ?? "FILE"];
  if (o.catalog !== undefined) parts.push("--catalog", o.catalog);
  if (o.kb !== undefined && o.kb !== "kb") parts.push("--kb", o.kb);
  if (o.cases !== undefined) parts.push("--cases", o.cases);
  if (o.baseline !== undefined) parts.push("--baseline", o.baseline);
  return [...parts, extra].join(" ");
}

/**
 * Option combinations a graph eval refuses before anything loads (the same
 * rules as retrace's graph: src/app/eval-plan.ts): a `--locale` that is not a
 * canonical tag, a baseline written from a filtered run or with a tolerance
 * to compare with, a drop or flip tolerance (or `--baseline`) with no baseline
 * file, `--judge` with a catalog (no card text to grade against).
 */
export function checkGraphEvalOptions(o: GraphEvalOptions): void {
  checkLocaleOptions(o.locale);
  if (o.updateBaseline && ((o.locale?.length ?? 0) > 0 || (o.case?.length ?? 0) > 0))
    throw new InvalidArgumentError(
      "--update-baseline",
      "used without --locale/--case (a baseline covers the whole dataset)",
      "a filtered run",
    );
  if (o.updateBaseline && (o.maxDrop !== undefined || o.maxFlips !== undefined))
    throw new InvalidArgumentError(
      "--update-baseline",
      "used without --gate max-drop/max-flips (it writes the baseline; it compares with nothing)",
      "both",
    );
  if (o.shard !== undefined && (o.updateBaseline || wantsBaseline(o)))
    throw new InvalidArgumentError(
      "--shard",
      "used without --baseline, a max-drop or max-flips gate, or --update-baseline (a shard's report is partial; `retrace merge` gates)",
      `--shard ${o.shard.index}/${o.shard.count}`,
    );
  if (wantsBaseline(o)) {
    const file = graphBaselineFile(o);
    if (!existsSync(file))
      throw new InvalidArgumentError(
        "--baseline",
        `an existing baseline file (create one with \`${graphCommandLine(o, "--update-baseline")}\`)`,
        file,
      );
  }
  checkRepeatOptions(o.repeat, o.maxFlaky);
  const repeat = o.repeat ?? 1;
  if (o.counterfactual === true && repeat > 1)
    throw new InvalidArgumentError(
      "--counterfactual",
      "used without --repeat (a turn's query attribution compares three lists of one run, while with --repeat its scores are means over the repeats — a flaky turn hits in some and misses in others — so one attribution cannot stand for them; attribute a single run)",
      `--counterfactual --repeat ${repeat}`,
    );
  if (o.judge !== undefined && o.catalog !== undefined)
    throw new InvalidArgumentError(
      "run.judge",
      "used with --kb, not --catalog (the judge grades the answer against the text of the retrieved cards; a catalog lists ids only)",
      o.judge,
    );
}

/**
 * Throws BaselineMismatchError (exit 2) when `baseline` cannot be compared with
 * the run about to start: other cases (a `--locale`/`--case` subset named as
 * such), another k, another graph (module relative to its project root —
 * migrateGraphBaseline has read an older baseline's name — and export), or another scoring (retrieval-call mode, id keys, id map). Checked
 * before the graph module is loaded; the notes (graph module or configurable
 * changed) are printed after the run, with the gate.
 */
function checkGraphBaselineBeforeRun(
  baseline: Baseline,
  file: string,
  o: GraphEvalOptions,
  run: Report["run"],
  selection: { datasetHash: string; full: string; selected: number; total: number },
): void {
  const recreate = `to replace it with this graph's results instead, run \`${graphCommandLine(o, "--update-baseline")}\``;
  if (baseline.datasetHash !== selection.datasetHash) {
    if (selection.selected < selection.total && baseline.datasetHash === selection.full)
      throw new BaselineMismatchError(
        "datasetHash",
        baseline.datasetHash,
        selection.datasetHash,
        `${file} covers all ${selection.total} cases but --locale/--case selects ${selection.selected}; compare the full run (a baseline always covers the whole dataset)`,
      );
    throw new BaselineMismatchError(
      "datasetHash",
      baseline.datasetHash,
      selection.datasetHash,
      `${file} was written for other eval cases (the cases changed since); ${recreate}`,
    );
  }
  if (baseline.config.embedder === null || !baseline.config.embedder.startsWith(GRAPH_PREFIX))
    throw new BaselineMismatchError(
      "config.embedder",
      baseline.config.embedder,
      run.embedder,
      `${file} was written by retrace's own graph, not a --graph run; give your graph's baseline with --baseline FILE, or ${recreate}`,
    );
  if (normalizeGraphId(baseline.config.embedder) !== run.embedder)
    throw new BaselineMismatchError(
      "config.embedder",
      normalizeGraphId(baseline.config.embedder),
      run.embedder,
      `${file} was written for another graph module or export; ${recreate}`,
    );
  assertComparable(baseline, { run } as Report); // k, the scoring (retrieval-call mode, id keys, id map): throws on a difference
}

/**
 * The graph sweep and its report, gate applied: floors, the baseline's
 * drops and flips, turn errors and turns without retrieval. A shard's report
 * is partial and not gated. Writes nothing (`updateBaseline`: write it with
 * `writeBaseline(graphBaselineFile(options), report)`).
 */
export async function runGraphEval(given: GraphEvalOptions, hooks: UseCaseHooks = {}): Promise<EvalOutcome> {
  const o = await resolveSettings("eval", given, "runGraphEval options"); // as the CLI reads them (src/app/settings/read.ts)
  checkSourceSettings(o); // a setting your graph or the recording does not use (src/app/source-settings.ts)
  checkGraphEvalOptions(o);
  if (o.graph === undefined && o.traces === undefined)
    throw new InvalidArgumentError("--graph", "a graph module (or --traces, recorded traces)", undefined);
  const k = o.k ?? EVAL_DEFAULTS.k;
  const seed = o.seed ?? EVAL_DEFAULTS.seed;
  const retrievalCall = o.retrievalCall ?? "last";
  const data = await loadGraphData(o);
  const selected = selectRunCases(data.cases, o); // unknown case ids, a locale no case has: exit 2 before the graph loads
  const cases = o.shard === undefined ? selected : shardCases(selected, o.shard); // whole cases, balanced by turns (src/eval/gate/shard.ts)
  const replay = o.traces === undefined ? o.replay : undefined;
  const hashOf = (cs: readonly EvalCase[]) =>
    runDatasetHash(cs.length === data.cases.length ? data.cases : [...cs], replay);
  // The sweep's source: the graph run (its module identity read before it loads) or recorded traces (src/app/traces-eval.ts).
  const source =
    o.traces !== undefined ? await recordedTracesSource(o, () => idOptionsFor(o), "summary") : await graphSource(o);
  const module = source.module!;
  const configurable = source.configurable;
  const idMapHash = o.idMap !== undefined ? await moduleFileHash(o.idMap, "--id-map", "default") : undefined;
  const identity: GraphRunIdentity = {
    file: module.file,
    exportName: module.exportName,
    ...(module.moduleHash !== undefined ? { moduleHash: module.moduleHash } : {}),
    idKey: describeIdKeys(
      o.idMap !== undefined ? { idMap: () => null } : o.idKey !== undefined ? { idKey: o.idKey } : {},
    ),
    retrievalCall,
    ...(o.catalog !== undefined ? { catalog: projectPath(o.catalog) } : {}),
    ...(idMapHash !== undefined ? { idMapHash } : {}),
    ...(configurable !== undefined ? { configurable: configurable.record } : {}),
    ...(o.traces === undefined ? { turnTimeoutSeconds: o.turnTimeout ?? DEFAULT_TURN_TIMEOUT_S } : {}),
  };
  const embedder = `${GRAPH_PREFIX}${module.file}#${module.exportName}`;
  let baseline: Baseline | null = null;
  if (wantsBaseline(o)) {
    const file = graphBaselineFile(o);
    baseline = await readBaseline(file);
    if (o.graph !== undefined) {
      const migrated = migrateGraphBaseline(
        baseline,
        parseModuleSpec(o.graph, DEFAULT_GRAPH_EXPORT).file,
        module.exportName,
        file,
      );
      if (migrated !== undefined) log.info(migrated);
    }
    const stub = {
      datasetHash: hashOf(cases),
      kbHash: kbHash(data.kb),
      embedder,
      k,
      store: "graph",
      graph: graphRunInfo(
        identity,
        [],
        [],
        graphRunFacts([], () => undefined),
      ),
    };
    checkGraphBaselineBeforeRun(baseline, file, o, stub, {
      datasetHash: hashOf(cases),
      full: runDatasetHash(data.cases, replay),
      selected: cases.length,
      total: data.cases.length,
    });
    checkBaselineTurns(baseline, file, data.cases);
  }
  const judge = o.judge === undefined ? undefined : await openJudge(o.judge, data, o.judgeCache, isolationLimits(o));
  const evaluators: EvaluatorSpec[] = [
    ...retrievalSideEvaluators({ k }),
    ...(judge !== undefined ? [groundednessEvaluator({ judge: judge.judge })] : []),
  ];
  const quarantine =
    o.quarantine !== undefined ? await readQuarantine(o.quarantine, caseIndexOf(data.cases)) : undefined; // before the sweep: exit 2 naming file and line
  // The report's header: what was scored, and a refusal (exit 2) when most scored ids name no card (src/eval/sweep/graph-checks.ts).
  const header = (turns: TurnReport[], swept: SweptTurns): Report["run"] => {
    const facts = graphRunFacts(
      turns,
      (id) => data.kb.byId.get(id)?.locale,
      stateLimitBytes(o.maxStateMb ?? DEFAULT_MAX_STATE_MB),
    );
    const metadataKeys =
      swept.captured?.metadataKeys ??
      [...new Set(swept.runs.flat().flatMap((t) => t.retrieval?.metadataKeys ?? []))].sort();
    checkKnownIds(facts, {
      graph: source.label,
      idKeys: describeIdKeys(swept.ids),
      ids: o.catalog !== undefined ? `the catalog ${o.catalog}` : `the KB ${data.kbLabel}`,
      metadataKeys,
    });
    return {
      datasetHash: hashOf(cases),
      kbHash: kbHash(data.kb),
      embedder,
      embedderDescription: source.description,
      k,
      store: "graph",
      storeKind: "graph",
      graph: {
        ...graphRunInfo(identity, turns, swept.captured?.retrievers ?? capturedRetrievers(swept.runs.flat()), facts),
        ...(swept.traces !== undefined ? { traces: swept.traces } : {}),
      },
      ...(replay === "recorded" ? { replay: "recorded" as const } : {}),
    };
  };
  return evaluate(
    {
      source: { ...source, header, ...(o.traces !== undefined ? { recorded: true } : {}) },
      kb: data.kb,
      selected,
      cases,
      hashOf,
      evaluators,
      cardsPerLocale: cardsPerLocale(data.kb.cards),
      counterfactual:
        o.traces !== undefined ? { enabled: false, reason: TRACES_COUNTERFACTUAL_OFF } : graphCounterfactualOf(o),
      options: { ...o, seed },
      baseline,
      ...(quarantine !== undefined ? { quarantine } : {}),
      ...(judge !== undefined ? { judge } : {}),
    },
    hooks,
  );
}

/** The graph-run source (`--graph`): its module identity, read before the module loads. */
async function graphSource(o: GraphEvalOptions): Promise<ModuleSource> {
  const module = await graphModuleIdentity(o.graph!);
  const configurable = o.configurable !== undefined ? await parseConfigurable(o.configurable) : undefined;
  return {
    module,
    ...(configurable !== undefined ? { configurable } : {}),
    label: `--graph ${module.file}#${module.exportName}`,
    description: "the graph's own retriever(s), captured from its retriever runs",
    sweep: (cases, kb, evaluators, onCaseDone) =>
      sweepGraph(o, cases, kb, o.concurrency ?? EVAL_DEFAULTS.concurrency, onCaseDone, {
        ...(configurable !== undefined ? { configurable } : {}),
        evaluators,
        repeat: o.repeat ?? 1,
      }),
  };
}
