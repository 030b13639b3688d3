/**
 * `retrace tune` (the shipped eval set's `tune` part, or all cases when no
 * split exists) and the reporting shared with `retrace beir --tune`
 * (docs/fusion-and-tuning.md). Searches fusion method and weights, RRF k,
 * dense/BM25 depths and BM25 k1/b by k-fold cross-validation over cases
 * (folds stratified by locale, seeded), prints the cross-validated score of
 * the selection with a paired test against the current defaults, and writes a
 * configuration file that `retrace eval --config` and `retrace beir --config`
 * read. Progress on stderr; result on stdout.
 */
import type { Command } from "commander";
import { writeFileAtomic } from "../atomic.js";
import { allEvaluators } from "../eval/measures/evaluators.js";
import { ndcgAtK } from "../eval/measures/metrics.js";
import { runSweep } from "../eval/sweep/runner.js";
import { configToJSON, type ConfigFile } from "../eval/ir/tune-config.js";
import { DEFAULT_GRID, bm25Key, candidateKey, crossValidate, expandGrid, scoreMatrix, type Candidate, type Grid, type TuneUnit } from "../eval/ir/tune.js";
import { defaultSplitFile, loadSplit } from "../kb/split.js";
import type { Locale } from "../kb/types.js";
import { log } from "../log.js";
import { BM25Index } from "../retrieval/bm25.js";
import type { HybridRetriever } from "../retrieval/hybrid.js";
import { dedupeParents, topK } from "../retrieval/parents.js";
import { resolveDataPaths } from "./check.js";
import { InvalidArgumentError } from "../errors.js";
import { resolveStoreChoice } from "../system.js";
import { graphFor, openSessionFor } from "./eval.js";
import { action, out, outText } from "./io.js";
import { addMaxCardBytesOption, intOption, positiveIntOption, seedOption } from "./options.js";
import { progressReporter } from "./progress.js";

/** Per-locale configurations are searched only when every locale has at least this many cases with gold. */
export const MIN_CASES_PER_LOCALE = 30;

export interface TuneReportOptions {
  folds: number;
  seed: number;
  out?: string;
  json?: boolean;
  /** What the score is ("nDCG@5 over cards, per case"). */
  metric: string;
  /** Where the cases came from (split part, or all cases). */
  source: string;
}

/** The candidate the retriever applies today (candidate 0 of every search). */
export function currentCandidate(retriever: HybridRetriever, denseK: number, bm25K: number): Candidate {
  const d = retriever.defaults;
  return { fusion: d.fusion, rrfK: d.rrfK, weights: { ...d.weights }, denseK, bm25K, bm25: { k1: retriever.bm25.k1, b: retriever.bm25.b } };
}

/** Scores the grid, cross-validates, prints the result and writes the config file. */
export async function tuneAndReport(units: readonly TuneUnit[], groups: ReadonlyArray<{ id: string; stratum: string }>, candidates: readonly Candidate[], o: TuneReportOptions): Promise<number> {
  const progress = progressReporter("tune", "configurations");
  let matrix: number[][];
  try {
    matrix = scoreMatrix(units, candidates, groups.map((g) => g.id), (d, t) => progress.update(d, t));
  } finally {
    progress.stop();
  }
  const cv = crossValidate(matrix, groups, o.folds, o.seed);
  const final = candidates[cv.final] as Candidate;
  const strata = new Map<string, number>();
  for (const g of groups) strata.set(g.stratum, (strata.get(g.stratum) ?? 0) + 1);
  const perLocaleNote =
    strata.size > 1 && [...strata.values()].every((n) => n >= MIN_CASES_PER_LOCALE)
      ? `every locale has ≥ ${MIN_CASES_PER_LOCALE} cases, but one configuration for all locales is written (per-locale search is not implemented yet)`
      : `one configuration for all locales (per-locale configurations need ≥ ${MIN_CASES_PER_LOCALE} cases with gold in every locale; have ${[...strata.entries()].sort().map(([s, n]) => `${s} ${n}`).join(", ")})`;
  const config: ConfigFile = {
    version: 1,
    retrieval: { fusion: final.fusion, rrfK: final.rrfK, weights: final.weights, denseK: final.denseK, bm25K: final.bm25K, bm25: final.bm25 },
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
    },
  };
  if (o.out !== undefined) await writeFileAtomic(o.out, configToJSON(config));
  if (o.json) {
    out(JSON.stringify({ version: 1, config, cv: { ...cv, heldOut: undefined, chosenPerFold: cv.chosenPerFold.map((i) => candidateKey(candidates[Number(i)] as Candidate)) } }, null, 2));
    return 0;
  }
  const p = cv.paired;
  outText(
    [
      `Tuned on ${o.source}: ${cv.n} groups with gold, ${candidates.length} configurations, ${o.folds}-fold cross-validation (seed ${o.seed}).`,
      `Metric: ${o.metric}.`,
      `Current defaults: ${candidateKey(candidates[0] as Candidate)} → ${cv.defaultScore.toFixed(4)} (nothing fitted).`,
      `Cross-validated score of the tuning (each group scored by the configuration chosen on the other folds): ${cv.cvScore.toFixed(4)}`,
      p === null
        ? "Paired test: n/a"
        : `Paired, tuned − defaults over groups: ${p.diff >= 0 ? "+" : ""}${p.diff.toFixed(4)}${p.ci95 === null ? "" : ` [${p.ci95[0].toFixed(4)}, ${p.ci95[1].toFixed(4)}]`} p=${p.pValue.toFixed(4)} (sign-flip randomization, ${p.method}; bootstrap CI over groups, seed ${o.seed})`,
      `Chosen per fold: ${cv.chosenPerFold.map((i) => candidateKey(candidates[Number(i)] as Candidate)).join(" | ")}`,
      `Written configuration (best on all ${cv.n} groups; its in-sample score is not a held-out figure and is not shown): ${candidateKey(final)}`,
      perLocaleNote,
      o.out !== undefined ? `Config file: ${o.out}` : "No --out given: the configuration was not written.",
    ].join("\n"),
  );
  return 0;
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

interface TuneOptions {
  store: string;
  kb?: string;
  cases?: string;
  embedder: string;
  dataDir?: string;
  k: number;
  folds: number;
  seed: number;
  out?: string;
  json?: boolean;
  maxCardBytes?: number;
}

export async function tuneCommand(o: TuneOptions): Promise<number> {
  const paths = resolveDataPaths(o);
  // Tuning compares retrievals: a store-less session has none (a usage error, before anything starts).
  if (resolveStoreChoice(o.store).kind === "none") throw new InvalidArgumentError("--store", "auto, local, memory or a Chroma URL (tune needs retrieval)", o.store);
  const session = await openSessionFor({ ...o, store: o.store });
  try {
    const retriever = session.retriever;
    if (retriever === null) throw new Error("a store-backed session has a retriever");
    const split = await loadSplit(defaultSplitFile(paths.kb), session.cases);
    let cases = session.cases;
    let source: string;
    if (split === null) {
      source = `all ${cases.length} cases of ${paths.cases} (no split file at ${defaultSplitFile(paths.kb)}; figures on these cases are then not held out)`;
      log.warn(`no tune/holdout split at ${defaultSplitFile(paths.kb)}: tuning uses all ${cases.length} cases`);
    } else {
      cases = cases.filter((c) => split.partOf.get(c.id) === "tune");
      source = `the tune part of ${split.file} (${cases.length} of ${session.cases.length} cases)`;
      log.info(`tuning on the tune part of ${split.file}: ${cases.length} cases`);
    }
    const depth = Math.max(...DEFAULT_GRID.denseK, ...DEFAULT_GRID.bm25K);
    // One sweep through the real graph at the largest depths: each turn's (contextualized) query and dense list.
    const progress = progressReporter("tune: sweep", "cases");
    let sweep;
    try {
      sweep = await runSweep({
        graph: graphFor(session, { k: o.k, denseK: depth, bm25K: depth, mode: "hybrid" }),
        cases,
        evaluators: allEvaluators({ k: o.k }),
        knownIds: new Set(session.kb.byId.keys()),
        storeBacked: true,
        traceSource: "state",
        durability: "exit",
        concurrency: 1,
        onCaseDone: (d, t) => progress.update(d, t),
      });
    } finally {
      progress.stop();
    }
    const grid: Grid = DEFAULT_GRID;
    // The grid's indexes analyse as the session's retriever does (the KB's analyzers.json).
    const indexes = new Map(grid.bm25.map((p) => [bm25Key(p), BM25Index.build(session.chunks, p, session.analyzers)]));
    const units: TuneUnit[] = [];
    for (const t of sweep.turns) {
      if (t.gold.length === 0) continue;
      const trace = sweep.traces.forTurn(t.caseId, t.turn);
      if (trace === undefined || trace.stages.dense === undefined) continue;
      const gold = new Set(t.gold);
      const bm25 = new Map([...indexes].map(([key, idx]) => [key, idx.search(trace.query, { topN: depth, locale: t.locale as Locale })]));
      units.push({
        group: t.caseId,
        stratum: t.locale,
        dense: trace.stages.dense,
        bm25,
        evaluate: (fused) => ndcgAtK(topK(dedupeParents(fused), o.k).map((r) => r.id), gold, o.k),
      });
    }
    const groupIds = [...new Set(units.map((u) => u.group))].sort();
    const stratumOf = new Map(units.map((u) => [u.group, u.stratum]));
    const groups = groupIds.map((id) => ({ id, stratum: stratumOf.get(id) as string }));
    const candidates = expandGrid(grid, currentCandidate(retriever, retriever.defaults.denseK, retriever.defaults.bm25K));
    return await tuneAndReport(units, groups, candidates, {
      folds: o.folds,
      seed: o.seed,
      ...(o.out !== undefined ? { out: o.out } : {}),
      ...(o.json ? { json: true } : {}),
      metric: `nDCG@${o.k} over cards (binary gain), mean of a case's gold-bearing turns, then over cases`,
      source,
    });
  } finally {
    await session.close();
  }
}

export function register(program: Command): void {
  const cmd = program
    .command("tune")
    .description("Cross-validated search of fusion method, weights, RRF k, depths and BM25 k1/b on the eval cases' tune part; writes a config file")
    .option("--store <auto|local|url|memory>", "auto: CHROMA_URL if set, else local; local: a Chroma started (and stopped) by retrace; a Chroma URL; memory: exact in-process dense index", "auto")
    .option("--kb <dir>", "knowledge-base folder", "kb")
    .option("--cases <file>", "eval cases JSONL (default <kb>/eval/cases.jsonl)")
    .option("--embedder <auto|builtin|lsa|model>", "dense embedder (lsa: corpus-fit LSA)", "auto")
    .option("--data-dir <dir>", "data folder of the local Chroma (default .retrace/chroma)")
    .option("-k, --k <n>", "cards scored per turn (nDCG@k)", positiveIntOption("-k"), 5)
    .option("--folds <n>", "cross-validation folds", intOption("--folds", { min: 2, note: "cross-validation needs at least 2" }), 5)
    .option("--seed <n>", "seed of the folds, intervals and tests", seedOption(), 42)
    .option("--out <file>", "write the chosen configuration there (JSON; read by retrace eval --config)")
    .option("--json", "print JSON instead of text");
  addMaxCardBytesOption(cmd).action(action((o: TuneOptions) => tuneCommand(o)));
}
