/**
 * Use-case: a BEIR-layout dataset benchmarked through the real retrieval stack (`retrace beir DIR`, `runBeir`;
 * docs/fusion-and-tuning.md). The corpus is ingested into Chroma (self-started, or a server URL; idempotent, so a
 * re-run reuses the collection) and its retriever built by the composition root's factory; then every judged query
 * runs through the HybridRetriever in each mode (bm25, dense, hybrid with the current or config-file settings, and
 * hybrid+rerank with a reranker). Each mode's ranking is scored with retrace's trec_eval-exact scorer: nDCG@10 (graded
 * gains), R@100, MRR@10, success@10, each with n and a bootstrap interval over queries, with queries/s and p50/p95
 * latency; with `runOut`, every mode's TREC run is written there once all modes have run (their paths checked before
 * anything starts; all files or none: src/output-set.ts). `tuneBeir` cross-validates the hybrid settings on the
 * dataset's queries instead (as `retrace tune` does).
 */
import path from "node:path";
import { InvalidArgumentError } from "../errors.js";
import {
  beirChunks,
  formatTrecRun,
  loadBeirDataset,
  marginOverBestStage,
  scoreBeirRun,
  toRun,
  type BeirDataset,
  type BeirScores,
  type MarginMeasure,
  type StageMargin,
} from "../research/beir.js";
import type { RetrievalConfig } from "../research/tune-config.js";
import { resolveSettings } from "./settings/read.js";
import { DEFAULT_QUERY_SETTINGS } from "../research/synthetic.js";
import { syntheticQueries } from "../research/synthetic-cases.js";
import {
  DEFAULT_GRID,
  bm25Key,
  expandGrid,
  gridAround,
  type Candidate,
  type Grid,
  type TuneUnit,
} from "../research/tune.js";
import { ndcgAtK } from "../eval/measures/metrics.js";
import { quantileSorted } from "../eval/stats/bootstrap.js";
import { log } from "../log.js";
import { checkOutputs, writeOutputs, type Output } from "../output-set.js";
import { DEFAULT_ANALYZERS } from "../retrieval/analyzer.js";
import { BM25Index } from "../retrieval/bm25.js";
import { requestTimeoutMs } from "../retrieval/chroma-faults.js";
import type { HybridRetriever, HybridRetrieverOptions } from "../retrieval/hybrid.js";
import type { RetrievalMode } from "../retrieval/types.js";
import {
  buildRetriever,
  lsaStateDir,
  openIngestedDense,
  resolveStoreChoice,
  type EmbedderSetup,
  type IngestedDense,
} from "../system.js";
import { scoreReportPart, splitBeirQueries, type BeirSplitReport } from "./beir-split.js";
import { EVAL_DEFAULTS } from "./eval-plan.js";
import { NO_PROGRESS, type ProgressFactory, type UseCaseHooks } from "./progress.js";
import { crossValidateCandidates, currentCandidate, DEFAULT_FOLDS, type TuneOutcome } from "./tune.js";

export {
  BEIR_SPLIT_TUNE_SHARE,
  scoreReportPart,
  splitBeirQueries,
  splitQueryIds,
  type BeirSplit,
  type BeirSplitReport,
} from "./beir-split.js";

export const BEIR_MODES = ["bm25", "dense", "hybrid", "hybrid+rerank"] as const;
export type BeirMode = (typeof BEIR_MODES)[number];

/** The options of a BEIR run. */
export interface BeirOptions {
  /** `auto` (default), `local` or a Chroma URL (the corpus is ingested into a Chroma store). */
  store?: string;
  dataDir?: string;
  /** Default `auto` (lsa: corpus-fit LSA, fitted on the corpus). */
  embedder?: string;
  /** A cross-encoder spec: hybrid+rerank is run too. */
  rerank?: string;
  /** Settings as `--config` takes them: a JSON file (retrace tune writes one) or an inline JSON object (src/app/settings/read.ts). */
  config?: string;
  /** Retrieval settings already read (the CLI's `--config`, src/cli/settings.ts): used instead of reading `config`. */
  retrievalConfig?: RetrievalConfig;
  /** The modes run, in this order (default: bm25, dense, hybrid, and hybrid+rerank with a reranker). */
  modes?: readonly string[];
  /** Documents retrieved per query, and asked of each branch (hybrid: a config file's denseK/bm25K win); default 100. */
  depth?: number;
  /** A folder to write one TREC run file per mode into (`<mode>.trec`). */
  runOut?: string;
  /** Seed of the bootstrap intervals and paired tests (default 42). */
  seed?: number;
  /** Folds of `tuneBeir` (default 5). */
  folds?: number;
  /** Chroma request deadline, seconds (docs/reliability.md). */
  timeout?: number;
  /** `tuneBeir` on N synthetic known-item queries instead of the judged ones (`--tune --synthetic N --allow-synthetic`; docs/synthetic-cases.md). */
  tuneOnSynthetic?: number;
  /** `tuneBeir` on one part of the queries and scored on the other (`--tune --split`; `splitBeirQueries`). */
  split?: boolean;
}

/** The default depth (R@100 needs 100). */
export const BEIR_DEPTH = 100;

export interface ModeResult {
  mode: BeirMode;
  scores: BeirScores;
  ranked: Map<string, string[]>;
  timing: { queries: number; totalMs: number; qps: number; p50Ms: number; p95Ms: number };
}

/** A BEIR benchmark's results and what produced them. */
export interface BeirOutcome {
  data: BeirDataset;
  embedder: { id: string; description: string };
  /** The Chroma collection the corpus is in, and whether this run ingested it or found it up to date. */
  collection: string;
  ingestStatus: "up-to-date" | "ingested";
  /** The retriever's fusion settings and BM25 parameters; `signalsShift` (δ) when the fusion is `signals`, with `latent` (the LSA embedder's latent share, its chance baseline and κ) when the embedder has them. */
  settings: {
    fusion: string;
    rrfK: number;
    weights: { dense: number; bm25: number };
    signalsShift?: number;
    latent?: { share: number; chance: number; structure: number | null };
    bm25: { k1: number; b: number };
  };
  /** The config file's retrieval settings (`{}` without one). */
  retrievalConfig: RetrievalConfig;
  depth: number;
  seed: number;
  results: ModeResult[];
  /** Each fused mode run (hybrid, hybrid+rerank) against the better of bm25 and dense per measure, when both stages ran (the headline). */
  margins: FusedMargin[];
  /** Wall clock (ms): the embedder's fit or load (`embedder`, apart from the store), the store's write (embed + write, or the up-to-date check), ingest + BM25 index, all. */
  timing: {
    embedder: EmbedderSetup;
    storeWriteMs: number;
    ingestAndIndexMs: number;
    bm25BuildMs: number;
    totalMs: number;
  };
}

/** The LSA embedder's latent share, chance baseline and κ (`settings.latent`); nothing for other embedders. */
function latentOf(e: { latentShare?: number; chanceShare?: number; structure?: number }): {
  latent?: { share: number; chance: number; structure: number | null };
} {
  const round = (x: number) => Math.round(x * 1e4) / 1e4;
  // structure null: at full rank, nothing beyond chance to measure
  return e.latentShare !== undefined && e.chanceShare !== undefined
    ? {
        latent: {
          share: round(e.latentShare),
          chance: round(e.chanceShare),
          structure: e.structure === undefined ? null : round(e.structure),
        },
      }
    : {};
}

/** A fused mode's margin over its best stage (`marginOverBestStage`). */
export interface FusedMargin {
  mode: BeirMode;
  byMeasure: Record<MarginMeasure, StageMargin | null>;
}

/** The margin of every fused mode over the better stage, per measure (empty unless bm25 and dense both ran). */
export function fusedMargins(results: readonly ModeResult[], seed: number): FusedMargin[] {
  const of = (m: BeirMode) => results.find((r) => r.mode === m)?.scores;
  const bm25 = of("bm25");
  const dense = of("dense");
  if (bm25 === undefined || dense === undefined) return [];
  return results
    .filter((r) => r.mode === "hybrid" || r.mode === "hybrid+rerank")
    .map((r) => ({ mode: r.mode, byMeasure: marginOverBestStage({ bm25, dense }, r.scores, seed) }));
}

/** The fusion settings of a config file (method, RRF k, weights) as retriever defaults; unset keys stay unset (the embedder's, hybridDefaultsFor). */
export function fusionSettingsOf(
  config: RetrievalConfig,
): Pick<NonNullable<HybridRetrieverOptions["defaults"]>, "fusion" | "rrfK" | "weights"> {
  return {
    ...(config.fusion !== undefined ? { fusion: config.fusion } : {}),
    ...(config.rrfK !== undefined ? { rrfK: config.rrfK } : {}),
    ...(config.weights !== undefined ? { weights: config.weights } : {}),
  };
}

/** Runs every judged query in one mode; returns the ranking per query and the per-query latencies. */
export async function runMode(
  retriever: HybridRetriever,
  data: BeirDataset,
  mode: BeirMode,
  depth: number,
  onProgress?: (done: number, total: number) => void,
  hybridDepths: { denseK?: number; bm25K?: number } = {},
): Promise<{ ranked: Map<string, string[]>; latenciesMs: number[]; totalMs: number }> {
  const ranked = new Map<string, string[]>();
  const latenciesMs: number[] = [];
  const base: RetrievalMode = mode === "hybrid+rerank" ? "hybrid" : mode;
  const t0 = performance.now();
  let done = 0;
  onProgress?.(0, data.queries.length);
  for (const q of data.queries) {
    const t = performance.now();
    // Hybrid branches take a config file's denseK/bm25K when it sets them; single-branch modes always the depth.
    const denseK = base === "hybrid" ? (hybridDepths.denseK ?? depth) : depth;
    const bm25K = base === "hybrid" ? (hybridDepths.bm25K ?? depth) : depth;
    const trace = await retriever.retrieve(q.text, {
      mode: base,
      k: depth,
      denseK,
      bm25K,
      locale: "en",
      rerank: mode === "hybrid+rerank",
    });
    latenciesMs.push(performance.now() - t);
    ranked.set(q.id, trace.retrievedIds);
    onProgress?.(++done, data.queries.length);
  }
  return { ranked, latenciesMs, totalMs: performance.now() - t0 };
}

function timingOf(latenciesMs: readonly number[], totalMs: number): ModeResult["timing"] {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const n = sorted.length;
  return {
    queries: n,
    totalMs,
    qps: totalMs > 0 ? (n * 1000) / totalMs : 0,
    p50Ms: n === 0 ? 0 : quantileSorted(sorted, 0.5),
    p95Ms: n === 0 ? 0 : quantileSorted(sorted, 0.95),
  };
}

/** The modes to run: `modes` checked (known names; hybrid+rerank only with a reranker; at least one; duplicates dropped), else the default list. */
export function checkModes(modes: readonly string[] | undefined, rerank: boolean): BeirMode[] {
  const list = modes ?? (rerank ? ["bm25", "dense", "hybrid", "hybrid+rerank"] : ["bm25", "dense", "hybrid"]);
  for (const m of list)
    if (!(BEIR_MODES as readonly string[]).includes(m))
      throw new InvalidArgumentError("--modes", `a comma-separated list of ${BEIR_MODES.join(", ")}`, m);
  if (list.includes("hybrid+rerank") && !rerank)
    throw new InvalidArgumentError("--modes", "without hybrid+rerank unless --rerank is given", modes?.join(","));
  if (list.length === 0) throw new InvalidArgumentError("--modes", "at least one mode", modes?.join(","));
  return [...new Set(list)] as BeirMode[];
}

/** The store word: a Chroma store (the corpus is ingested into one). */
export function chromaChoice(store: string): { url?: string } {
  // The store vocabulary (docs/decisions/0006-one-composition-root-and-store-vocabulary.md); beir ingests into Chroma.
  const choice = resolveStoreChoice(store);
  if (choice.kind === "memory" || choice.kind === "none")
    throw new InvalidArgumentError(
      "--store",
      "auto, local or a Chroma URL (beir ingests the corpus into a Chroma store)",
      store,
    );
  return choice.url !== undefined ? { url: choice.url } : {};
}

/** The dataset, read and announced, and the config file's retrieval settings. */
async function readBeirInputs(
  dir: string,
  o: BeirOptions,
): Promise<{ data: BeirDataset; retrievalConfig: RetrievalConfig }> {
  // Its `retrieval` part: a BEIR corpus is one locale, so a `locales` part does not apply.
  const retrievalConfig = o.retrievalConfig ?? {};
  const data = await loadBeirDataset(dir);
  log.info(
    `BEIR ${dir}: ${data.corpus.length} documents, ${data.queries.length} judged queries, corpus ${data.corpusHash.slice(0, 12)}`,
  );
  return { data, retrievalConfig };
}

/** The corpus's retriever through the composition root's factory, over its vectors ingested into Chroma and read back for exact search (as retrace eval does: docs/determinism.md). */
export async function openBeirRetriever(
  data: BeirDataset,
  retrievalConfig: RetrievalConfig,
  o: BeirOptions,
  url: { url?: string },
  progress: ProgressFactory,
) {
  const depth = o.depth ?? BEIR_DEPTH;
  const chunks = beirChunks(data.corpus);
  let opened: IngestedDense | undefined;
  // From before the embedder is resolved: "ingest + BM25 index" includes an LSA fit (reported apart too: timing.embedder).
  const t0 = performance.now();
  let tBm25 = 0;
  const built = await buildRetriever({
    chunks,
    // A BEIR corpus has no analyzers.json: its BM25 index and LSA embedder analyse with the default profile.
    analyzers: DEFAULT_ANALYZERS,
    embedder: o.embedder ?? EVAL_DEFAULTS.embedder,
    stateDir: lsaStateDir(o.dataDir),
    reranker: o.rerank ?? null,
    requireReranker: true,
    ...(retrievalConfig.bm25 !== undefined ? { bm25Params: retrievalConfig.bm25 } : {}),
    // A config file's fusion, RRF k and weights (unset: the embedder's, hybridDefaultsFor); every depth the run's.
    defaults: { ...fusionSettingsOf(retrievalConfig), k: depth, denseK: depth, bm25K: depth },
    dense: async (embedder) => {
      const p = progress("ingest", "documents");
      try {
        opened = await openIngestedDense({
          ...url,
          ...(o.dataDir !== undefined ? { dataDir: o.dataDir } : {}),
          requestTimeoutMs: requestTimeoutMs(o.timeout),
          chunks,
          embedder,
          kbHash: data.corpusHash,
          onIngestProgress: (d, t) => p.update(d, t),
        });
      } finally {
        p.stop();
      }
      tBm25 = performance.now();
      return opened.dense;
    },
  });
  const bm25Ms = performance.now() - tBm25;
  return { built, chunks, store: opened as IngestedDense, t0, bm25Ms, ingestMs: performance.now() - t0 };
}

/** The benchmark: every mode over every judged query, scored; TREC run files written to `runOut`. */
export async function runBeir(dir: string, given: BeirOptions, hooks: UseCaseHooks = {}): Promise<BeirOutcome> {
  const o = await resolveSettings("beir", given, "runBeir options"); // as the CLI reads them (src/app/settings/read.ts)
  const url = chromaChoice(o.store ?? EVAL_DEFAULTS.store);
  const modes = checkModes(o.modes, o.rerank !== undefined);
  const depth = o.depth ?? BEIR_DEPTH;
  const seed = o.seed ?? EVAL_DEFAULTS.seed;
  const progress = hooks.progress ?? NO_PROGRESS;
  // The run files' paths, checked before anything is read or a store starts (exit 2); written together at the end.
  const runFiles =
    o.runOut === undefined
      ? []
      : modes.map((mode) => ({ option: "--run-out", path: path.join(o.runOut as string, `${mode}.trec`) }));
  await checkOutputs(runFiles);
  const { data, retrievalConfig } = await readBeirInputs(dir, o);
  const opened = await openBeirRetriever(data, retrievalConfig, o, url, progress);
  const runs: Output[] = [];
  let outcome: BeirOutcome;
  try {
    const { retriever } = opened.built;
    const results: ModeResult[] = [];
    for (const mode of modes) {
      const p = progress(mode, "queries");
      let r;
      try {
        r = await runMode(retriever, data, mode, depth, (d, t) => p.update(d, t), {
          ...(retrievalConfig.denseK !== undefined ? { denseK: retrievalConfig.denseK } : {}),
          ...(retrievalConfig.bm25K !== undefined ? { bm25K: retrievalConfig.bm25K } : {}),
        });
      } finally {
        p.stop();
      }
      const run = toRun(r.ranked, `retrace-${mode}`);
      const file = runFiles[results.length];
      if (file !== undefined) runs.push({ ...file, data: formatTrecRun(run) });
      results.push({
        mode,
        scores: scoreBeirRun(data.qrels, run, { seed }),
        ranked: r.ranked,
        timing: timingOf(r.latenciesMs, r.totalMs),
      });
    }
    const totalMs = performance.now() - opened.t0;
    const d = retriever.defaults;
    const { embedder } = opened.built.embedder;
    outcome = {
      data,
      embedder: { id: embedder.id, description: embedder.description },
      collection: opened.store.collection,
      ingestStatus: opened.store.ingested.status,
      settings: {
        fusion: d.fusion,
        rrfK: d.rrfK,
        weights: d.weights,
        ...(d.fusion === "signals" ? { signalsShift: d.signalsShift } : {}),
        ...latentOf(embedder),
        bm25: { k1: retriever.bm25.k1, b: retriever.bm25.b },
      },
      retrievalConfig,
      depth,
      seed,
      results,
      margins: fusedMargins(results, seed),
      timing: {
        embedder: opened.built.embedder.setup,
        storeWriteMs: opened.store.ingested.durationMs,
        ingestAndIndexMs: opened.ingestMs,
        bm25BuildMs: opened.bm25Ms,
        totalMs,
      },
    };
  } finally {
    await opened.store.close();
  }
  await writeOutputs(runs); // every mode's run file or none (src/output-set.ts)
  return outcome;
}

/**
 * The cross-validated search of retrace tune over the dataset's queries
 * (each query its own group; one stratum). Depths stay at the run's depth
 * (R@100 needs them); the metric is nDCG@10 with graded gains. Writes nothing.
 * With `split`, the search runs on the tune part only, and the reported part
 * is scored with the defaults and with what the tuning writes (`report`).
 */
export async function tuneBeir(
  dir: string,
  given: BeirOptions,
  hooks: UseCaseHooks = {},
): Promise<TuneOutcome & { report?: BeirSplitReport }> {
  const o = await resolveSettings("beir", given, "tuneBeir options"); // as the CLI reads them (src/app/settings/read.ts)
  const url = chromaChoice(o.store ?? EVAL_DEFAULTS.store);
  const depth = o.depth ?? BEIR_DEPTH;
  const seed = o.seed ?? EVAL_DEFAULTS.seed;
  const progress = hooks.progress ?? NO_PROGRESS;
  const { data: read, retrievalConfig } = await readBeirInputs(dir, o);
  const split = o.split === true ? await splitBeirQueries(read, seed) : undefined;
  if (split !== undefined) log.info(`--split: ${split.description}`);
  const tuneData = split?.tune ?? read;
  const data =
    o.tuneOnSynthetic === undefined
      ? tuneData
      : { ...tuneData, ...syntheticQueries(tuneData, o.tuneOnSynthetic, seed, DEFAULT_QUERY_SETTINGS) };
  const opened = await openBeirRetriever(data, retrievalConfig, o, url, progress);
  try {
    const { retriever } = opened.built;
    // The one grid of retrace tune (DEFAULT_GRID, with the defaults' neighbourhood), depths fixed at the run's depth (R@100 needs them).
    const current = currentCandidate(retriever, depth, depth);
    const grid: Grid = { ...gridAround(DEFAULT_GRID, current), denseK: [depth], bm25K: [depth] };
    const indexes = new Map(grid.bm25.map((p) => [bm25Key(p), BM25Index.build(opened.chunks, p, retriever.analyzers)]));
    const unitsOf = async (part: BeirDataset, label: string): Promise<TuneUnit[]> => {
      const units: TuneUnit[] = [];
      const p = progress(label, "queries");
      try {
        let done = 0;
        for (const q of part.queries) {
          const trace = await retriever.retrieve(q.text, { mode: "dense", k: depth, denseK: depth, locale: "en" });
          const gains = part.qrels.get(q.id) as Map<string, number>;
          units.push({
            group: q.id,
            stratum: "en",
            dense: trace.stages.dense ?? [],
            bm25: new Map([...indexes].map(([key, idx]) => [key, idx.search(q.text, { topN: depth, locale: "en" })])),
            evaluate: (fused) =>
              ndcgAtK(
                fused.slice(0, 10).map((r) => r.id),
                gains,
                10,
              ),
          });
          p.update(++done, part.queries.length);
        }
      } finally {
        p.stop();
      }
      return units;
    };
    const units = await unitsOf(data, "tune: dense lists");
    const groups = [...new Set(units.map((u) => u.group))].sort().map((id) => ({ id, stratum: "en" }));
    const candidates = expandGrid(grid, current);
    const outcome = crossValidateCandidates(
      units,
      groups,
      candidates,
      {
        folds: o.folds ?? DEFAULT_FOLDS,
        seed,
        metric: "nDCG@10 with graded gains, per query",
        source: `the ${data.queries.length} judged queries of ${data.dir}${split !== undefined ? ` in the tune part of --split (${split.kind === "own" ? "its own train part" : "seeded"})` : ""}`,
      },
      progress,
    );
    if (split === undefined) return outcome;
    const tuned = candidates[outcome.cv.final] as Candidate;
    return {
      ...outcome,
      report: scoreReportPart(
        await unitsOf(split.report, "split: reported part"),
        current,
        tuned,
        outcome.decision.adopted,
        split,
        seed,
      ),
    };
  } finally {
    await opened.store.close();
  }
}
