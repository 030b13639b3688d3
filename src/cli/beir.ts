/**
 * `retrace beir DIR`: benchmarks a BEIR-layout dataset through the real
 * retrieval stack (docs/fusion-and-tuning.md). The corpus is ingested into
 * Chroma (self-started, or `--store URL`; idempotent, so a re-run reuses the
 * collection), then every judged query runs through the HybridRetriever in
 * each mode (bm25, dense, hybrid with the current or `--config` settings, and
 * hybrid+rerank when `--rerank` is given). Each mode's ranking is written as a
 * TREC run (`--run-out DIR`) and scored with retrace's trec_eval-exact scorer:
 * nDCG@10 (graded gains), R@100, MRR@10, success@10, each with n and a
 * bootstrap interval over queries, plus paired tests between modes, and
 * queries/s and p50/p95 latency per mode.
 *
 * stdout: the result (table, or JSON with --json). stderr: progress and logs.
 * Exit 0; 2 bad dataset, config or option; 3 Chroma or model unavailable.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Command } from "commander";
import { writeFileAtomic } from "../atomic.js";
import { InvalidArgumentError } from "../errors.js";
import {
  BEIR_MEASURES,
  beirChunks,
  compareModes,
  formatTrecRun,
  loadBeirDataset,
  scoreBeirRun,
  toRun,
  type BeirDataset,
  type BeirScores,
} from "../eval/ir/beir.js";
import { quantileSorted } from "../eval/stats/bootstrap.js";
import { readConfigFile, type RetrievalConfig } from "../eval/ir/tune-config.js";
import { log } from "../log.js";
import { buildRetriever, lsaStateDir, openIngestedDense, resolveStoreChoice, type IngestedDense } from "../system.js";
import type { HybridRetriever, HybridRetrieverOptions } from "../retrieval/hybrid.js";
import type { RetrievalMode } from "../retrieval/types.js";
import { ndcgAtK } from "../eval/measures/metrics.js";
import { bm25Key, expandGrid, type Grid, type TuneUnit } from "../eval/ir/tune.js";
import { DEFAULT_ANALYZERS } from "../retrieval/analyzer.js";
import { BM25Index } from "../retrieval/bm25.js";
import type { Chunk } from "../kb/types.js";
import { action, out, outText } from "./io.js";
import { intOption, positiveIntOption, positiveNumberOption, refuseInMode, seedOption } from "./options.js";
import { DEFAULT_REQUEST_TIMEOUT_MS, requestTimeoutMs, TIMEOUT_ENV } from "../retrieval/chroma-faults.js";
import { currentCandidate, tuneAndReport } from "./tune.js";
import { progressReporter } from "./progress.js";

export const BEIR_MODES = ["bm25", "dense", "hybrid", "hybrid+rerank"] as const;
export type BeirMode = (typeof BEIR_MODES)[number];

export interface BeirOptions {
  store: string;
  dataDir?: string;
  embedder: string;
  rerank?: string;
  config?: string;
  modes?: string;
  depth: number;
  runOut?: string;
  seed: number;
  json?: boolean;
  tune?: boolean;
  folds: number;
  /** Chroma request deadline, seconds (docs/reliability.md). */
  timeout?: number;
}

export interface ModeResult {
  mode: BeirMode;
  scores: BeirScores;
  ranked: Map<string, string[]>;
  timing: { queries: number; totalMs: number; qps: number; p50Ms: number; p95Ms: number };
}

/** The fusion settings of a config file (method, RRF k, weights) as retriever defaults; unset keys stay unset (the embedder's, hybridDefaultsFor). */
export function fusionSettingsOf(config: RetrievalConfig): Pick<NonNullable<HybridRetrieverOptions["defaults"]>, "fusion" | "rrfK" | "weights"> {
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
    // Hybrid branches take a --config file's denseK/bm25K when it sets them; single-branch modes always --depth.
    const denseK = base === "hybrid" ? (hybridDepths.denseK ?? depth) : depth;
    const bm25K = base === "hybrid" ? (hybridDepths.bm25K ?? depth) : depth;
    const trace = await retriever.retrieve(q.text, { mode: base, k: depth, denseK, bm25K, locale: "en", rerank: mode === "hybrid+rerank" });
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

function parseModes(raw: string | undefined, rerank: boolean): BeirMode[] {
  const modes = (raw ?? (rerank ? "bm25,dense,hybrid,hybrid+rerank" : "bm25,dense,hybrid")).split(",").map((m) => m.trim()).filter((m) => m !== "");
  for (const m of modes) if (!(BEIR_MODES as readonly string[]).includes(m)) throw new InvalidArgumentError("--modes", `a comma-separated list of ${BEIR_MODES.join(", ")}`, m);
  if (modes.includes("hybrid+rerank") && !rerank) throw new InvalidArgumentError("--modes", "without hybrid+rerank unless --rerank is given", raw);
  if (modes.length === 0) throw new InvalidArgumentError("--modes", "at least one mode", raw);
  return [...new Set(modes)] as BeirMode[];
}

const f4 = (x: number) => x.toFixed(4);
const ci = (c: [number, number] | null) => (c === null ? "" : ` [${f4(c[0])}, ${f4(c[1])}]`);
const signed = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(4)}`;

function table(headers: string[], rows: string[][], right: (i: number) => boolean): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((c, i) => (right(i) ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join("  ").trimEnd();
  return [line(headers), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

/** The text report: quality (deterministic for the same data, config and seed), then speed (measured, varies run to run). */
export function renderBeir(data: BeirDataset, results: readonly ModeResult[], header: string[], seed: number): string {
  const lines = [...header, ""];
  lines.push(
    table(
      ["mode", "n", ...BEIR_MEASURES.map((m) => `${m} [95% CI]`)],
      results.map((r) => [r.mode, String(r.scores.n), ...BEIR_MEASURES.map((m) => `${f4(r.scores.mean[m])}${ci(r.scores.ci95[m])}`)]),
      (i) => i > 0,
    ),
  );
  lines.push("", `Intervals: percentile bootstrap over queries (2,000 resamples, seed ${seed}). Paired tests (B − A, sign-flip randomization over queries, seed ${seed}, unadjusted):`);
  for (let i = 0; i < results.length; i++) {
    for (let j = i + 1; j < results.length; j++) {
      const a = results[i] as ModeResult;
      const b = results[j] as ModeResult;
      const parts = (["ndcg@10", "recall@100"] as const).map((m) => {
        const c = compareModes(a.scores, b.scores, m, seed);
        return c === null ? `${m} n/a` : `Δ${m} ${signed(c.diff)}${ci(c.ci95)} p=${c.pValue.toFixed(4)}`;
      });
      lines.push(`  ${b.mode} − ${a.mode}: ${parts.join("; ")}`);
    }
  }
  lines.push("", "Speed (this machine, this run; sequential queries):");
  lines.push(
    table(
      ["mode", "queries", "queries/s", "p50 ms", "p95 ms"],
      results.map((r) => [r.mode, String(r.timing.queries), r.timing.qps.toFixed(1), r.timing.p50Ms.toFixed(2), r.timing.p95Ms.toFixed(2)]),
      (i) => i > 0,
    ),
  );
  lines.push(`Documents: ${data.corpus.length}; judged queries run: ${data.queries.length}.`);
  return `${lines.join("\n")}\n`;
}

/**
 * `retrace beir --tune`: the cross-validated search of retrace tune over the
 * dataset's queries (each query its own group; one stratum). Depths stay at
 * `--depth` (R@100 needs them); the metric is nDCG@10 with graded gains.
 */
async function beirTune(data: BeirDataset, retriever: HybridRetriever, chunks: readonly Chunk[], o: BeirOptions): Promise<number> {
  const grid: Grid = {
    fusion: ["rrf", "minmax", "zscore", "combmnz"],
    alpha: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
    rrfK: [10, 60],
    denseK: [o.depth],
    bm25K: [o.depth],
    bm25: [
      { k1: 1.2, b: 0.75 },
      { k1: 0.9, b: 0.4 },
    ],
  };
  const indexes = new Map(grid.bm25.map((p) => [bm25Key(p), BM25Index.build(chunks, p, retriever.analyzers)]));
  const units: TuneUnit[] = [];
  const progress = progressReporter("tune: dense lists", "queries");
  try {
    let done = 0;
    for (const q of data.queries) {
      const trace = await retriever.retrieve(q.text, { mode: "dense", k: o.depth, denseK: o.depth, locale: "en" });
      const gains = data.qrels.get(q.id) as Map<string, number>;
      units.push({
        group: q.id,
        stratum: "en",
        dense: trace.stages.dense ?? [],
        bm25: new Map([...indexes].map(([key, idx]) => [key, idx.search(q.text, { topN: o.depth, locale: "en" })])),
        evaluate: (fused) => ndcgAtK(fused.slice(0, 10).map((r) => r.id), gains, 10),
      });
      progress.update(++done, data.queries.length);
    }
  } finally {
    progress.stop();
  }
  const groups = [...new Set(units.map((u) => u.group))].sort().map((id) => ({ id, stratum: "en" }));
  const candidates = expandGrid(grid, currentCandidate(retriever, o.depth, o.depth));
  return tuneAndReport(units, groups, candidates, {
    folds: o.folds,
    seed: o.seed,
    ...(o.runOut !== undefined ? { out: path.join(o.runOut, "tuned-config.json") } : {}),
    ...(o.json ? { json: true } : {}),
    metric: "nDCG@10 with graded gains, per query",
    source: `the ${data.queries.length} judged queries of ${data.dir}`,
  });
}

export async function beirCommand(dir: string, o: BeirOptions): Promise<number> {
  // The store vocabulary (docs/decisions/0006-one-composition-root-and-store-vocabulary.md); beir ingests into Chroma.
  const choice = resolveStoreChoice(o.store);
  if (choice.kind === "memory" || choice.kind === "none")
    throw new InvalidArgumentError("--store", "auto, local or a Chroma URL (beir ingests the corpus into a Chroma store)", o.store);
  const modes = parseModes(o.modes, o.rerank !== undefined);
  const config = o.config !== undefined ? await readConfigFile(o.config) : null;
  const retrievalConfig: RetrievalConfig = config?.retrieval ?? {};
  const data = await loadBeirDataset(dir);
  log.info(`BEIR ${dir}: ${data.corpus.length} documents, ${data.queries.length} judged queries, corpus ${data.corpusHash.slice(0, 12)}`);
  const chunks = beirChunks(data.corpus);
  // The composition root's retriever factory; the dense index is the corpus ingested into Chroma, its vectors read back for exact search, as retrace eval does (docs/determinism.md).
  let opened: IngestedDense | undefined;
  let t0 = 0;
  let tBm25 = 0;
  try {
    const built = await buildRetriever({
      chunks,
      // A BEIR corpus has no analyzers.json: its BM25 index and LSA embedder analyse with the default profile.
      analyzers: DEFAULT_ANALYZERS,
      embedder: o.embedder,
      stateDir: lsaStateDir(o.dataDir),
      reranker: o.rerank ?? null,
      requireReranker: true,
      ...(retrievalConfig.bm25 !== undefined ? { bm25Params: retrievalConfig.bm25 } : {}),
      // A --config file's fusion, RRF k and weights (unset: the embedder's, hybridDefaultsFor); every depth --depth.
      defaults: { ...fusionSettingsOf(retrievalConfig), k: o.depth, denseK: o.depth, bm25K: o.depth },
      dense: async (embedder) => {
        t0 = performance.now();
        const progress = progressReporter("ingest", "documents");
        try {
          opened = await openIngestedDense({
            ...(choice.url !== undefined ? { url: choice.url } : {}),
            ...(o.dataDir !== undefined ? { dataDir: o.dataDir } : {}),
            requestTimeoutMs: requestTimeoutMs(o.timeout),
            chunks,
            embedder,
            kbHash: data.corpusHash,
            onIngestProgress: (d, t) => progress.update(d, t),
          });
        } finally {
          progress.stop();
        }
        tBm25 = performance.now();
        return opened.dense;
      },
    });
    const { retriever } = built;
    const { embedder } = built.embedder;
    const { ingested, collection } = opened as IngestedDense;
    const bm25Ms = performance.now() - tBm25;
    const ingestMs = performance.now() - t0;
    if (o.tune) return await beirTune(data, retriever, chunks, o);
    const results: ModeResult[] = [];
    for (const mode of modes) {
      const p = progressReporter(mode, "queries");
      let r;
      try {
        r = await runMode(retriever, data, mode, o.depth, (d, t) => p.update(d, t), {
          ...(retrievalConfig.denseK !== undefined ? { denseK: retrievalConfig.denseK } : {}),
          ...(retrievalConfig.bm25K !== undefined ? { bm25K: retrievalConfig.bm25K } : {}),
        });
      } finally {
        p.stop();
      }
      const run = toRun(r.ranked, `retrace-${mode}`);
      if (o.runOut !== undefined) {
        await mkdir(o.runOut, { recursive: true });
        await writeFileAtomic(path.join(o.runOut, `${mode}.trec`), formatTrecRun(run));
      }
      results.push({ mode, scores: scoreBeirRun(data.qrels, run, { seed: o.seed }), ranked: r.ranked, timing: timingOf(r.latenciesMs, r.totalMs) });
    }
    const totalMs = performance.now() - t0;
    const d = retriever.defaults;
    const hybridDepth =
      retrievalConfig.denseK !== undefined || retrievalConfig.bm25K !== undefined
        ? `depth ${o.depth} (hybrid branches: dense ${retrievalConfig.denseK ?? o.depth}, bm25 ${retrievalConfig.bm25K ?? o.depth})`
        : `depth ${o.depth} per branch`;
    const settings = `fusion=${d.fusion} rrfK=${d.rrfK} weights dense ${d.weights.dense}, bm25 ${d.weights.bm25}; BM25 k1=${retriever.bm25.k1} b=${retriever.bm25.b}; ${hybridDepth}; exact dense search`;
    if (o.json) {
      out(
        JSON.stringify(
          {
            version: 1,
            dataset: { dir, documents: data.corpus.length, queries: data.queries.length, corpusHash: data.corpusHash },
            embedder: embedder.id,
            collection: collection,
            settings: { fusion: d.fusion, rrfK: d.rrfK, weights: d.weights, bm25: { k1: retriever.bm25.k1, b: retriever.bm25.b }, depth: o.depth, hybridDenseK: retrievalConfig.denseK ?? o.depth, hybridBm25K: retrievalConfig.bm25K ?? o.depth, denseSearch: "exact", config: o.config ?? null },
            seed: o.seed,
            modes: results.map((r) => ({
              mode: r.mode,
              n: r.scores.n,
              mean: r.scores.mean,
              ci95: r.scores.ci95,
              timing: r.timing,
            })),
            timing: { ingestAndIndexMs: ingestMs, bm25BuildMs: bm25Ms, totalMs },
          },
          null,
          2,
        ),
      );
    } else {
      outText(
        renderBeir(
          data,
          results,
          [
            `BEIR ${dir}: ${data.corpus.length} documents, ${data.queries.length} judged queries (${results[0]?.scores.n ?? 0} with a positive judgment scored)`,
            `Embedder: ${embedder.id} (${embedder.description}); collection ${collection} (${ingested.status})`,
            `Hybrid settings: ${settings}${o.config !== undefined ? ` (from ${o.config})` : " (shipped defaults)"}`,
            `Scored with retrace's trec_eval-exact scorer: ndcg_cut_10 with graded gains, recall_100, success_10, recip_rank of the run cut at 10; -c.`,
          ],
          o.seed,
        ),
      );
      outText(`Wall time: ingest + BM25 index ${(ingestMs / 1000).toFixed(1)} s; ingest + all modes ${(totalMs / 1000).toFixed(1)} s.`);
    }
    return 0;
  } finally {
    await opened?.close();
  }
}

export function register(program: Command): void {
  const cmd = program
    .command("beir")
    .description("Benchmark a BEIR-layout dataset (corpus.jsonl, queries.jsonl, qrels/test.tsv) through the real retrieval stack")
    .argument("<dir>", "the dataset folder")
    .option("--store <auto|local|url>", "auto: CHROMA_URL if set, else local; local: a Chroma started (and stopped) by retrace; or a Chroma URL", "auto")
    .option("--data-dir <dir>", "data folder of the local Chroma (default .retrace/chroma)")
    .option("--timeout <seconds>", `deadline of each Chroma request (default ${DEFAULT_REQUEST_TIMEOUT_MS / 1000} s, or ${TIMEOUT_ENV})`, positiveNumberOption("--timeout", "seconds"))
    .option("--embedder <auto|builtin|lsa|model>", "dense embedder (lsa: corpus-fit LSA, fitted on the corpus)", "auto")
    .option("--rerank <model|auto>", "also run hybrid+rerank with this local cross-encoder")
    .option("--config <file>", "retrieval configuration (as written by retrace tune)")
    .option("--modes <list>", "comma-separated modes: bm25, dense, hybrid, hybrid+rerank (default all that apply)")
    .option("--depth <n>", "documents retrieved per query, and asked of each branch (hybrid: a --config file's denseK/bm25K win)", positiveIntOption("--depth"), 100)
    .option("--run-out <dir>", "write one TREC run file per mode there (<mode>.trec)")
    .option("--tune", "cross-validate the hybrid settings on the dataset's queries (retrace tune) instead of benchmarking")
    .option("--folds <n>", "folds of --tune", intOption("--folds", { min: 2, note: "cross-validation needs at least 2" }), 5)
    .option("--json", "print JSON (with a version field) instead of the tables")
    .option("--seed <n>", "seed of the bootstrap intervals and paired tests", seedOption(), 42)
    .action(action((dir: string, o: BeirOptions) => beirCommand(dir, o)));
  refuseInMode<BeirOptions>(cmd, [
    { when: (o) => o.tune === true, mode: "with --tune (it cross-validates the hybrid settings; nothing is benchmarked per mode or reranked)", unused: ["--modes", "--run-out", "--rerank"] },
    { when: (o) => o.tune !== true, mode: "without --tune", unused: ["--folds"] },
  ]);
}
