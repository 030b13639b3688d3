/**
 * The options of an eval of retrace's own graph, their defaults, and
 * everything checked before a store starts or anything is ingested
 * (`planEval`): option combinations, the data, case ids, floor scopes, and
 * the baseline against the dataset, subset, k and configuration
 * (docs/gates-and-exit-codes.md). Typed errors (exit 2), nothing printed.
 */
import { existsSync } from "node:fs";
import { EVAL_DEFAULTS, MAX_REPEAT } from "./eval-defaults.js";
import { InvalidArgumentError, NotMeasuredError } from "../errors.js";
import { checkBaselineTurns, readBaseline, type Baseline } from "../eval/gate/baseline.js";
import { checkScope, FLOOR_OPTIONS, type FloorOption } from "../eval/gate/gate.js";
import { type Quarantine } from "../eval/gate/quarantine.js";
import type { ShardSpec } from "../eval/gate/shard.js";
import type { RetrievalConfig } from "../research/tune-config.js";
import { NO_STORE } from "../eval/measures/evaluators.js";
import { HIT_KEY } from "../eval/measures/metrics.js";
import { FUNNEL_STAGES, stageMeasured } from "../eval/report/stages.js";
import { datasetHash } from "../kb/hash.js";
import { splitFileFor } from "../kb/load.js";
import type { EvalCase } from "../kb/types.js";
import type { Replay } from "../eval/sweep/replay.js";
import { RETRIEVAL_MODES } from "../retrieval/hybrid.js";
import { loadData, resolveStoreChoice, type LoadedData } from "../system.js";
import { checkBaselineBeforeRun, defaultBaselineFile, predictEmbedderId, type RunIntent } from "./baseline.js";
import { checkLocaleOptions, resolveDataPaths, selectRunCases } from "./data.js";
import { checkBaselineWriting, readRunQuarantine } from "./run-checks.js";
import { wantsBaseline, type GateOptions, type MaxDrop } from "./report.js";
import type { SettingValues } from "./settings/schema.js";
import type { GraphOnlySetting } from "./settings/source-families.js";

/** The defaults of the eval options (the CLI's too). */
export { EVAL_DEFAULTS };
// The defaults are a part of the options: checked here, where the options' type lives.
EVAL_DEFAULTS satisfies Partial<EvalOptions>;

/**
 * What an eval runs: data, store, depths, case selection, gate, baseline
 * (the CLI's `eval` / `start` options, without the output ones), and every
 * setting of the settings schema `retrace eval` reads (`embedder`, `mode`,
 * `rerank`, `concurrency`, `seed`, `judge`, `history`, `replay`, …;
 * docs/configuration.md gives each one's values and default) but a graph
 * module's (`configurable`, `maxStateMb`, …: `GraphEvalOptions`). The
 * settings are derived from the schema's rows (../settings/schema.ts
 * `SettingValues`): a setting added there appears here.
 */
export interface EvalOptions extends GateOptions, Omit<SettingValues<"eval">, GraphOnlySetting> {
  /** `auto` (default), `local`, `memory`, `none` or a Chroma URL (src/system.ts). */
  store?: string;
  /** The KB folder (default `kb`). */
  kb?: string;
  /** The cases file (default `<kb>/eval/cases.jsonl`). */
  cases?: string;
  /** Cards scored per turn (default 5). */
  k?: number;
  /** Unset: the retriever's default for its embedder (hybridDefaultsFor). */
  denseK?: number;
  bm25K?: number;
  /** Only cases of these locales. */
  locale?: string[];
  /** Only these cases. */
  case?: string[];
  /** The baseline file (default `<kb>/eval/baseline.json` when a drop or flip tolerance is set). */
  baseline?: string;
  /** The run writes the baseline rather than comparing with one (the caller writes it: `writeBaseline`). */
  updateBaseline?: boolean;
  /** The local Chroma's data folder (default `.retrace/chroma`). */
  dataDir?: string;
  /** Settings as `--config` takes them: a JSON file (retrace tune writes one) or an inline JSON object (docs/configuration.md); read by the one settings reader (src/app/settings/read.ts), its `run` section and `retrieval.{embedder,mode,rerank}` fill the options not given, its `retrieval` and `locales` sections set `retrievalConfig` and `localeConfigs`. */
  config?: string;
  /** A configuration's `retrieval` part. */
  retrievalConfig?: RetrievalConfig;
  /** A configuration's `locales` part: per-locale overrides applied to the turns of each locale. */
  localeConfigs?: Record<string, RetrievalConfig>;
  /** Run only this shard of the selected cases; its report is partial (docs/reliability.md, "Sharded sweeps"). */
  shard?: ShardSpec;
  /**
   * Runs every case this many times (default 1), each repeat on fresh
   * threads, and combines them as `eval --graph --repeat` does
   * (src/eval/sweep/repeats.ts; docs/ci.md, "Repeats and flaky turns").
   * retrace's graph is deterministic: the report says once that the repeats
   * were identical, and its aggregates are a single run's.
   */
  repeat?: number;
  /** Counterfactual retrieval for the query attribution (docs/query-attribution.md); default true, false = `--counterfactual off`. */
  counterfactual?: boolean;
}

/** The dataset hash of a run's cases: `datasetHash`, the recorded context included with `replay: "recorded"` (src/kb/hash.ts). */
export function runDatasetHash(cases: readonly EvalCase[], replay: Replay | undefined): string {
  return datasetHash(cases, replay === "recorded" ? { recordedContext: true } : {});
}

/** Eval options with their defaults applied (`withEvalDefaults`). */
export type ResolvedEvalOptions = EvalOptions & Required<Pick<EvalOptions, keyof typeof EVAL_DEFAULTS>>;

/** The options with EVAL_DEFAULTS in place of unset keys. */
export function withEvalDefaults<O extends EvalOptions>(o: O): O & ResolvedEvalOptions {
  return {
    ...o,
    store: o.store ?? EVAL_DEFAULTS.store,
    k: o.k ?? EVAL_DEFAULTS.k,
    mode: o.mode ?? EVAL_DEFAULTS.mode,
    embedder: o.embedder ?? EVAL_DEFAULTS.embedder,
    concurrency: o.concurrency ?? EVAL_DEFAULTS.concurrency,
    seed: o.seed ?? EVAL_DEFAULTS.seed,
  };
}

/** The options of an eval that a shard constrains. */
export interface ShardedRunOptions extends Partial<Record<FloorOption, unknown>> {
  shard?: ShardSpec;
  updateBaseline?: boolean;
  baseline?: string;
  maxDrop?: MaxDrop;
  maxFlips?: number;
  /** `--graph` gates. */
  maxErrors?: number;
  maxNoRetrieval?: number;
  /** `--repeat` runs' flaky-turn gate. */
  maxFlaky?: number;
  /** The mean unjudged@k the gate tolerates. */
  maxUnjudged?: number;
  quarantine?: string;
}

/**
 * Throws InvalidArgumentError (exit 2, before anything starts) when a shard
 * comes with an option that gates or writes a baseline: they act on the
 * whole run, so they belong to the merge (retrace's graph and `--graph` alike).
 */
export function checkShardOptions(o: ShardedRunOptions): void {
  if (o.shard === undefined) return;
  const given = `--shard ${o.shard.index}/${o.shard.count}`;
  const gating = [
    ...FLOOR_OPTIONS.filter(({ option }) => o[option] !== undefined).map(({ flag }) => `--gate ${flag.slice(2)}`),
    ...(o.baseline !== undefined ? ["--baseline"] : []),
    ...(o.maxDrop !== undefined ? ["--gate max-drop"] : []),
    ...(o.maxFlips !== undefined ? ["--gate max-flips"] : []),
    ...(o.maxErrors !== undefined ? ["--gate max-errors"] : []),
    ...(o.maxNoRetrieval !== undefined ? ["--gate max-no-retrieval"] : []),
    ...(o.maxFlaky !== undefined ? ["--gate max-flaky"] : []),
    ...(o.maxUnjudged !== undefined ? ["--gate max-unjudged"] : []),
    ...(o.quarantine !== undefined ? ["--quarantine"] : []),
    ...(o.updateBaseline === true ? ["--update-baseline"] : []),
  ];
  if (gating.length > 0)
    throw new InvalidArgumentError(
      gating.join(", "),
      "given to `retrace merge`, not to a shard (a shard's report is partial and is not gated; the merged report is)",
      `${gating.join(" ")} with ${given}`,
    );
}

/** The funnel stages a run with these options will measure: no `query` without counterfactual retrieval, no `reranked` without retrieval.rerank, one branch in a one-branch mode, none store-less. */
function expectedStages(o: ResolvedEvalOptions): string[] {
  if (o.store === "none") return [];
  // What each stage needs is declared with the stage (src/eval/report/stages.ts).
  const run = { counterfactual: o.counterfactual !== false, rerank: o.rerank !== undefined, mode: o.mode };
  return FUNNEL_STAGES.map((s) => s.id).filter((id) => stageMeasured(id, run));
}

/** Validates option combinations before anything runs (a floor or baseline on what will not be measured is an error). */
export function checkEvalOptions(options: EvalOptions): void {
  const o = withEvalDefaults(options);
  checkShardOptions(o);
  // Stage names before anything runs (the registry's); the run's own stages are checked again on its report (src/eval/gate/stage-gate.ts).
  for (const [flag, t] of [
    ["--gate min-stage", o.minStage],
    ["--gate max-stage-drop", o.maxStageDrop],
  ] as const)
    for (const stage of Object.keys(t ?? {}))
      if (!expectedStages(o).includes(stage))
        throw new InvalidArgumentError(
          flag,
          `one of the stages this run will have (${expectedStages(o).join(", ")})`,
          stage,
        );
  resolveStoreChoice(o.store); // the store vocabulary: auto, local, memory, none or a URL (exit 2 otherwise)
  if (!(RETRIEVAL_MODES as readonly string[]).includes(o.mode))
    throw new InvalidArgumentError("retrieval.mode", RETRIEVAL_MODES.join(" | "), o.mode);
  checkLocaleOptions(o.locale);
  if (o.store === "none") {
    const why = `${NO_STORE}: --store none skips retrieval, and every retrieval and answer-side key depends on it`;
    for (const { option, flag, key } of FLOOR_OPTIONS)
      if (o[option] !== undefined)
        throw new NotMeasuredError(key, `${why}, so --gate ${flag.slice(2)} cannot be checked`);
    if (o.updateBaseline)
      throw new NotMeasuredError(
        HIT_KEY,
        `${NO_STORE}: a baseline of a store-less run would hold no retrieval numbers`,
      );
    for (const [flag, v] of [
      ["--baseline", o.baseline],
      ["--gate max-drop", o.maxDrop],
      ["--gate max-flips", o.maxFlips],
    ] as const)
      if (v !== undefined) throw new NotMeasuredError(HIT_KEY, `${why}, so ${flag} has nothing to compare`);
    if (o.rerank !== undefined)
      throw new InvalidArgumentError("retrieval.rerank", "unset with --store none (nothing is retrieved)", o.rerank);
  }
  checkRepeatOptions(o.repeat, o.maxFlaky);
  if ((o.workers ?? 1) > 1 && o.judge !== undefined)
    throw new InvalidArgumentError(
      "run.workers",
      "1 with run.judge (the judge's chat model lives in this thread)",
      o.workers,
    );
  checkBaselineWriting(o); // a filtered run, or a tolerance, with --update-baseline (./run-checks.ts)
}

/** `--repeat` a positive integer; `--max-flaky` only with `--repeat N`, N ≥ 2 (InvalidArgumentError, exit 2). The same rule for retrace's graph and `--graph`. */
export function checkRepeatOptions(repeat: number | undefined, maxFlaky: number | undefined): void {
  const n = repeat ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > MAX_REPEAT)
    throw new InvalidArgumentError("--repeat", `a positive integer, at most ${MAX_REPEAT}`, repeat);
  if (maxFlaky !== undefined && n < 2)
    throw new InvalidArgumentError(
      "--gate max-flaky",
      "used with --repeat N, N ≥ 2 (a flaky turn is hit in some repeats and missed in others: one run cannot show one)",
      `--gate max-flaky=${maxFlaky} with ${n} run`,
    );
}

/** The baseline file the options name: `baseline`, else `<kb>/eval/baseline.json`. */
export function baselineFileFor(o: Pick<EvalOptions, "baseline" | "kb">): string {
  return o.baseline ?? defaultBaselineFile(resolveDataPaths(o).kb);
}

/** What an eval checked before starting a store. */
export interface EvalPlan {
  cases: EvalCase[];
  datasetHash: string;
  baseline: Baseline | null;
  /** The KB and cases as validated here; the system reuses them. */
  data: LoadedData;
  /** The `--quarantine` file, read and checked against the cases. */
  quarantine?: Quarantine;
}

/**
 * Everything checkable without a store, before one starts: the data (KB and
 * cases valid), case ids, floor scopes (a locale of the selected cases, or
 * tune/holdout only with a split file), and the baseline — read, and
 * checked against the dataset, subset, k and configuration, with advice
 * naming the right command. Throws typed errors (exit 2).
 */
export async function planEval(options: EvalOptions): Promise<EvalPlan> {
  const o = withEvalDefaults(options);
  checkEvalOptions(o);
  const paths = resolveDataPaths(o);
  const data = await loadData(
    paths.kb,
    paths.cases,
    o.maxCardBytes !== undefined ? { maxCardBytes: o.maxCardBytes } : {},
  );
  const cases = selectRunCases(data.cases, o);
  const split = data.split; // split.json beside the cases file, validated with them
  // Scope names against the locales of the selected cases (turn stubs carry what checkScope reads).
  const stubs = cases.map((c) => ({
    locale: c.locale,
    kind: c.kind,
    ...(split !== null ? { part: split.partOf.get(c.id) } : {}),
  }));
  for (const { option, flag } of FLOOR_OPTIONS) {
    const v = o[option];
    if (v === undefined || typeof v === "number") continue;
    for (const scope of Object.keys(v)) {
      if ((scope === "tune" || scope === "holdout") && split === null)
        throw new InvalidArgumentError(
          `--gate ${flag.slice(2)} scope "${scope}"`,
          `used with a tune/holdout split file (${splitFileFor(paths.cases)} does not exist)`,
          scope,
        );
      checkScope({ turns: stubs as never }, scope, `--gate ${flag.slice(2)}`);
    }
  }
  const recorded = o.replay === "recorded";
  const datasetHashOfRun =
    cases.length === data.cases.length && !recorded ? data.hashes.dataset : runDatasetHash(cases, o.replay);
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
      gates: [
        ...(o.maxDrop !== undefined ? [`max-drop=${o.maxDrop}`] : []),
        ...(o.maxFlips !== undefined ? [`max-flips=${o.maxFlips}`] : []),
        ...Object.entries(o.maxStageDrop ?? {}).map(([stage, x]) => `max-stage-drop=${stage}=${x}`),
      ],
    };
    const plan = {
      datasetHash: datasetHashOfRun,
      fullDatasetHash: recorded ? runDatasetHash(data.cases, o.replay) : data.hashes.dataset,
      selected: cases.length,
      total: data.cases.length,
    };
    checkBaselineBeforeRun(baseline, intent, plan, await predictEmbedderId(o.embedder));
    checkBaselineTurns(baseline, file, data.cases);
  }
  // The quarantine file, checked against every case of the cases file (not only the selected ones): exit 2 naming file and line.
  const quarantine = await readRunQuarantine(o.quarantine, data.cases);
  return { cases, datasetHash: datasetHashOfRun, baseline, data, ...(quarantine !== undefined ? { quarantine } : {}) };
}
