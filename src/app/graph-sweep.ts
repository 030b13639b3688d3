/**
 * The sweep of a graph of your own (`eval --graph`, `trace --graph`, `label`
 * pools): the data it is scored against (`loadGraphData`), the id options
 * (`idOptionsFor`), and the sweep itself, run in the graph's own thread
 * (`sweepGraph` here, `sweepGraphHere` in the thread: src/app/graph-worker.ts).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import type { DocumentInterface } from "@langchain/core/documents";
import { InvalidArgumentError } from "../errors.js";
import { retrievalSideEvaluators, type EvaluatorSpec } from "../eval/measures/evaluators.js";
import type { IdOptions } from "../eval/sweep/capture.js";
import { baseRetrieversFor } from "../eval/sweep/retriever-instances.js";
import {
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
import { loadCases } from "../kb/cases.js";
import type { EvalCase, KnowledgeBase } from "../kb/types.js";
import { log } from "../log.js";
import { EVAL_DEFAULTS } from "./eval-plan.js";
import { sweepRepeats } from "../eval/sweep/repeat-loop.js";
import type { ParsedConfigurable } from "./sweep-source.js";
import type { ExternalGraphOptions, GraphEvalOptions } from "./graph-options.js";
import { parseConfigurable, projectPath } from "./graph-identity.js";
import { isolatedGraphSweep, isolationLimits, type GraphWorkerInit } from "./graph-isolation.js";

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
