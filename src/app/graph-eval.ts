/**
 * Use-case: an eval of a user's own LangGraph.js graph (`retrace eval --graph
 * FILE[#export]`, `runGraphEval` for library users; docs/evaluate-your-graph.md),
 * and the graph sweep `retrace trace --graph` shares. Retrieval is captured
 * from the graph's retriever runs with a callback handler; nothing in the
 * user's code changes. The KB (`kb`) or a catalog (`catalog`, `id<TAB>locale`
 * a line) gives the ids the integrity check resolves gold against; with
 * neither, the run is refused.
 *
 * The gate fails on floors, baseline drops and flips, turn errors beyond
 * `maxErrors`, and gold-bearing turns with no retrieval beyond
 * `maxNoRetrieval`; a run most of whose retrieved ids name no card is
 * refused (src/eval/sweep/graph-checks.ts).
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import type { DocumentInterface } from "@langchain/core/documents";
import { InvalidArgumentError } from "../errors.js";
import { assertComparable, readBaseline, type Baseline } from "../eval/gate/baseline.js";
import { DEFAULT_MAX_DROP, FLOOR_OPTIONS, gate, type GateThresholds } from "../eval/gate/gate.js";
import { checkKnownIds, graphRunFacts, stateLimitBytes } from "../eval/sweep/graph-checks.js";
import { DEFAULT_MAX_STATE_MB, DEFAULT_TURN_TIMEOUT_S } from "../eval/sweep/turn-guard.js";
import { cardsPerLocale } from "../eval/measures/chance.js";
import { retrievalEvaluator } from "../eval/measures/evaluators.js";
import { buildReport } from "../eval/report/aggregate.js";
import { describeIdKeys, type IdOptions, type RetrievalCall } from "../eval/sweep/capture.js";
import { capturedRetrievers, graphGateFailures, loadFunction, loadGraph, runGraphSweep, type GraphTurn, type InputMapper } from "../eval/sweep/external-graph.js";
import { loadCatalog } from "../kb/catalog.js";
import { loadKnowledgeBase } from "../kb/cards.js";
import { loadCases } from "../kb/cases.js";
import { datasetHash, kbHash } from "../kb/hash.js";
import type { EvalCase, KnowledgeBase } from "../kb/types.js";
import { log } from "../log.js";
import { redactSecrets } from "../redact.js";
import { selectCases } from "./data.js";
import type { EvalOutcome } from "./eval.js";
import { EVAL_DEFAULTS } from "./eval-plan.js";
import { NO_PROGRESS, type UseCaseHooks } from "./progress.js";
import type { GateOptions } from "./report.js";

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
  /** Per-turn deadline, seconds (default DEFAULT_TURN_TIMEOUT_S = 120): a turn still running then is an error turn (docs/reliability.md). */
  turnTimeout?: number;
  /** State size above which a turn is listed in the report, MB (default DEFAULT_MAX_STATE_MB = 16; never fails the turn). */
  maxStateMb?: number;
}

/** The options of a graph eval (the store, embedder and mode belong to retrace's own graph). */
export interface GraphEvalOptions extends ExternalGraphOptions, GateOptions {
  kb?: string;
  cases?: string;
  /** Cards scored per turn (default 5). */
  k?: number;
  locale?: string[];
  case?: string[];
  baseline?: string;
  /** Unset: DEFAULT_MAX_DROP (0.02) — a user's graph may not be deterministic, so never the 0 of retrace's own pipeline. */
  maxDrop?: number;
  updateBaseline?: boolean;
  /** Turns whose graph run throws that the gate tolerates (default 0). */
  maxErrors?: number;
  /** Gold-bearing turns with no retriever run (scored as misses) the gate tolerates (default: not gated). */
  maxNoRetrieval?: number;
  concurrency?: number;
  seed?: number;
}

/** KB (or catalog) and cases for a graph run; exit 2 when neither exists. */
export async function loadGraphData(o: Pick<GraphEvalOptions, "kb" | "cases" | "catalog" | "maxCardBytes">): Promise<{ kb: KnowledgeBase; cases: EvalCase[]; kbLabel: string; casesFile: string }> {
  if (o.catalog !== undefined) {
    if (o.cases === undefined) throw new InvalidArgumentError("--cases", "the cases file (required with --catalog)", undefined);
    const kb = await loadCatalog(o.catalog);
    return { kb, cases: await loadCases(o.cases, kb), kbLabel: o.catalog, casesFile: o.cases };
  }
  const kbDir = o.kb ?? "kb";
  if (!existsSync(path.join(kbDir, "cards")))
    throw new InvalidArgumentError("--kb or --catalog", "a KB folder with cards/<locale>/ or a catalog file (the integrity check is always on)", kbDir);
  const casesFile = o.cases ?? path.join(kbDir, "eval", "cases.jsonl");
  const kb = await loadKnowledgeBase(kbDir, o.maxCardBytes !== undefined ? { maxCardBytes: o.maxCardBytes } : {});
  return { kb, cases: await loadCases(casesFile, kb), kbLabel: kbDir, casesFile };
}

/** The id options from `idKey` / `idMap`. */
export async function idOptionsFor(o: Pick<ExternalGraphOptions, "idKey" | "idMap">): Promise<IdOptions> {
  if (o.idKey !== undefined && o.idMap !== undefined) throw new InvalidArgumentError("--id-key / --id-map", "one of them, not both", `${o.idKey} / ${o.idMap}`);
  if (o.idMap !== undefined) return { idMap: await loadFunction<(d: DocumentInterface) => string | null | undefined>(o.idMap, "--id-map") };
  return o.idKey !== undefined ? { idKey: o.idKey } : {};
}

/** Loads everything a graph run needs and runs the sweep over `cases`. */
export async function sweepGraph(
  o: Pick<GraphEvalOptions, "graph" | "input" | "idKey" | "idMap" | "retrievalCall" | "k" | "turnTimeout">,
  cases: readonly EvalCase[],
  kb: KnowledgeBase,
  concurrency: number,
  onCaseDone?: (d: number, t: number) => void,
): Promise<{ turns: GraphTurn[]; file: string; exportName: string; ids: IdOptions }> {
  if (o.graph === undefined) throw new InvalidArgumentError("--graph", "a graph module", undefined);
  const k = o.k ?? EVAL_DEFAULTS.k;
  const ids = await idOptionsFor(o);
  const input = o.input !== undefined ? await loadFunction<InputMapper>(o.input, "--input") : undefined;
  const loaded = await loadGraph(o.graph);
  if (loaded.addedCheckpointer) log.info(`graph ${loaded.file}#${loaded.exportName} has no checkpointer: an in-memory one was added (one thread per case)`);
  const turns = await runGraphSweep({
    graph: loaded.graph,
    cases,
    evaluators: [retrievalEvaluator({ k })],
    knownIds: new Set(kb.byId.keys()),
    k,
    ...ids,
    ...(input !== undefined ? { input } : {}),
    retrievalCall: o.retrievalCall ?? "last",
    concurrency,
    turnTimeoutMs: (o.turnTimeout ?? DEFAULT_TURN_TIMEOUT_S) * 1000,
    threadPrefix: `${randomBytes(3).toString("hex")}:`,
    ...(onCaseDone !== undefined ? { onCaseDone } : {}),
  });
  return { turns, file: loaded.file, exportName: loaded.exportName, ids };
}

/** Option combinations a graph eval refuses before anything loads: a missing baseline file, a baseline written from a filtered run. */
export function checkGraphEvalOptions(o: Pick<GraphEvalOptions, "baseline" | "updateBaseline" | "locale" | "case">): void {
  if (o.baseline !== undefined && !o.updateBaseline && !existsSync(o.baseline))
    throw new InvalidArgumentError("--baseline", "an existing baseline file (create one with --update-baseline)", o.baseline);
  if (o.updateBaseline && ((o.locale?.length ?? 0) > 0 || (o.case?.length ?? 0) > 0))
    throw new InvalidArgumentError("--update-baseline", "used without --locale/--case (a baseline covers the whole dataset)", "a filtered run");
}

/**
 * The graph sweep and its report, gate applied: floors, the baseline's
 * drops and flips, turn errors and turns without retrieval. Writes nothing
 * (`updateBaseline`: write it with `writeBaseline`).
 */
export async function runGraphEval(o: GraphEvalOptions, hooks: UseCaseHooks = {}): Promise<EvalOutcome> {
  checkGraphEvalOptions(o);
  const k = o.k ?? EVAL_DEFAULTS.k;
  const seed = o.seed ?? EVAL_DEFAULTS.seed;
  const retrievalCall = o.retrievalCall ?? "last";
  const data = await loadGraphData(o);
  const cases = selectCases(data.cases, o);
  const started = new Date();
  const t0 = performance.now();
  const progress = (hooks.progress ?? NO_PROGRESS)("eval", "cases");
  let swept;
  try {
    swept = await sweepGraph(o, cases, data.kb, o.concurrency ?? EVAL_DEFAULTS.concurrency, (d, t) => progress.update(d, t));
  } finally {
    progress.stop();
  }
  // Error text of the user's graph can echo credentials (a server's 5xx body with the request headers):
  // redacted before it reaches any output, the report files included (docs/reliability.md).
  for (const { report: t } of swept.turns) {
    if (t.error !== undefined) t.error = redactSecrets(t.error);
    for (const st of t.captured?.stages ?? []) if (st.error !== null) st.error = redactSecrets(st.error);
  }
  const turns = swept.turns.map((t) => t.report);
  const evaluators = [retrievalEvaluator({ k })];
  const graphId = `${swept.file}#${swept.exportName}`;
  // What was scored, and a refusal (exit 2) when most scored ids name no card (src/eval/sweep/graph-checks.ts).
  const facts = graphRunFacts(turns, (id) => data.kb.byId.get(id)?.locale, stateLimitBytes(o.maxStateMb ?? DEFAULT_MAX_STATE_MB));
  checkKnownIds(facts, { graph: `--graph ${graphId}`, idKeys: describeIdKeys(swept.ids), ids: o.catalog !== undefined ? `the catalog ${o.catalog}` : `the KB ${data.kbLabel}` });
  const report = buildReport({
    run: {
      datasetHash: cases.length === data.cases.length ? datasetHash(data.cases) : datasetHash(cases),
      kbHash: kbHash(data.kb),
      embedder: `graph:${graphId}`,
      embedderDescription: "the graph's own retriever(s), captured from its retriever runs",
      k,
      store: "graph",
      graph: {
        file: swept.file,
        exportName: swept.exportName,
        retrievers: capturedRetrievers(swept.turns),
        idKey: describeIdKeys(swept.ids),
        retrievalCall,
        errors: turns.filter((t) => t.error !== undefined).length,
        noRetrieval: turns.filter((t) => t.noRetrieval === true).length,
        ...(o.catalog !== undefined ? { catalog: o.catalog } : {}),
        turnTimeoutSeconds: o.turnTimeout ?? DEFAULT_TURN_TIMEOUT_S,
        ...facts,
      },
    },
    turns,
    evaluators,
    seed,
    // The KB's cards or the catalog's entries per locale: the N of the chance levels (docs/statistics.md).
    cardsPerLocale: cardsPerLocale(data.kb.cards),
  });
  // Wall-clock figures only in the `timings` section (docs/determinism.md).
  report.timings = { started: started.toISOString(), durationMs: Math.round(performance.now() - t0), turns: {} };
  let baseline: Baseline | null = null;
  if (o.baseline !== undefined && !o.updateBaseline) {
    baseline = await readBaseline(o.baseline);
    for (const note of assertComparable(baseline, report)) log.warn(note);
  }
  const thresholds: GateThresholds = { maxDrop: o.maxDrop ?? DEFAULT_MAX_DROP, seed };
  for (const { option } of FLOOR_OPTIONS) if (o[option] !== undefined) thresholds[option] = o[option];
  if (o.maxFlips !== undefined) thresholds.maxFlips = o.maxFlips;
  const g = gate(report, thresholds, baseline ?? undefined);
  const failures = [...g.failures, ...graphGateFailures(turns, { maxErrors: o.maxErrors ?? 0, ...(o.maxNoRetrieval !== undefined ? { maxNoRetrieval: o.maxNoRetrieval } : {}) })];
  report.gate = { ...g, passed: failures.length === 0, failures };
  return { report, baseline };
}
