/**
 * `retrace beir`'s pieces below the benchmark (./beir.ts): the modes and
 * options, the corpus's retriever through the composition root's factory
 * over its vectors ingested into Chroma, one mode's run over every judged
 * query with its latencies, and each fused mode's margin over the better
 * stage. `runBeir`, `tuneBeir` and the synthetic check (./beir-synthetic.ts)
 * use them.
 */
import { InvalidArgumentError } from "../errors.js";
import {
  beirChunks,
  loadBeirDataset,
  marginOverBestStage,
  type BeirDataset,
  type BeirScores,
  type MarginMeasure,
  type StageMargin,
} from "../research/beir.js";
import type { RetrievalConfig } from "../research/tune-config.js";
import { quantileSorted } from "../eval/stats/bootstrap.js";
import { log } from "../log.js";
import { DEFAULT_ANALYZERS } from "../retrieval/analyzer.js";
import { requestTimeoutMs } from "../retrieval/chroma-faults.js";
import type { HybridRetriever, HybridRetrieverOptions } from "../retrieval/hybrid.js";
import type { RetrievalMode } from "../retrieval/types.js";
import { buildRetriever, lsaStateDir, openIngestedDense, resolveStoreChoice, type IngestedDense } from "../system.js";
import { EVAL_DEFAULTS } from "./eval-plan.js";
import type { ProgressFactory } from "./progress.js";

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

export function timingOf(latenciesMs: readonly number[], totalMs: number): ModeResult["timing"] {
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
export async function readBeirInputs(
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
