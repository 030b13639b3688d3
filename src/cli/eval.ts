/**
 * `retrace eval` (and `retrace start`, which is `npm start`): the eval sweep.
 * Store-backed by default (CHROMA_URL, else a local Chroma started and
 * stopped by this process, with the KB ingested idempotently); `--store none`
 * is the ADR's store-less path, where retrieval is reported as not measured
 * and any retrieval floor is an error.
 *
 * Everything that can be checked without a store is checked before one is
 * started or anything is ingested: options, the data, `--case` ids, floor
 * scopes, and the baseline against the dataset, subset, k and configuration
 * (docs/gates-and-exit-codes.md).
 *
 * stdout: the report (table, or JSON with --json). stderr: progress and logs.
 * Exit 0 pass, 1 gate failed, 2 bad usage or invalid data, 3 store or model
 * unavailable, 70 internal error.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { InvalidArgumentError as CommanderArgumentError, Option, type Command } from "commander";
import { InvalidArgumentError, NotMeasuredError } from "../errors.js";
import { readBaseline, writeBaseline, type Baseline } from "../eval/gate/baseline.js";
import { NO_STORE, type Judge } from "../eval/measures/evaluators.js";
import { openJudge } from "./judge.js";
import { checkScope, FIXED_SCOPES, FLOOR_OPTIONS, DEFAULT_MAX_DROP, type FloorThresholds, type ScopedFloors } from "../eval/gate/gate.js";
import { shardCases, shardSection, type ShardSpec } from "../eval/gate/shard.js";
import { RULE_BASED_ANSWERER } from "../eval/report/parts.js";
import { ownGraphCaseOptions, runSweepInWorkers } from "../eval/sweep/parallel.js";
import { DEFAULT_CONCURRENCY, runSweep } from "../eval/sweep/runner.js";
import { loadData, openSystem, resolveStoreChoice, SWEEP_WORKER_ENTRY, type LoadedData, type RetraceSystem as Session } from "../system.js";
import { RESAMPLE_UNITS, type ResampleUnit } from "../eval/stats/bootstrap.js";
import type { Report } from "../eval/report/types.js";
import { buildGraph } from "../graph/build.js";
import type { TunableConfig } from "../graph/configuration.js";
import { datasetHash } from "../kb/hash.js";
import { splitFileFor } from "../kb/load.js";
import { isLocale, tableLocaleFor, type EvalCase } from "../kb/types.js";
import { readConfigFile, type RetrievalConfig } from "../eval/ir/tune-config.js";
import { log } from "../log.js";
import { RETRIEVAL_MODES } from "../retrieval/hybrid.js";
import type { RetrievalMode } from "../retrieval/types.js";
import { resolveDataPaths } from "./check.js";
import { DEFAULT_REQUEST_TIMEOUT_MS, requestTimeoutMs, TIMEOUT_ENV } from "../retrieval/chroma-faults.js";
import { checkBaselineBeforeRun, defaultBaselineFile, predictEmbedderId, type RunIntent } from "./baseline.js";
import { addGraphOptions, evalGraphCommand, GRAPH_ONLY, type GraphOptions } from "./eval-graph.js";
import { action, EXIT } from "./io.js";
import { addMaxCardBytesOption, countOption, parseNumberIn, positiveIntOption, positiveNumberOption, probabilityOption, refuseInMode, seedOption, workersOption } from "./options.js";
import { progressReporter } from "./progress.js";
import { DEFAULT_BASELINE, selectCases } from "./select.js";
import { cardsPerLocale } from "../eval/measures/chance.js";
import { HIT_KEY } from "../eval/measures/metrics.js";
import { applyGate, emitReport, reportOf, type ReportOutputs } from "./eval-report.js";
import { checkShardOptions, parseShardOption, shardNote } from "./shard.js";
import { evaluatorsFor } from "../eval/sweep/storeless.js";

export { DEFAULT_BASELINE, selectCases };

type Floors = number | ScopedFloors;

/** `eval` / `start` options; the output ones (`--json`, `--out`, `--junit`, `--report-json`, `--html`) are ReportOutputs. */
export interface EvalOptions extends ReportOutputs, FloorThresholds {
  store: string;
  kb?: string;
  cases?: string;
  k: number;
  /** Unset: the retriever's default for its embedder (hybridDefaultsFor). */
  denseK?: number;
  bm25K?: number;
  mode: RetrievalMode;
  embedder: string;
  rerank?: string;
  locale?: string[];
  case?: string[];
  baseline?: string;
  /** Unset: 0 against a baseline of the same dataset, KB and configuration, else 0.02 (gate.ts). */
  maxDrop?: number;
  maxFlips?: number;
  updateBaseline?: boolean;
  judge?: string;
  judgeCache?: string;
  concurrency: number;
  /** Worker threads of the sweep (`--workers`; 1: the sweep runs in this thread). */
  workers?: number;
  dataDir?: string;
  seed: number;
  /** What the bootstrap resamples (docs/statistics.md); default whole cases. */
  resample?: ResampleUnit;
  /** A retrieval configuration file (retrace tune's output; docs/fusion-and-tuning.md). */
  config?: string;
  /** Its `retrieval` part, read by evalCommand. */
  retrievalConfig?: RetrievalConfig;
  /** Its `locales` part: per-locale overrides applied to the turns of each locale. */
  localeConfigs?: Record<string, RetrievalConfig>;
  /** Chroma request deadline, seconds (docs/reliability.md). */
  timeout?: number;
  /** Run only this shard of the selected cases; its report is partial (docs/reliability.md, "Sharded sweeps"). */
  shard?: ShardSpec;
  /** `--max-card-bytes`: the card size limit, winning over RETRACE_MAX_CARD_BYTES (src/kb/cards.ts). */
  maxCardBytes?: number;
}

/** Whether the options ask for any comparison with a baseline (explicitly, or through --max-drop / --max-flips). */
export function wantsBaseline(o: Pick<EvalOptions, "baseline" | "maxDrop" | "maxFlips" | "updateBaseline">): boolean {
  return !o.updateBaseline && (o.baseline !== undefined || o.maxDrop !== undefined || o.maxFlips !== undefined);
}

/** Validates option combinations before anything runs (a floor or baseline on what will not be measured is an error). */
export function checkEvalOptions(o: EvalOptions): void {
  resolveStoreChoice(o.store); // the store vocabulary: auto, local, memory, none or a URL (exit 2 otherwise)
  if (!(RETRIEVAL_MODES as readonly string[]).includes(o.mode)) throw new InvalidArgumentError("--mode", RETRIEVAL_MODES.join(" | "), o.mode);
  for (const l of o.locale ?? []) if (!isLocale(l)) throw new InvalidArgumentError("--locale", "a canonical BCP-47 language tag (e.g. en, de, fr-CA, ja, zh-Hans)", l);
  if (o.store === "none") {
    const why = `${NO_STORE}: --store none skips retrieval, and every retrieval and answer-side key depends on it`;
    for (const { option, flag, key } of FLOOR_OPTIONS)
      if (o[option] !== undefined) throw new NotMeasuredError(key, `${why}, so ${flag} cannot be checked`);
    if (o.updateBaseline) throw new NotMeasuredError(HIT_KEY, `${NO_STORE}: a baseline of a store-less run would hold no retrieval numbers`);
    for (const [flag, v] of [["--baseline", o.baseline], ["--max-drop", o.maxDrop], ["--max-flips", o.maxFlips]] as const)
      if (v !== undefined) throw new NotMeasuredError(HIT_KEY, `${why}, so ${flag} has nothing to compare`);
    if (o.rerank !== undefined) throw new InvalidArgumentError("--rerank", "unset with --store none (nothing is retrieved)", o.rerank);
  }
  if ((o.workers ?? 1) > 1 && o.judge !== undefined)
    throw new InvalidArgumentError("--workers", "1 with --judge (the judge's chat model lives in this thread)", o.workers);
  if (o.updateBaseline && ((o.locale?.length ?? 0) > 0 || (o.case?.length ?? 0) > 0))
    throw new InvalidArgumentError("--update-baseline", "used without --locale/--case (a baseline covers the whole dataset)", "a filtered run");
  if (o.updateBaseline && (o.maxDrop !== undefined || o.maxFlips !== undefined))
    throw new InvalidArgumentError("--update-baseline", "used without --max-drop/--max-flips (it writes the baseline; it compares with nothing)", "both");
}

/** The baseline file the options name: --baseline, else `<kb>/eval/baseline.json`. */
export function baselineFileFor(o: Pick<EvalOptions, "baseline" | "kb">): string {
  return o.baseline ?? defaultBaselineFile(resolveDataPaths(o).kb);
}

/** What `retrace eval` checked before starting a store. */
export interface EvalPlan {
  cases: EvalCase[];
  datasetHash: string;
  baseline: Baseline | null;
  /** The KB and cases as validated here; the session reuses them. */
  data: LoadedData;
}

/**
 * Everything checkable without a store, before one starts: the data (KB and
 * cases valid), `--case` ids, floor scopes (a locale of the selected cases,
 * or tune/holdout only with a split file), and the baseline — read, and
 * checked against the dataset, subset, k and configuration, with advice
 * naming the right command. Throws typed errors (exit 2).
 */
export async function planEval(o: EvalOptions): Promise<EvalPlan> {
  checkEvalOptions(o);
  const paths = resolveDataPaths(o);
  const data = await loadData(paths.kb, paths.cases, o.maxCardBytes !== undefined ? { maxCardBytes: o.maxCardBytes } : {});
  const cases = selectCases(data.cases, o);
  if (cases.length === 0) throw new InvalidArgumentError("--locale/--case", "a selection matching at least one case", { locale: o.locale ?? [], case: o.case ?? [] });
  const split = data.split; // split.json beside the cases file, validated with them
  // Scope names against the locales of the selected cases (turn stubs carry what checkScope reads).
  const stubs = cases.map((c) => ({ locale: c.locale, kind: c.kind, ...(split !== null ? { part: split.partOf.get(c.id) } : {}) }));
  for (const { option, flag } of FLOOR_OPTIONS) {
    const v = o[option];
    if (v === undefined || typeof v === "number") continue;
    for (const scope of Object.keys(v)) {
      if ((scope === "tune" || scope === "holdout") && split === null)
        throw new InvalidArgumentError(`${flag} scope "${scope}"`, `used with a tune/holdout split file (${splitFileFor(paths.cases)} does not exist)`, scope);
      checkScope({ turns: stubs as never }, scope, flag);
    }
  }
  const datasetHashOfRun = cases.length === data.cases.length ? data.hashes.dataset : datasetHash(cases);
  let baseline: Baseline | null = null;
  if (wantsBaseline(o)) {
    const file = baselineFileFor(o);
    if (!existsSync(file))
      throw new InvalidArgumentError(
        "--baseline",
        `an existing baseline file (create one with \`retrace eval${paths.kb !== "kb" ? ` --kb ${paths.kb}` : ""}${o.baseline !== undefined ? ` --baseline ${o.baseline}` : ""} --update-baseline\`)`,
        file,
      );
    baseline = await readBaseline(file);
    const intent: RunIntent = {
      kb: paths.kb,
      ...(o.cases !== undefined ? { cases: o.cases } : {}),
      k: o.k,
      mode: o.mode,
      embedder: o.embedder,
      ...(o.rerank !== undefined ? { rerank: o.rerank } : {}),
      ...(o.locale !== undefined ? { locale: o.locale } : {}),
      ...(o.case !== undefined ? { case: o.case } : {}),
      baselineFile: file,
      baselineIsDefault: o.baseline === undefined,
    };
    const plan = { datasetHash: datasetHashOfRun, fullDatasetHash: data.hashes.dataset, selected: cases.length, total: data.cases.length };
    checkBaselineBeforeRun(baseline, intent, plan, await predictEmbedderId(o.embedder));
  }
  return { cases, datasetHash: datasetHashOfRun, baseline, data };
}


/** Opens the session (KB, cases, store, embedder, reranker) the eval options describe. */
export function openSessionFor(
  o: Pick<EvalOptions, "store" | "kb" | "cases" | "embedder" | "rerank" | "dataDir" | "retrievalConfig" | "timeout" | "maxCardBytes">,
  onIngestProgress?: (done: number, total: number) => void,
  data?: LoadedData,
): Promise<Session> {
  const paths = resolveDataPaths(o);
  return openSystem({
    kbDir: paths.kb,
    casesFile: paths.cases,
    store: o.store,
    embedder: o.embedder,
    reranker: o.rerank ?? null,
    ...(o.dataDir !== undefined ? { dataDir: o.dataDir } : {}),
    ...(o.retrievalConfig?.bm25 !== undefined ? { bm25Params: o.retrievalConfig.bm25 } : {}),
    ...(onIngestProgress !== undefined ? { onIngestProgress } : {}),
    ...(o.maxCardBytes !== undefined ? { maxCardBytes: o.maxCardBytes } : {}),
    ...(data !== undefined ? { data } : {}),
    requestTimeoutMs: requestTimeoutMs(o.timeout),
  });
}

/** The graph-configuration keys of one config-file section (BM25 k1/b belong to the index, not to a call). */
function settingsOfConfig(c: RetrievalConfig) {
  return {
    ...(c.denseK !== undefined ? { denseK: c.denseK } : {}),
    ...(c.bm25K !== undefined ? { bm25K: c.bm25K } : {}),
    ...(c.fusion !== undefined ? { fusion: c.fusion } : {}),
    ...(c.rrfK !== undefined ? { rrfK: c.rrfK } : {}),
    ...(c.weights !== undefined ? { weights: c.weights } : {}),
  };
}

/** The agent graph over the session's retriever (none when store-less), with the options' retrieval settings. */
export function graphFor(session: Session, o: GraphSettingsOptions) {
  return buildGraph({ store: session.retriever, cards: session.kb, analyzers: session.analyzers, defaults: graphDefaultsFor(session, o) });
}

type GraphSettingsOptions = Pick<EvalOptions, "k" | "denseK" | "bm25K" | "mode" | "retrievalConfig" | "localeConfigs">;

/** The graph's configuration defaults for these options (plain data: a worker thread builds the same graph from them). */
export function graphDefaultsFor(session: Pick<Session, "reranker">, o: GraphSettingsOptions): Partial<TunableConfig> {
  const c = o.retrievalConfig ?? {};
  const locales = o.localeConfigs;
  // A --config file's keys win over the command-line depths (docs/fusion-and-tuning.md).
  return {
    k: o.k,
    ...((c.denseK ?? o.denseK) !== undefined ? { denseK: c.denseK ?? o.denseK } : {}),
    ...((c.bm25K ?? o.bm25K) !== undefined ? { bm25K: c.bm25K ?? o.bm25K } : {}),
    mode: o.mode,
    rerank: session.reranker !== null,
    ...(c.fusion !== undefined ? { fusion: c.fusion } : {}),
    ...(c.rrfK !== undefined ? { rrfK: c.rrfK } : {}),
    ...(c.weights !== undefined ? { weights: c.weights } : {}),
    // Per-locale sections override the keys above for their locale's turns (docs/fusion-and-tuning.md).
    ...(locales !== undefined ? { locales: Object.fromEntries(Object.entries(locales).map(([tag, lc]) => [tag, settingsOfConfig(lc)])) } : {}),
  };
}


/** `{ genericLocales }` when some cases' locales have no built-in tables (docs/languages.md), else nothing. */
function genericLocalesOf(cases: readonly { locale: string }[]): { genericLocales?: string[] } {
  const generic = [...new Set(cases.map((c) => c.locale))].filter((l) => tableLocaleFor(l) === null).sort();
  return generic.length > 0 ? { genericLocales: generic } : {};
}

/** Runs the sweep and returns the report (gate applied) — the part of `eval` that tests drive directly. */
export async function runEval(
  o: EvalOptions,
  session: Session,
  plan?: EvalPlan,
  extra: { judge?: Judge } = {},
): Promise<{ report: Report; baseline: Baseline | null }> {
  const selected = selectCases(session.cases, o);
  const cases = o.shard === undefined ? selected : shardCases(selected, o.shard); // a shard: whole cases, balanced by turns (src/eval/gate/shard.ts)
  const started = new Date();
  const t0 = performance.now();
  const evaluators = evaluatorsFor({ k: o.k, storeBacked: session.retriever !== null, ...(extra.judge !== undefined ? { judge: extra.judge } : {}) });
  const progress = progressReporter("eval", "cases");
  let turns;
  let turnTimings;
  let phases;
  let retrieval;
  try {
    const onCaseDone = (done: number, total: number) => progress.update(done, total);
    const threadPrefix = `${randomBytes(3).toString("hex")}:`;
    const defaults = graphDefaultsFor(session, o);
    const knownIds = new Set(session.kb.byId.keys());
    // The turn reports carry what the report needs of each trace; the full traces are not kept.
    const local = ownGraphCaseOptions({
      retriever: session.retriever,
      kb: session.kb,
      analyzers: session.analyzers,
      defaults,
      evaluators,
      knownIds,
      ...(session.split !== null ? { partOf: session.split.partOf } : {}),
      threadPrefix,
      keepTraces: false,
    });
    const workers = o.workers ?? 1;
    const sweep =
      workers > 1
        ? // The same cases through the same graph on this thread and worker threads (src/eval/sweep/parallel.ts): the same turns, in dataset order.
          await runSweepInWorkers({
            workerEntry: SWEEP_WORKER_ENTRY,
            init: {
              recipe: session.retrieverRecipe,
              chunks: session.chunks,
              kb: session.kb,
              analyzers: session.analyzers.overrides,
              cases,
              defaults,
              k: o.k,
              knownIds: [...knownIds],
              partOf: session.split !== null ? [...session.split.partOf] : null,
              threadPrefix,
              traces: false,
            },
            threads: workers,
            concurrency: o.concurrency,
            local,
            onCaseDone,
          })
        : await runSweep({ ...local, cases, concurrency: o.concurrency, onCaseDone });
    ({ turns, timings: turnTimings, phases, retrieval } = sweep);
    if (workers > 1) log.info(`sweep: ${sweep.casesByThread.map((n, t) => `${n} case${n === 1 ? "" : "s"} on ${t === 0 ? "the main thread" : `worker ${t}`}`).join(", ")}`);
  } finally {
    progress.stop();
  }
  const tReport = performance.now();
  const hashOf = (cs: EvalCase[]) => (cs.length === session.cases.length ? session.hashes.dataset : datasetHash(cs));
  const report = reportOf({
    run: {
      // A filtered run (--locale / --case) measured a different dataset: its hash says so, and a baseline of the full set is refused.
      datasetHash: hashOf(cases),
      kbHash: session.hashes.kb,
      embedder: session.embedder?.id ?? null,
      ...(session.embedder !== null ? { embedderDescription: `${session.embedder.description}` } : {}),
      k: o.k,
      store: session.store,
      storeKind: session.storeKind,
      mode: session.retriever === null ? "none" : o.mode,
      rerank: session.reranker?.id ?? null,
      ...genericLocalesOf(selected), // of the whole selection, so every shard of a run has the same header
      answerer: RULE_BASED_ANSWERER,
      split: session.split?.file ?? null,
      ...(session.retriever !== null ? { retrieval } : {}),
    },
    turns,
    evaluators,
    seed: o.seed,
    ...(o.resample !== undefined ? { resample: o.resample } : {}),
    // The KB's cards per locale: the N of the chance levels (docs/statistics.md).
    cardsPerLocale: cardsPerLocale(session.kb.cards),
  });
  let baseline: Baseline | null = plan?.baseline ?? null;
  if (o.shard !== undefined) {
    // A partial report: not gated (the merged report is), marked with the shard and the whole selection's identity.
    report.shard = shardSection(o.shard, selected, cases, hashOf(selected));
    log.info(shardNote(report.shard));
  } else {
    if (plan === undefined && wantsBaseline(o)) baseline = await readBaseline(baselineFileFor(o));
    applyGate(report, o, o.seed, baseline);
  }
  // Wall clock last and apart: everything above is identical between identical runs (docs/determinism.md).
  const ms = (x: number) => Math.round(x * 10) / 10;
  report.timings = {
    started: started.toISOString(),
    durationMs: Math.round(performance.now() - t0),
    turns: turnTimings,
    phases: { graph: ms(phases.graph), evaluate: ms(phases.evaluate), report: ms(performance.now() - tReport) },
  };
  return { report, baseline };
}

export async function evalCommand(o: EvalOptions): Promise<number> {
  if (o.config !== undefined) {
    const file = await readConfigFile(o.config); // exit 2 naming a bad key, before anything starts
    o.retrievalConfig = file.retrieval;
    if (file.locales !== undefined) {
      o.localeConfigs = file.locales;
      // k1/b belong to the one BM25 index the retriever builds: a per-locale value cannot be honoured (docs/fusion-and-tuning.md).
      for (const [tag, c] of Object.entries(file.locales)) if (c.bm25 !== undefined) log.warn(`${o.config}: locales.${tag}.bm25 is not applied (BM25 k1/b are set for the whole index); using retrieval.bm25`);
    }
  }
  const plan = await planEval(o); // before any store starts or anything is ingested (unknown --case included)
  const ingestProgress = progressReporter("ingest", "chunks");
  const session = await openSessionFor(o, (d, t) => ingestProgress.update(d, t), plan.data);
  ingestProgress.stop();
  try {
    const judge = o.judge === undefined ? undefined : await openJudge(o.judge, session, o.judgeCache);
    const { report } = await runEval(o, session, plan, judge === undefined ? {} : { judge: judge.judge });
    if (report.gate?.tolerance !== undefined) log.info(`baseline tolerance: --max-drop ${report.gate.tolerance.maxDrop} (${report.gate.tolerance.source})`);
    if (judge !== undefined) {
      report.judge = judge.cost();
      log.info(`judge ${report.judge.model}: ${report.judge.calls} calls, ${report.judge.cached} cached${report.judge.inputTokens !== null ? `, ${report.judge.inputTokens} input + ${report.judge.outputTokens ?? 0} output tokens` : ", tokens not reported"}`);
    }
    await emitReport(report, o);
    if (o.updateBaseline) {
      const file = baselineFileFor(o);
      await writeBaseline(file, report);
      log.info(`baseline written to ${file}`);
    }
    return report.gate?.passed === false ? EXIT.gateFailed : EXIT.ok;
  } finally {
    await session.close();
  }
}

/**
 * `0.9` (scope all), `en=0.95,es-419=0.9,adversarial=0.8`, or both mixed
 * (`0.9,en=0.95`): floors per scope, each in [0, 1]. Scope names are checked
 * against the run before it starts (planEval).
 */
export function parseFloors(flag: string): (raw: string) => Floors {
  const bad = (msg: string) => new CommanderArgumentError(`${flag}: ${msg}`);
  return (raw: string): Floors => {
    const items = raw.split(",").map((x) => x.trim());
    const out: Record<string, number> = {};
    for (const item of items) {
      const m = /^(?:([A-Za-z][A-Za-z0-9-]*)=)?(.+)$/.exec(item);
      const scope = m?.[1] ?? "all";
      const x = m === null ? undefined : parseNumberIn(m[2] as string, { min: 0, max: 1 });
      if (x === undefined)
        throw bad(`expected a floor between 0 and 1 or SCOPE=FLOOR items (scopes ${FIXED_SCOPES.join(", ")} or a locale), got ${JSON.stringify(item)}`);
      if (scope in out) throw bad(`scope ${scope} given twice`);
      out[scope] = x;
    }
    const keys = Object.keys(out);
    return keys.length === 1 && keys[0] === "all" ? (out.all as number) : out;
  };
}

const collect = (v: string, prev: string[] | undefined) => [...(prev ?? []), v];

/** The options shared by `eval` and `start`: what to retrieve with (as `trace`) plus what the sweep and its gate do. */
export function addEvalOptions(cmd: Command): Command {
  return addSweepOptions(addRetrievalOptions(cmd));
}

/** What a run retrieves with: data, store, embedder, depths, mode (eval, start and trace). */
export function addRetrievalOptions(cmd: Command): Command {
  cmd
    .option("--store <auto|local|url|memory|none>", "auto: CHROMA_URL if set, else local; local: a Chroma started (and stopped) by retrace; a Chroma URL; memory: exact in-process dense index; none: store-less (retrieval not measured)", "auto")
    .option("--kb <dir>", "knowledge-base folder", "kb")
    .option("--cases <file>", "eval cases JSONL (default <kb>/eval/cases.jsonl)")
    .option("-k, --k <n>", "retrieval top-k: cards scored per turn", positiveIntOption("-k"), 5)
    .option("--dense-k <n>", "chunks asked of the dense index (default 20)", positiveIntOption("--dense-k"))
    .option("--bm25-k <n>", "chunks asked of BM25 (default 20; 50 with the LSA embedder)", positiveIntOption("--bm25-k"))
    .addOption(new Option("--mode <mode>", "retrieval branches").choices([...RETRIEVAL_MODES]).default("hybrid"))
    .option("--embedder <auto|builtin|lsa|model>", "auto: the transformers.js model when its weights are local, else the corpus-fit LSA embedder; builtin: hashed character n-grams; lsa: corpus-fit LSA", "auto")
    .option("--rerank <model|auto>", "rerank the fused head with a local cross-encoder (off by default)")
    .option("--data-dir <dir>", "data folder of the local Chroma (default .retrace/chroma)")
    .option("--timeout <seconds>", `deadline of each Chroma request (default ${DEFAULT_REQUEST_TIMEOUT_MS / 1000} s, or ${TIMEOUT_ENV})`, positiveNumberOption("--timeout", "seconds"))
    .option("--config <file>", "retrieval configuration file (written by retrace tune); its keys win over --dense-k/--bm25-k");
  return addMaxCardBytesOption(cmd);
}

/** What the sweep selects, gates on and writes (eval and start; not trace). */
export function addSweepOptions(cmd: Command): Command {
  return addFloorOptions(
    cmd.option("--locale <locale>", "only cases of this locale (repeatable)", collect).option("--case <id>", "only this case (repeatable)", collect),
    "with scopes all, golden, adversarial, tune, holdout or a locale",
  )
    .option("--baseline <file>", "compare with this baseline (default <kb>/eval/baseline.json when --max-drop/--max-flips is set); --update-baseline writes it there")
    .option("--max-drop <x>", `tolerated drop of each triad mean against the baseline, overall and per locale (default 0 against a baseline of the same dataset, KB and configuration, else ${DEFAULT_MAX_DROP})`, probabilityOption("--max-drop"))
    .option("--max-flips <n>", "tolerated number of turns whose hit@k went from 1 to 0 against the baseline (off by default)", countOption("--max-flips"))
    .option("--update-baseline", "write the baseline from this run (to --baseline, default <kb>/eval/baseline.json)")
    .option("--json", "print the report as JSON (with a version field) instead of the table")
    .option("--out <file>", "also write the report as markdown")
    .option("--junit <file>", "also write JUnit XML (one test case per gold-bearing turn)")
    .option("--report-json <file>", "also write the report as JSON")
    .option("--html <file>", "also write the report as one self-contained HTML page (summary, stage funnel, turns, per-turn debugger; docs/html-report.md)")
    .option("--judge <module>", "run the groundedness judge with the LangChain chat model this module exports (or a factory of one); docs/langchain-integration.md")
    .option("--judge-cache <dir>", "where judge verdicts are cached by (model, prompt, inputs)", ".retrace/judge-cache")
    .option("--concurrency <n>", "cases in flight per thread (results are identical at any value)", positiveIntOption("--concurrency"), DEFAULT_CONCURRENCY)
    .option("--workers <n|auto>", "threads running cases: this one and N − 1 worker threads over the same vectors, for long sweeps on several cores (auto: one per available core; results are identical at any value; docs/throughput.md)", workersOption(), 1)
    .option("--seed <n>", "seed of the bootstrap intervals and tests", seedOption(), 42)
    .addOption(new Option("--resample <unit>", "what the bootstrap resamples: whole cases (all turns of a case together), or single turns").choices([...RESAMPLE_UNITS]).default("case"))
    .option("--shard <i/n>", "run only shard i of n of the selected cases (whole cases, balanced by turns) and write a partial, ungated report for `retrace merge` (docs/reliability.md)", parseShardOption);
}

/**
 * `--min-hit`, `--min-recall`, ...: one option per floor of the metric
 * registry (FLOOR_OPTIONS), in its order; `syntax` ends the first one's help
 * (how scopes are written).
 */
export function addFloorOptions(cmd: Command, syntax: string): Command {
  FLOOR_OPTIONS.forEach(({ flag, label }, i) => {
    const help = i === 0 ? `floor on mean ${label}: X (overall) or SCOPE=X,... ${syntax} (off by default)` : `floor on mean ${label}, same syntax (off by default)`;
    cmd.option(`${flag} <floors>`, help, parseFloors(flag));
  });
  return cmd;
}

/** Options of retrace's own graph that `eval --graph` does not use (the graph brings its own store and retriever). */
export const UNUSED_WITH_GRAPH = ["--workers", "--store", "--dense-k", "--bm25-k", "--mode", "--embedder", "--rerank", "--data-dir", "--timeout", "--config", "--html", "--judge", "--judge-cache", "--resample"] as const;

export function register(program: Command): void {
  addGraphOptions(
    addEvalOptions(
      program.command("eval").description("Run every eval case through the agent graph (retrace's own, or yours with --graph) and score retrieval per turn (store-backed by default)"),
    ),
  ).action(
    action((o: EvalOptions & GraphOptions) => {
      checkShardOptions(o); // --shard with a gate option or --graph: exit 2 before anything starts
      return o.graph !== undefined ? evalGraphCommand(o) : evalCommand(o);
    }),
  );
  refuseInMode<EvalOptions & GraphOptions>(program.commands.find((c) => c.name() === "eval") as Command, [
    { when: (o) => o.graph !== undefined, mode: "with --graph (your graph brings its own store and retriever)", unused: UNUSED_WITH_GRAPH },
    { when: (o) => o.graph === undefined, mode: "without --graph", unused: GRAPH_ONLY },
  ]);
  addEvalOptions(
    program
      .command("start")
      .description("The main job (npm start): ingest the KB into a self-started local Chroma, then run the store-backed eval sweep"),
  ).action(
    action((o: EvalOptions) => {
      checkShardOptions(o);
      return evalCommand(o);
    }),
  );
}
