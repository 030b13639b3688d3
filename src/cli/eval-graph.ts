/**
 * `retrace eval --graph FILE[#export]` and `retrace trace --graph FILE CASE`:
 * the sweep over a user's own LangGraph.js graph (docs/evaluate-your-graph.md).
 * Retrieval is captured from the graph's retriever runs with a callback
 * handler; nothing in the user's code changes. The KB (`--kb`) or a catalog
 * (`--catalog`, `id<TAB>locale` a line) gives the ids the integrity check
 * resolves gold against; with neither, the command refuses to run.
 *
 * Exit 0 pass, 1 gate failed (floors, baseline, turn errors beyond
 * --max-errors, gold-bearing turns with no retrieval beyond
 * --max-no-retrieval), 2 bad usage, bad data, a graph that cannot be loaded
 * or a run most of whose retrieved ids name no card (src/eval/sweep/graph-checks.ts).
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { Option, type Command } from "commander";
import { writeFileAtomic } from "../atomic.js";
import { InvalidArgumentError } from "../errors.js";
import { buildReport } from "../eval/report/aggregate.js";
import { assertComparable, readBaseline, writeBaseline, type Baseline } from "../eval/gate/baseline.js";
import { describeIdKeys, RETRIEVAL_CALLS, type IdOptions, type RetrievalCall } from "../eval/sweep/capture.js";
import { retrievalEvaluator } from "../eval/measures/evaluators.js";
import { capturedRetrievers, graphGateFailures, loadFunction, loadGraph, runGraphSweep, type GraphTurn, type InputMapper } from "../eval/sweep/external-graph.js";
import { ALLOW_NO_RETRIEVAL_DEPRECATED, checkKnownIds, graphRunFacts } from "../eval/sweep/graph-checks.js";
import { graphWarnings } from "../eval/report/graph-report.js";
import { DEFAULT_MAX_DROP, FLOOR_OPTIONS, gate, type FloorThresholds, type GateThresholds } from "../eval/gate/gate.js";
import { renderJUnit, renderMarkdown, renderTable, reportToJSON } from "../eval/report/render.js";
import type { Report } from "../eval/report/types.js";
import { cardsPerLocale } from "../eval/measures/chance.js";
import { loadCatalog } from "../kb/catalog.js";
import { loadKnowledgeBase } from "../kb/cards.js";
import { loadCases } from "../kb/cases.js";
import { datasetHash, kbHash } from "../kb/hash.js";
import type { DocumentInterface } from "@langchain/core/documents";
import type { EvalCase, KnowledgeBase } from "../kb/types.js";
import { log } from "../log.js";
import { DEFAULT_BASELINE, selectCases } from "./select.js";
import { EXIT, out, outputWidth, outText, useColor } from "./io.js";
import { countOption } from "./options.js";
import { progressReporter } from "./progress.js";

export interface GraphOptions {
  graph?: string;
  input?: string;
  idKey?: string;
  idMap?: string;
  retrievalCall: RetrievalCall;
  maxErrors: number;
  maxNoRetrieval?: number;
  /** Deprecated, no effect (src/eval/sweep/graph-checks.ts). */
  allowNoRetrieval?: boolean;
  catalog?: string;
  /** `--max-card-bytes` (src/kb/cards.ts). */
  maxCardBytes?: number;
}

/** The `eval` options a graph run uses (the others — store, embedder, mode — belong to retrace's own graph). */
export interface GraphEvalOptions extends GraphOptions, FloorThresholds {
  store: string;
  kb?: string;
  cases?: string;
  k: number;
  locale?: string[];
  case?: string[];
  baseline?: string;
  /** Unset: DEFAULT_MAX_DROP (0.02) — a user's graph may not be deterministic, so never the 0 of retrace's own pipeline. */
  maxDrop?: number;
  maxFlips?: number;
  updateBaseline?: boolean;
  json?: boolean;
  out?: string;
  junit?: string;
  reportJson?: string;
  concurrency: number;
  seed: number;
}

/** The options that mean something only with `--graph` (refused without it: src/cli/options.ts refuseInMode). */
export const GRAPH_ONLY = ["--input", "--id-key", "--id-map", "--retrieval-call", "--max-errors", "--max-no-retrieval", "--allow-no-retrieval", "--catalog"] as const;

/** The `--graph` options (added to `eval` and, without the gate's `--max-errors`/`--max-no-retrieval`/`--allow-no-retrieval`, to `trace`). */
export function addGraphOptions(cmd: Command, { gate = true }: { gate?: boolean } = {}): Command {
  cmd
    .option("--graph <file[#export]>", "evaluate your own LangGraph graph: a .ts/.mts/.js/.mjs module exporting a compiled graph or a factory (default export name: graph)")
    .option("--input <module[#export]>", "with --graph: a module whose function (turn, case) => input builds each turn's graph input (default: a human message on the messages channel)")
    .option("--id-key <field>", "with --graph: metadata field holding the card id (default: parentId, doc_id, id, source, then Document.id)")
    .option("--id-map <module[#export]>", "with --graph: a module whose function (document) => id maps a retrieved document to a card id")
    .addOption(new Option("--retrieval-call <which>", "with --graph: which retriever calls of a turn are scored: last = the last step (all calls overlapping in time), first = the first step, all = every call").choices([...RETRIEVAL_CALLS]).default("last"));
  if (gate)
    cmd
      .option("--max-errors <n>", "with --graph: turns whose graph run throws that the gate tolerates", countOption("--max-errors"), 0)
      .option("--max-no-retrieval <n>", "with --graph: gold-bearing turns with no retriever run (scored as misses) the gate tolerates (default: not gated)", countOption("--max-no-retrieval"))
      .option("--allow-no-retrieval", "with --graph: deprecated, no effect (a turn with empty gold and no retrieval passes; a gold-bearing one is a miss: gate them with --max-no-retrieval)");
  return cmd.option("--catalog <file>", "with --graph: id<TAB>locale a line, standing in for --kb when your documents live in your own store");
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

/** The id options from `--id-key` / `--id-map`. */
export async function idOptionsFor(o: Pick<GraphOptions, "idKey" | "idMap">): Promise<IdOptions> {
  if (o.idKey !== undefined && o.idMap !== undefined) throw new InvalidArgumentError("--id-key / --id-map", "one of them, not both", `${o.idKey} / ${o.idMap}`);
  if (o.idMap !== undefined) return { idMap: await loadFunction<(d: DocumentInterface) => string | null | undefined>(o.idMap, "--id-map") };
  return o.idKey !== undefined ? { idKey: o.idKey } : {};
}

/** Loads everything a graph run needs and runs the sweep over `cases`. */
export async function sweepGraph(o: Pick<GraphEvalOptions, "graph" | "input" | "idKey" | "idMap" | "retrievalCall" | "k">, cases: readonly EvalCase[], kb: KnowledgeBase, concurrency: number, onCaseDone?: (d: number, t: number) => void): Promise<{ turns: GraphTurn[]; file: string; exportName: string; ids: IdOptions }> {
  if (o.graph === undefined) throw new InvalidArgumentError("--graph", "a graph module", undefined);
  const ids = await idOptionsFor(o);
  const input = o.input !== undefined ? await loadFunction<InputMapper>(o.input, "--input") : undefined;
  const loaded = await loadGraph(o.graph);
  if (loaded.addedCheckpointer) log.info(`graph ${loaded.file}#${loaded.exportName} has no checkpointer: an in-memory one was added (one thread per case)`);
  const turns = await runGraphSweep({
    graph: loaded.graph,
    cases,
    evaluators: [retrievalEvaluator({ k: o.k })],
    knownIds: new Set(kb.byId.keys()),
    k: o.k,
    ...ids,
    ...(input !== undefined ? { input } : {}),
    retrievalCall: o.retrievalCall,
    concurrency,
    threadPrefix: `${randomBytes(3).toString("hex")}:`,
    ...(onCaseDone !== undefined ? { onCaseDone } : {}),
  });
  return { turns, file: loaded.file, exportName: loaded.exportName, ids };
}

/** The graph sweep and its report (gate applied); the part tests drive directly. */
export async function runGraphEval(o: GraphEvalOptions): Promise<{ report: Report; baseline: Baseline | null }> {
  const data = await loadGraphData(o);
  const cases = selectCases(data.cases, o);
  const started = new Date();
  const t0 = performance.now();
  const progress = progressReporter("eval", "cases");
  let swept;
  try {
    swept = await sweepGraph(o, cases, data.kb, o.concurrency, (d, t) => progress.update(d, t));
  } finally {
    progress.stop();
  }
  const turns = swept.turns.map((t) => t.report);
  const evaluators = [retrievalEvaluator({ k: o.k })];
  const graphId = `${swept.file}#${swept.exportName}`;
  // What was scored, and a refusal (exit 2) when most scored ids name no card (src/eval/sweep/graph-checks.ts).
  const facts = graphRunFacts(turns, (id) => data.kb.byId.get(id)?.locale);
  checkKnownIds(facts, { graph: `--graph ${graphId}`, idKeys: describeIdKeys(swept.ids), ids: o.catalog !== undefined ? `the catalog ${o.catalog}` : `the KB ${data.kbLabel}` });
  const report = buildReport({
    run: {
      datasetHash: cases.length === data.cases.length ? datasetHash(data.cases) : datasetHash(cases),
      kbHash: kbHash(data.kb),
      embedder: `graph:${graphId}`,
      embedderDescription: "the graph's own retriever(s), captured from its retriever runs",
      k: o.k,
      store: "graph",
      graph: {
        file: swept.file,
        exportName: swept.exportName,
        retrievers: capturedRetrievers(swept.turns),
        idKey: describeIdKeys(swept.ids),
        retrievalCall: o.retrievalCall,
        errors: turns.filter((t) => t.error !== undefined).length,
        noRetrieval: turns.filter((t) => t.noRetrieval === true).length,
        ...(o.catalog !== undefined ? { catalog: o.catalog } : {}),
        ...facts,
      },
    },
    turns,
    evaluators,
    seed: o.seed,
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
  const thresholds: GateThresholds = { maxDrop: o.maxDrop ?? DEFAULT_MAX_DROP, seed: o.seed };
  for (const { option } of FLOOR_OPTIONS) if (o[option] !== undefined) thresholds[option] = o[option];
  if (o.maxFlips !== undefined) thresholds.maxFlips = o.maxFlips;
  const g = gate(report, thresholds, baseline ?? undefined);
  const failures = [...g.failures, ...graphGateFailures(turns, { maxErrors: o.maxErrors, ...(o.maxNoRetrieval !== undefined ? { maxNoRetrieval: o.maxNoRetrieval } : {}) })];
  report.gate = { ...g, passed: failures.length === 0, failures };
  return { report, baseline };
}

export async function evalGraphCommand(o: GraphEvalOptions): Promise<number> {
  if (o.baseline !== undefined && !o.updateBaseline && !existsSync(o.baseline))
    throw new InvalidArgumentError("--baseline", "an existing baseline file (create one with --update-baseline)", o.baseline);
  if (o.updateBaseline && ((o.locale?.length ?? 0) > 0 || (o.case?.length ?? 0) > 0))
    throw new InvalidArgumentError("--update-baseline", "used without --locale/--case (a baseline covers the whole dataset)", "a filtered run");
  if (o.allowNoRetrieval) log.warn(ALLOW_NO_RETRIEVAL_DEPRECATED);
  const { report } = await runGraphEval(o);
  if (o.json) for (const w of graphWarnings(report)) log.warn(w); // the table prints them itself
  if (o.json) out(reportToJSON(report));
  else outText(renderTable(report, { color: useColor(), width: outputWidth() }));
  if (o.out !== undefined) await writeFileAtomic(o.out, renderMarkdown(report));
  if (o.junit !== undefined) await writeFileAtomic(o.junit, renderJUnit(report));
  if (o.reportJson !== undefined) await writeFileAtomic(o.reportJson, reportToJSON(report));
  if (o.updateBaseline) {
    const file = o.baseline ?? DEFAULT_BASELINE;
    await writeBaseline(file, report);
    log.info(`baseline written to ${file}`);
  }
  return report.gate?.passed === false ? EXIT.gateFailed : EXIT.ok;
}
