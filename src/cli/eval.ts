/**
 * `retrace eval` (and `retrace start`, which is `npm start`): the eval sweep.
 * Store-backed by default (CHROMA_URL, else a local Chroma started and
 * stopped by this process, with the KB ingested idempotently); `--store none`
 * is the ADR's store-less path, where retrieval is reported as not measured
 * and any retrieval floor is an error.
 *
 * stdout: the report (table, or JSON with --json). stderr: progress and logs.
 * Exit 0 pass, 1 gate failed, 2 bad usage or invalid data, 3 store or model
 * unavailable.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { Option, type Command } from "commander";
import { writeFileAtomic } from "../atomic.js";
import { InvalidArgumentError, NotMeasuredError } from "../errors.js";
import { buildReport } from "../eval/aggregate.js";
import { assertComparable, readBaseline, writeBaseline, type Baseline } from "../eval/baseline.js";
import { allEvaluators, NO_STORE } from "../eval/evaluators.js";
import { gate, DEFAULT_MAX_DROP } from "../eval/gate.js";
import { renderJUnit, renderMarkdown, renderTable, reportToJSON } from "../eval/report.js";
import { DEFAULT_CONCURRENCY, runSweep } from "../eval/runner.js";
import { loadData, openSession, type Session } from "../eval/session.js";
import type { Report } from "../eval/types.js";
import { buildGraph } from "../graph/build.js";
import { datasetHash } from "../kb/hash.js";
import { isLocale, LOCALES, type EvalCase } from "../kb/types.js";
import { log } from "../log.js";
import { RETRIEVAL_MODES } from "../retrieval/hybrid.js";
import type { RetrievalMode } from "../retrieval/types.js";
import { resolveDataPaths } from "./check.js";
import { DEFAULT_REQUEST_TIMEOUT_MS, requestTimeoutMs, TIMEOUT_ENV } from "../retrieval/chroma-faults.js";
import { action, EXIT, out, parsePositiveInt, parsePositiveNumber, parseUnitFloat, useColor } from "./io.js";
import { progressReporter } from "./progress.js";

export const DEFAULT_BASELINE = path.join("kb", "eval", "baseline.json");

export interface EvalOptions {
  store: string;
  kb?: string;
  cases?: string;
  k: number;
  denseK: number;
  bm25K: number;
  mode: RetrievalMode;
  embedder: string;
  rerank?: string;
  locale?: string[];
  case?: string[];
  minRecall?: number;
  minHit?: number;
  baseline?: string;
  maxDrop: number;
  updateBaseline?: boolean;
  json?: boolean;
  out?: string;
  junit?: string;
  reportJson?: string;
  concurrency: number;
  dataDir?: string;
  seed: number;
  /** Chroma request deadline, seconds (docs/reliability.md). */
  timeout?: number;
}

/** Validates option combinations before anything runs (a floor on what will not be measured is an error). */
export function checkEvalOptions(o: EvalOptions): void {
  if (o.store !== "auto" && o.store !== "none" && !/^https?:\/\//.test(o.store)) throw new InvalidArgumentError("--store", '"auto", "none" or an http(s) URL', o.store);
  if (!(RETRIEVAL_MODES as readonly string[]).includes(o.mode)) throw new InvalidArgumentError("--mode", RETRIEVAL_MODES.join(" | "), o.mode);
  for (const l of o.locale ?? []) if (!isLocale(l)) throw new InvalidArgumentError("--locale", LOCALES.join(" | "), l);
  if (o.store === "none") {
    if (o.minRecall !== undefined) throw new NotMeasuredError("retrieval_recall_at_k", `${NO_STORE}: --store none skips retrieval, so --min-recall cannot be checked`);
    if (o.minHit !== undefined) throw new NotMeasuredError("retrieval_hit_at_k", `${NO_STORE}: --store none skips retrieval, so --min-hit cannot be checked`);
    if (o.rerank !== undefined) throw new InvalidArgumentError("--rerank", "unset with --store none (nothing is retrieved)", o.rerank);
  }
  if (o.updateBaseline && o.store === "none") throw new NotMeasuredError("retrieval_hit_at_k", `${NO_STORE}: a baseline of a store-less run would hold no retrieval numbers`);
  if (o.updateBaseline && ((o.locale?.length ?? 0) > 0 || (o.case?.length ?? 0) > 0))
    throw new InvalidArgumentError("--update-baseline", "used without --locale/--case (a baseline covers the whole dataset)", "a filtered run");
}

export function selectCases(cases: readonly EvalCase[], o: Pick<EvalOptions, "locale" | "case">): EvalCase[] {
  const ids = new Set(o.case ?? []);
  const known = new Set(cases.map((c) => c.id));
  for (const id of ids) if (!known.has(id)) throw new InvalidArgumentError("--case", "the id of a case in the dataset", id);
  const locales = new Set(o.locale ?? []);
  return cases.filter((c) => (ids.size === 0 || ids.has(c.id)) && (locales.size === 0 || locales.has(c.locale)));
}

/** Opens the session (KB, cases, store, embedder, reranker) the eval options describe. */
export function openSessionFor(
  o: Pick<EvalOptions, "store" | "kb" | "cases" | "embedder" | "rerank" | "dataDir" | "timeout">,
  onIngestProgress?: (done: number, total: number) => void,
): Promise<Session> {
  const paths = resolveDataPaths(o);
  return openSession({
    kbDir: paths.kb,
    casesFile: paths.cases,
    store: o.store,
    embedder: o.embedder,
    reranker: o.rerank ?? null,
    ...(o.dataDir !== undefined ? { dataDir: o.dataDir } : {}),
    ...(onIngestProgress !== undefined ? { onIngestProgress } : {}),
    requestTimeoutMs: requestTimeoutMs(o.timeout),
  });
}

/** The agent graph over the session's retriever (none when store-less), with the options' retrieval settings. */
export function graphFor(session: Session, o: Pick<EvalOptions, "k" | "denseK" | "bm25K" | "mode">) {
  return buildGraph({
    store: session.retriever,
    cards: session.kb,
    defaults: { k: o.k, denseK: o.denseK, bm25K: o.bm25K, mode: o.mode, rerank: session.reranker !== null },
  });
}

/** Runs the sweep and returns the report (gate applied) — the part of `eval` that tests drive directly. */
export async function runEval(o: EvalOptions, session: Session): Promise<{ report: Report; baseline: Baseline | null }> {
  const cases = selectCases(session.cases, o);
  const started = new Date();
  const t0 = performance.now();
  const graph = graphFor(session, o);
  const evaluators = allEvaluators({ k: o.k });
  const progress = progressReporter("eval", "cases");
  let turns;
  let turnTimings;
  try {
    ({ turns, timings: turnTimings } = await runSweep({
      graph,
      cases,
      evaluators,
      knownIds: new Set(session.kb.byId.keys()),
      storeBacked: session.retriever !== null,
      concurrency: o.concurrency,
      threadPrefix: `${randomBytes(3).toString("hex")}:`,
      onCaseDone: (done, total) => progress.update(done, total),
    }));
  } finally {
    progress.stop();
  }
  const report = buildReport({
    run: {
      // A filtered run (--locale / --case) measured a different dataset: its hash says so, and a baseline of the full set is refused.
      datasetHash: cases.length === session.cases.length ? session.hashes.dataset : datasetHash(cases),
      kbHash: session.hashes.kb,
      embedder: session.embedder?.id ?? null,
      ...(session.embedder !== null ? { embedderDescription: `${session.embedder.description}` } : {}),
      k: o.k,
      store: session.store,
      mode: session.retriever === null ? "none" : o.mode,
      rerank: session.reranker?.id ?? null,
    },
    turns,
    evaluators,
    seed: o.seed,
  });
  let baseline: Baseline | null = null;
  if (o.baseline !== undefined && !o.updateBaseline) {
    baseline = await readBaseline(o.baseline);
    for (const note of assertComparable(baseline, report)) log.warn(note);
  }
  const thresholds = {
    ...(o.minRecall !== undefined ? { minRecall: o.minRecall } : {}),
    ...(o.minHit !== undefined ? { minHit: o.minHit } : {}),
    maxDrop: o.maxDrop,
    seed: o.seed,
  };
  report.gate = gate(report, thresholds, baseline ?? undefined);
  // Wall clock last and apart: everything above is identical between identical runs (docs/determinism.md).
  report.timings = { started: started.toISOString(), durationMs: Math.round(performance.now() - t0), turns: turnTimings };
  return { report, baseline };
}

export async function evalCommand(o: EvalOptions): Promise<number> {
  checkEvalOptions(o);
  if (o.baseline !== undefined && !o.updateBaseline && !existsSync(o.baseline))
    throw new InvalidArgumentError("--baseline", "an existing baseline file (create one with --update-baseline)", o.baseline);
  if ((o.case?.length ?? 0) > 0) {
    // An unknown --case is a usage error before any server starts or anything is ingested (docs/reliability.md).
    const paths = resolveDataPaths(o);
    selectCases((await loadData(paths.kb, paths.cases)).cases, o);
  }
  const ingestProgress = progressReporter("ingest", "chunks");
  const session = await openSessionFor(o, (d, t) => ingestProgress.update(d, t));
  ingestProgress.stop();
  try {
    const { report } = await runEval(o, session);
    if (o.json) out(reportToJSON(report));
    else out(renderTable(report, { color: useColor() }));
    if (o.out !== undefined) await writeFileAtomic(o.out, renderMarkdown(report));
    if (o.junit !== undefined) await writeFileAtomic(o.junit, renderJUnit(report));
    if (o.reportJson !== undefined) await writeFileAtomic(o.reportJson, reportToJSON(report));
    if (o.updateBaseline) {
      const file = o.baseline ?? DEFAULT_BASELINE;
      await writeBaseline(file, report);
      log.info(`baseline written to ${file}`);
    }
    return report.gate?.passed === false ? EXIT.gateFailed : EXIT.ok;
  } finally {
    await session.close();
  }
}

const collect = (v: string, prev: string[] | undefined) => [...(prev ?? []), v];

/** The options shared by `eval` and `start`. */
export function addEvalOptions(cmd: Command): Command {
  return cmd
    .option("--store <auto|url|none>", "auto: CHROMA_URL if set, else a local Chroma started (and stopped) by retrace; a URL; none: store-less (retrieval not measured)", "auto")
    .option("--kb <dir>", "knowledge-base folder", "kb")
    .option("--cases <file>", "eval cases JSONL (default <kb>/eval/cases.jsonl)")
    .option("-k, --k <n>", "retrieval top-k: cards scored per turn", parsePositiveInt("-k"), 5)
    .option("--dense-k <n>", "chunks asked of the dense index", parsePositiveInt("--dense-k"), 20)
    .option("--bm25-k <n>", "chunks asked of BM25", parsePositiveInt("--bm25-k"), 20)
    .addOption(new Option("--mode <mode>", "retrieval branches").choices([...RETRIEVAL_MODES]).default("hybrid"))
    .option("--embedder <auto|builtin|model>", "auto: the transformers.js model when its weights are local, else the built-in one", "auto")
    .option("--rerank <model|auto>", "rerank the fused head with a local cross-encoder (off by default)")
    .option("--locale <locale>", "only cases of this locale (repeatable)", collect)
    .option("--case <id>", "only this case (repeatable)", collect)
    .option("--min-recall <x>", "floor on mean recall@k (off by default)", parseUnitFloat("--min-recall"))
    .option("--min-hit <x>", "floor on mean hit@k (off by default)", parseUnitFloat("--min-hit"))
    .option("--baseline <file>", "compare with this baseline (and write it there with --update-baseline)")
    .option("--max-drop <x>", "tolerated absolute drop of a triad mean against the baseline", parseUnitFloat("--max-drop"), DEFAULT_MAX_DROP)
    .option("--update-baseline", `write the baseline from this run (to --baseline, default ${DEFAULT_BASELINE})`)
    .option("--json", "print the report as JSON (with a version field) instead of the table")
    .option("--out <file>", "also write the report as markdown")
    .option("--junit <file>", "also write JUnit XML (one test case per gold-bearing turn)")
    .option("--report-json <file>", "also write the report as JSON")
    .option("--concurrency <n>", "cases run in parallel (results are identical at any value)", parsePositiveInt("--concurrency"), DEFAULT_CONCURRENCY)
    .option("--data-dir <dir>", "data folder of the local Chroma (default .retrace/chroma)")
    .option("--timeout <seconds>", `deadline of each Chroma request (default ${DEFAULT_REQUEST_TIMEOUT_MS / 1000} s, or ${TIMEOUT_ENV})`, parsePositiveNumber("--timeout", "seconds"))
    .option("--seed <n>", "seed of the bootstrap intervals and permutation tests", parsePositiveInt("--seed"), 42);
}

export function register(program: Command): void {
  addEvalOptions(
    program.command("eval").description("Run every eval case through the agent graph and score retrieval per turn (store-backed by default)"),
  ).action(action((o: EvalOptions) => evalCommand(o)));
  addEvalOptions(
    program
      .command("start")
      .description("The main job (npm start): ingest the KB into a self-started local Chroma, then run the store-backed eval sweep"),
  ).action(action((o: EvalOptions) => evalCommand(o)));
}
