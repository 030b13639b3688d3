/**
 * Use-case: `retrace tune` (`runTune` for library users) over the eval
 * cases' `tune` part (all cases when no split exists), and the
 * cross-validation it shares with `retrace beir --tune`
 * (`crossValidateCandidates`; docs/fusion-and-tuning.md). Searches fusion
 * method and weights, RRF k, dense/BM25 depths and BM25 k1/b by k-fold
 * cross-validation over cases (folds stratified by locale, seeded); the
 * outcome holds the cross-validated score of the selection with a paired
 * test against the current defaults, and the configuration file that
 * `retrace eval --config` and `retrace beir --config` read (written by the
 * caller: `configToJSON`).
 */
import { checkGivenSettings } from "./settings/read.js";
import { InvalidArgumentError } from "../errors.js";
import type { ConfigFile } from "../research/tune-config.js";
import type { PairedComparison } from "../eval/stats/bootstrap.js";
import {
  DEFAULT_GRID,
  bm25Key,
  crossValidate,
  expandGrid,
  gridAround,
  scoreMatrix,
  type Candidate,
  type Grid,
  type TuneUnit,
} from "../research/tune.js";
import { allEvaluators } from "../eval/measures/evaluators.js";
import { ndcgAtK } from "../eval/measures/metrics.js";
import { OWN_GRAPH_CAPTURE } from "./own-graph/parallel.js";
import { sweepCheckpointer } from "./own-graph/reference-serde.js";
import { runGraphSweep } from "../eval/sweep/external-graph.js";
import { defaultSplitFile, loadSplit } from "../kb/split.js";
import type { Locale } from "../kb/types.js";
import { log } from "../log.js";
import { BM25Index } from "../retrieval/bm25.js";
import type { HybridRetriever } from "../retrieval/hybrid.js";
import { dedupeParents, topK } from "../retrieval/parents.js";
import { resolveStoreChoice } from "../system.js";
import { resolveDataPaths } from "./data.js";
import { graphFor, openEvalSystem } from "./eval.js";
import { EVAL_DEFAULTS } from "./eval-plan.js";
import { NO_PROGRESS, type ProgressFactory, type UseCaseHooks } from "./progress.js";
import { syntheticTuningGuard, withSyntheticWarning } from "./synthetic-guard.js";

/** Cross-validation folds unless told otherwise. */
export const DEFAULT_FOLDS = 5;

/** Per-locale configurations are searched only when every locale has at least this many cases with gold. */
export const MIN_CASES_PER_LOCALE = 30;

/**
 * The tuned configuration replaces the defaults only when its
 * cross-validated score beats theirs by at least this much (the paired mean
 * difference over groups, nDCG) **and** the paired 95% bootstrap interval of
 * that difference lies above 0. Otherwise `retrace tune` says so and writes
 * the defaults (or nothing, `--keep-defaults`): a search over a few hundred
 * configurations on a few dozen cases finds one that looks better by chance,
 * and the cross-validated score is the honest estimate of what it is worth
 * (docs/fusion-and-tuning.md).
 */
export const TUNE_MIN_GAIN = 0.005;

/** Whether the tuned configuration was adopted, and why (one sentence with the numbers). */
export interface TuneDecision {
  adopted: boolean;
  reason: string;
  minGain: number;
}

/** The adoption rule (TUNE_MIN_GAIN): gain ≥ minGain and the interval's lower end > 0. */
export function tuneDecision(paired: PairedComparison | null, minGain: number = TUNE_MIN_GAIN): TuneDecision {
  if (paired === null)
    return { adopted: false, reason: "no paired comparison (fewer than 2 groups): the defaults are kept", minGain };
  const f = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(4)}`;
  const diff = `${f(paired.diff)}${paired.ci95 === null ? " (no interval)" : ` [${f(paired.ci95[0])}, ${f(paired.ci95[1])}]`}`;
  const adopted = paired.diff >= minGain && paired.ci95 !== null && paired.ci95[0] > 0;
  return {
    adopted,
    reason: adopted
      ? `the tuning beats the defaults by ${diff} cross-validated (≥ ${minGain} with the 95% interval above 0): the tuned configuration is written`
      : `the tuning does not beat the defaults by ≥ ${minGain} with the 95% interval above 0 (cross-validated, tuned − defaults ${diff}): the defaults are kept`,
    minGain,
  };
}

/** What a cross-validated selection is run and described with. */
export interface CrossValidationSettings {
  folds: number;
  seed: number;
  /** What the score is ("nDCG@5 over cards, per case"). */
  metric: string;
  /** Where the cases came from (split part, or all cases). */
  source: string;
}

/** The outcome of a tuning: the configuration chosen and the evidence for it. */
export interface TuneOutcome extends CrossValidationSettings {
  /** The configuration file (the best candidate on all groups, and how it was tuned). */
  config: ConfigFile;
  cv: ReturnType<typeof crossValidate>;
  candidates: Candidate[];
  /** Why one configuration for all locales is written. */
  perLocaleNote: string;
  /** Tuned or defaults (TUNE_MIN_GAIN); `config` holds the defaults when not adopted. */
  decision: TuneDecision;
  /** Set when the tuning ran on synthetic cases only (`--allow-synthetic`; src/app/synthetic-guard.ts). */
  warning?: string;
}

/** The candidate the retriever applies today (candidate 0 of every search). */
export function currentCandidate(retriever: HybridRetriever, denseK: number, bm25K: number): Candidate {
  const d = retriever.defaults;
  return {
    fusion: d.fusion,
    rrfK: d.rrfK,
    weights: { ...d.weights },
    signalsShift: d.signalsShift,
    denseK,
    bm25K,
    bm25: { k1: retriever.bm25.k1, b: retriever.bm25.b },
  };
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

/** Scores every candidate on every unit, cross-validates the choice over the groups and builds the configuration file. */
export function crossValidateCandidates(
  units: readonly TuneUnit[],
  groups: ReadonlyArray<{ id: string; stratum: string }>,
  candidates: readonly Candidate[],
  o: CrossValidationSettings,
  progress: ProgressFactory = NO_PROGRESS,
): TuneOutcome {
  const p = progress("tune", "configurations");
  let matrix: number[][];
  try {
    matrix = scoreMatrix(
      units,
      candidates,
      groups.map((g) => g.id),
      (d, t) => p.update(d, t),
    );
  } finally {
    p.stop();
  }
  const cv = crossValidate(matrix, groups, o.folds, o.seed);
  const decision = tuneDecision(cv.paired);
  // Never a worse file silently: without a clear cross-validated gain the defaults (candidate 0) are what is written.
  const final = candidates[decision.adopted ? cv.final : 0] as Candidate;
  const strata = new Map<string, number>();
  for (const g of groups) strata.set(g.stratum, (strata.get(g.stratum) ?? 0) + 1);
  const perLocaleNote =
    strata.size > 1 && [...strata.values()].every((n) => n >= MIN_CASES_PER_LOCALE)
      ? `every locale has ≥ ${MIN_CASES_PER_LOCALE} cases, but one configuration for all locales is written (per-locale search is not implemented yet)`
      : `one configuration for all locales (per-locale configurations need ≥ ${MIN_CASES_PER_LOCALE} cases with gold in every locale; have ${[
          ...strata.entries(),
        ]
          .sort()
          .map(([s, n]) => `${s} ${n}`)
          .join(", ")})`;
  const config: ConfigFile = {
    version: 1,
    retrieval: {
      fusion: final.fusion,
      rrfK: final.rrfK,
      weights: final.weights,
      denseK: final.denseK,
      bm25K: final.bm25K,
      bm25: final.bm25,
    },
    tuned: {
      by: "retrace tune: k-fold cross-validation by case, folds stratified by locale",
      metric: o.metric,
      cases: o.source,
      folds: o.folds,
      seed: o.seed,
      candidates: candidates.length,
      n: cv.n,
      cvScore: round(cv.cvScore),
      defaultsScore: round(cv.defaultScore),
      pairedDiff: cv.paired === null ? null : round(cv.paired.diff),
      pairedP: cv.paired === null ? null : round(cv.paired.pValue),
      pairedCi95: cv.paired?.ci95 === null || cv.paired === null ? null : cv.paired.ci95.map(round),
      written: decision.adopted ? "tuned" : "defaults",
      decision: decision.reason,
    },
  };
  return { ...o, config, cv, candidates: [...candidates], perLocaleNote, decision };
}

/** The options of a tuning over a KB's eval cases. */
export interface TuneOptions {
  /** `auto` (default), `local`, `memory` or a Chroma URL (tuning compares retrievals: not `none`). */
  store?: string;
  kb?: string;
  cases?: string;
  /** Default `auto`. */
  embedder?: string;
  dataDir?: string;
  /** Cards scored per turn (nDCG@k; default 5). */
  k?: number;
  /** Cross-validation folds (default DEFAULT_FOLDS, 5). */
  folds?: number;
  /** Seed of the folds, intervals and tests (default 42). */
  seed?: number;
  maxCardBytes?: number;
  /** Tune even when every case is synthetic (refused otherwise, exit 2; docs/synthetic-cases.md#guard-rails). */
  allowSynthetic?: boolean;
}

/**
 * The tuning: one sweep through the real graph at the grid's largest depths
 * (each turn's contextualized query and dense list), every candidate scored
 * per case, cross-validated. Writes nothing.
 */
export async function runTune(o: TuneOptions, hooks: UseCaseHooks = {}): Promise<TuneOutcome> {
  checkGivenSettings("tune", o, "runTune options"); // as the CLI checks them (src/app/settings/read.ts)
  const paths = resolveDataPaths(o);
  const store = o.store ?? EVAL_DEFAULTS.store;
  const k = o.k ?? EVAL_DEFAULTS.k;
  const progress = hooks.progress ?? NO_PROGRESS;
  // Tuning compares retrievals: a store-less system has none (a usage error, before anything starts).
  if (resolveStoreChoice(store).kind === "none")
    throw new InvalidArgumentError("--store", "auto, local, memory or a Chroma URL (tune needs retrieval)", store);
  const system = await openEvalSystem({ ...o, store });
  try {
    const retriever = system.retriever;
    if (retriever === null) throw new Error("a store-backed system has a retriever");
    const split = await loadSplit(defaultSplitFile(paths.kb), system.cases);
    let cases = system.cases;
    let source: string;
    if (split === null) {
      source = `all ${cases.length} cases of ${paths.cases} (no split file at ${defaultSplitFile(paths.kb)}; figures on these cases are then not held out)`;
      log.warn(`no tune/holdout split at ${defaultSplitFile(paths.kb)}: tuning uses all ${cases.length} cases`);
    } else {
      cases = cases.filter((c) => split.partOf.get(c.id) === "tune");
      source = `the tune part of ${split.file} (${cases.length} of ${system.cases.length} cases)`;
      log.info(`tuning on the tune part of ${split.file}: ${cases.length} cases`);
    }
    // Synthetic-only cases misorder lexical and semantic retrieval: refused unless allowed (then the warning travels with the config).
    const syntheticWarning = syntheticTuningGuard(cases, o.allowSynthetic === true, "retrace tune");
    if (syntheticWarning !== null) log.warn(syntheticWarning);
    const depth = Math.max(...DEFAULT_GRID.denseK, ...DEFAULT_GRID.bm25K);
    // One sweep through the real graph at the largest depths: each turn's (contextualized) query and dense list.
    const p = progress("tune: sweep", "cases");
    let sweep;
    try {
      sweep = await runGraphSweep({
        graph: graphFor(system, { k, denseK: depth, bm25K: depth, mode: "hybrid" }, sweepCheckpointer()),
        ...OWN_GRAPH_CAPTURE,
        cases,
        evaluators: allEvaluators({ k }),
        knownIds: new Set(system.kb.byId.keys()),
        k,
        concurrency: 1,
        onCaseDone: (d, t) => p.update(d, t),
      });
    } finally {
      p.stop();
    }
    const current = currentCandidate(retriever, retriever.defaults.denseK, retriever.defaults.bm25K);
    // The grid covers the defaults' neighbourhood whatever the embedder (gridAround).
    const grid: Grid = gridAround(DEFAULT_GRID, current);
    // The grid's indexes analyse as the system's retriever does (the KB's analyzers.json).
    const indexes = new Map(grid.bm25.map((b) => [bm25Key(b), BM25Index.build(system.chunks, b, system.analyzers)]));
    const units: TuneUnit[] = [];
    for (const { report: t, retrieval } of sweep) {
      if (t.gold.length === 0) continue;
      const trace = retrieval?.trace;
      if (trace === undefined || trace.stages.dense === undefined) continue;
      const gold = new Set(t.gold);
      const bm25 = new Map(
        [...indexes].map(([key, idx]) => [key, idx.search(trace.query, { topN: depth, locale: t.locale as Locale })]),
      );
      units.push({
        group: t.caseId,
        stratum: t.locale,
        dense: trace.stages.dense,
        bm25,
        evaluate: (fused) =>
          ndcgAtK(
            topK(dedupeParents(fused), k).map((r) => r.id),
            gold,
            k,
          ),
      });
    }
    const groupIds = [...new Set(units.map((u) => u.group))].sort();
    const stratumOf = new Map(units.map((u) => [u.group, u.stratum]));
    const groups = groupIds.map((id) => ({ id, stratum: stratumOf.get(id) as string }));
    const candidates = expandGrid(grid, current);
    const outcome = crossValidateCandidates(
      units,
      groups,
      candidates,
      {
        folds: o.folds ?? DEFAULT_FOLDS,
        seed: o.seed ?? EVAL_DEFAULTS.seed,
        metric: `nDCG@${k} over cards (binary gain), mean of a case's gold-bearing turns, then over cases`,
        source,
      },
      progress,
    );
    return withSyntheticWarning(outcome, syntheticWarning);
  } finally {
    await system.close();
  }
}
