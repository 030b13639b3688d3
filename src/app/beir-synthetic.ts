/**
 * Use-case: `retrace beir DIR --synthetic N` (`runSyntheticBeir`): what
 * synthetic known-item queries can judge (docs/synthetic-cases.md). The
 * twelve-variant system family (src/research/synthetic-family.ts) is scored
 * with nDCG@10 on N synthetic known-item queries of the corpus (gold: the
 * document they were drawn from; src/research/synthetic.ts) for each term
 * model asked, and on the dataset's real judged queries (graded qrels);
 * Kendall's τ-b between the two orders of the variants says how far the
 * synthetic queries rank systems as real judgments do. Its 95% interval is a
 * percentile bootstrap that resamples the synthetic queries and the real
 * queries independently (2,000 resamples, seeded) and recomputes both orders.
 * Without queries and qrels only the synthetic part runs and τ is null.
 *
 * The lists come from the real stack: the corpus ingested into Chroma and
 * read back for exact dense search (as `retrace beir`), BM25 indexes built
 * in process for each k1/b of the family.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { writeFileAtomic } from "../atomic.js";
import { InvalidArgumentError } from "../errors.js";
import {
  formatTrecRun,
  hasJudgments,
  loadBeirCorpus,
  loadBeirDataset,
  toRun,
  type BeirDataset,
  type BeirQuery,
} from "../research/beir.js";
import {
  DEFAULT_QUERY_SETTINGS,
  STRATEGIES,
  generatorName,
  GENERATOR_VERSION,
  type Strategy,
} from "../research/synthetic.js";
import { syntheticQueries } from "../research/synthetic-cases.js";
import {
  familyBm25Settings,
  systemFamily,
  variantRanking,
  type QueryLists,
  type Variant,
} from "../research/synthetic-family.js";
import { bm25Key } from "../research/tune.js";
import type { Qrels } from "../eval/ir/trec.js";
import { ndcgAtK } from "../eval/measures/metrics.js";
import { kendallTauB } from "../eval/stats/kendall.js";
import { quantileSorted } from "../eval/stats/bootstrap.js";
import { mulberry32 } from "../random.js";
import { log } from "../log.js";
import { BM25Index } from "../retrieval/bm25.js";
import type { HybridRetriever } from "../retrieval/hybrid.js";
import { BEIR_DEPTH, chromaChoice, openBeirRetriever, type BeirOptions } from "./beir-retrieval.js";
import { EVAL_DEFAULTS } from "./eval-plan.js";
import { NO_PROGRESS, type UseCaseHooks } from "./progress.js";

/** Bootstrap resamples of the τ interval. */
export const TAU_RESAMPLES = 2000;

export interface SyntheticBeirOptions extends BeirOptions {
  /** Synthetic queries per term model. */
  synthetic: number;
  /** Term models to measure (default: the default strategy). */
  strategies?: readonly string[];
  /** Known-item noise (share of terms drawn from the collection). */
  noise?: number;
}

export interface StrategyResult {
  strategy: Strategy;
  generator: string;
  version: string;
  queries: number;
  /** nDCG@10 mean per variant (family order). */
  means: number[];
  /** τ-b against the real order; null without judgments. */
  tau: number | null;
  ci95: [number, number] | null;
}

export interface SyntheticBeirOutcome {
  data: BeirDataset;
  judged: boolean;
  family: Variant[];
  /** Real queries scored and the per-variant nDCG@10 means; null without judgments. */
  real: { n: number; means: number[] } | null;
  strategies: StrategyResult[];
  seed: number;
  depth: number;
  embedder: string;
  samples: number;
}

function checkStrategies(list: readonly string[] | undefined): Strategy[] {
  const out = list ?? [DEFAULT_QUERY_SETTINGS.strategy];
  for (const s of out)
    if (!(STRATEGIES as readonly string[]).includes(s))
      throw new InvalidArgumentError("--strategy", `a comma-separated list of ${STRATEGIES.join(", ")}`, s);
  if (out.length === 0) throw new InvalidArgumentError("--strategy", "at least one term model", "");
  return [...new Set(out)] as Strategy[];
}

/** nDCG@10 of every variant on every query: `[variant][query]`. */
async function scoreQueries(
  retriever: HybridRetriever,
  indexes: ReadonlyMap<string, BM25Index>,
  family: readonly Variant[],
  queries: readonly BeirQuery[],
  qrels: Qrels,
  depth: number,
  onDone: () => void,
  ranked?: Map<string, Map<string, string[]>>,
): Promise<number[][]> {
  const out = family.map(() => [] as number[]);
  for (const q of queries) {
    const trace = await retriever.retrieve(q.text, { mode: "dense", k: depth, denseK: depth, locale: "en" });
    const lists: QueryLists = {
      dense: trace.stages.dense ?? [],
      bm25: new Map([...indexes].map(([k, idx]) => [k, idx.search(q.text, { topN: depth, locale: "en" })])),
    };
    const gains = qrels.get(q.id) as Map<string, number>;
    // A query without a positive judgment is not scored (trec_eval's and retrace beir's rule).
    if (![...gains.values()].some((g) => g > 0)) {
      onDone();
      continue;
    }
    family.forEach((v, i) => {
      const ids = variantRanking(v, lists).slice(0, depth);
      ranked?.get(v.name)?.set(q.id, ids);
      (out[i] as number[]).push(ndcgAtK(ids.slice(0, 10), gains, 10) ?? 0);
    });
    onDone();
  }
  return out;
}

const meanOf = (xs: readonly number[]) => (xs.length === 0 ? 0 : xs.reduce((s, v) => s + v, 0) / xs.length);

/**
 * The percentile bootstrap interval of τ-b: each resample draws the real
 * queries and the synthetic queries with replacement, independently,
 * recomputes each variant's two means and τ-b. Resamples where τ-b is
 * undefined (a constant vector) are dropped. Null with fewer than 2 queries on a side.
 */
export function tauInterval(
  real: readonly (readonly number[])[],
  synthetic: readonly (readonly number[])[],
  seed: number,
  samples = TAU_RESAMPLES,
): [number, number] | null {
  const nr = real[0]?.length ?? 0;
  const ns = synthetic[0]?.length ?? 0;
  if (nr < 2 || ns < 2) return null;
  const rng = mulberry32(seed);
  const taus: number[] = [];
  const ir = new Int32Array(nr);
  const is = new Int32Array(ns);
  for (let b = 0; b < samples; b++) {
    for (let i = 0; i < nr; i++) ir[i] = Math.floor(rng() * nr);
    for (let i = 0; i < ns; i++) is[i] = Math.floor(rng() * ns);
    const mr = real.map((v) => {
      let s = 0;
      for (let i = 0; i < nr; i++) s += v[ir[i] as number] as number;
      return s / nr;
    });
    const ms = synthetic.map((v) => {
      let s = 0;
      for (let i = 0; i < ns; i++) s += v[is[i] as number] as number;
      return s / ns;
    });
    const t = kendallTauB(ms, mr);
    if (t !== null) taus.push(t);
  }
  if (taus.length === 0) return null;
  taus.sort((a, b) => a - b);
  return [quantileSorted(taus, 0.025), quantileSorted(taus, 0.975)];
}

export async function runSyntheticBeir(
  dir: string,
  o: SyntheticBeirOptions,
  hooks: UseCaseHooks = {},
): Promise<SyntheticBeirOutcome> {
  const url = chromaChoice(o.store ?? EVAL_DEFAULTS.store);
  const strategies = checkStrategies(o.strategies);
  const depth = o.depth ?? BEIR_DEPTH;
  const seed = o.seed ?? EVAL_DEFAULTS.seed;
  const progress = hooks.progress ?? NO_PROGRESS;
  const judged = hasJudgments(dir);
  const data = judged ? await loadBeirDataset(dir) : await loadBeirCorpus(dir);
  if (!judged) log.warn(`${dir} has no queries.jsonl and qrels/test.tsv: the synthetic part only; τ is not computable`);
  const generated = strategies.map((strategy) => ({
    strategy,
    ...syntheticQueries(data, o.synthetic, seed, { ...DEFAULT_QUERY_SETTINGS, strategy, noise: o.noise ?? 0 }),
  }));
  const opened = await openBeirRetriever(data, {}, o, url, progress);
  try {
    const { retriever } = opened.built;
    const d = retriever.defaults;
    const family = systemFamily(
      {
        fusion: d.fusion,
        rrfK: d.rrfK,
        weights: d.weights,
        signalsShift: d.signalsShift,
        denseK: d.denseK,
        bm25K: d.bm25K,
        bm25: { k1: retriever.bm25.k1, b: retriever.bm25.b },
      },
      depth,
    );
    const indexes = new Map(
      familyBm25Settings(family).map((p) => [bm25Key(p), BM25Index.build(opened.chunks, p, retriever.analyzers)]),
    );
    const total = (judged ? data.queries.length : 0) + generated.reduce((n, g) => n + g.queries.length, 0);
    const p = progress("synthetic: family", "queries");
    let done = 0;
    const tick = () => p.update(++done, total);
    const runs = o.runOut !== undefined ? new Map(family.map((v) => [v.name, new Map<string, string[]>()])) : undefined;
    let realScores: number[][] | null = null;
    const synScores: number[][][] = [];
    try {
      if (judged)
        realScores = await scoreQueries(retriever, indexes, family, data.queries, data.qrels, depth, tick, runs);
      for (const g of generated)
        synScores.push(await scoreQueries(retriever, indexes, family, g.queries, g.qrels, depth, tick, runs));
    } finally {
      p.stop();
    }
    if (runs !== undefined && o.runOut !== undefined) {
      await mkdir(o.runOut, { recursive: true });
      for (const [i, v] of family.entries())
        await writeFileAtomic(
          path.join(o.runOut, `family-${String(i + 1).padStart(2, "0")}.trec`),
          formatTrecRun(toRun(runs.get(v.name) as Map<string, string[]>, v.name.replace(/\s+/g, "_"))),
        );
    }
    const realMeans = realScores?.map(meanOf) ?? null;
    return {
      data,
      judged,
      family,
      real: realScores === null || realMeans === null ? null : { n: realScores[0]?.length ?? 0, means: realMeans },
      strategies: generated.map((g, i) => {
        const scores = synScores[i] as number[][];
        const means = scores.map(meanOf);
        return {
          strategy: g.strategy,
          generator: generatorName(g.strategy),
          version: GENERATOR_VERSION,
          queries: g.queries.length,
          means,
          tau: realMeans === null ? null : kendallTauB(means, realMeans),
          ci95: realScores === null ? null : tauInterval(realScores, scores, seed),
        };
      }),
      seed,
      depth,
      embedder: opened.built.embedder.embedder.id,
      samples: TAU_RESAMPLES,
    };
  } finally {
    await opened.store.close();
  }
}
