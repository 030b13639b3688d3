/**
 * Use-case: a BEIR-layout dataset benchmarked through the real retrieval
 * stack (`retrace beir DIR`, `runBeir`; docs/fusion-and-tuning.md). The
 * corpus is ingested into Chroma (self-started, or a server URL; idempotent,
 * so a re-run reuses the collection) and its retriever built by the
 * composition root's factory; then every judged query runs through the
 * HybridRetriever in each mode (bm25, dense, hybrid with the current or
 * config-file settings, and hybrid+rerank with a reranker). Each mode's
 * ranking is scored with retrace's trec_eval-exact scorer: nDCG@10 (graded
 * gains), R@100, MRR@10, success@10, each with n and a bootstrap interval
 * over queries, with queries/s and p50/p95 latency; with `runOut`, every
 * mode's TREC run is written there once all modes have run (their paths
 * checked before anything starts; all files or none: src/output-set.ts). `tuneBeir` cross-validates the hybrid
 * settings on the dataset's queries instead (as `retrace tune` does). The
 * modes, options, retriever and one mode's run are in ./beir-retrieval.ts.
 */
import path from "node:path";
import { formatTrecRun, scoreBeirRun, toRun, type BeirDataset } from "../research/beir.js";
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
import { log } from "../log.js";
import { checkOutputs, writeOutputs, type Output } from "../output-set.js";
import { BM25Index } from "../retrieval/bm25.js";
import type { EmbedderSetup } from "../system.js";
import { scoreReportPart, splitBeirQueries, type BeirSplitReport } from "./beir-split.js";
import { EVAL_DEFAULTS } from "./eval-plan.js";
import { NO_PROGRESS, type UseCaseHooks } from "./progress.js";
import { crossValidateCandidates, currentCandidate, DEFAULT_FOLDS, type TuneOutcome } from "./tune.js";

export {
  BEIR_SPLIT_TUNE_SHARE,
  scoreReportPart,
  splitBeirQueries,
  splitQueryIds,
  type BeirSplit,
  type BeirSplitReport,
} from "./beir-split.js";

import {
  BEIR_DEPTH,
  checkModes,
  chromaChoice,
  fusedMargins,
  openBeirRetriever,
  readBeirInputs,
  runMode,
  timingOf,
  type BeirOptions,
  type FusedMargin,
  type ModeResult,
} from "./beir-retrieval.js";

export {
  BEIR_DEPTH,
  BEIR_MODES,
  checkModes,
  chromaChoice,
  fusedMargins,
  fusionSettingsOf,
  openBeirRetriever,
  runMode,
  type BeirMode,
  type BeirOptions,
  type FusedMargin,
  type ModeResult,
} from "./beir-retrieval.js";

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
