/**
 * Label-free per-query weighting (`fusion: "signals"`,
 * src/retrieval/fusion/signals.ts; docs/fusion-and-tuning.md, "Label-free
 * per-query weighting"): fits its three constants (λ, the collection-level
 * dense weight per unit of the chance-corrected latent share κ, α = λ·κ
 * clamped to [0.1, 0.9]; β on the head-confidence difference; γ on the
 * top-10 overlap) on Cranfield ONLY, by 5-fold cross-validation over
 * queries (seed 42), and reports the held-out folds' figures, never the
 * fitted-on ones. λ is searched as the weight it gives Cranfield, from the
 * six candidates of the earlier rule (Cranfield's latent-share weight 0.43
 * plus a shift of 0 … 0.5), λ = that weight / κ_Cranfield.
 *
 * Lists as `retrace beir` builds them with the shipped defaults: corpus-fit
 * LSA (exact cosine, in memory), BM25 k1 0.9 b 0.4, depth 100 per branch.
 *
 * Stress cases (SIMULATIONS built from Cranfield, never fitted on): "dense
 * weak" = LSA with 32 latent dimensions instead of 128 (BM25 becomes the
 * strong stage); "BM25 weak" = the BM25 branch sees the query with each
 * word dropped with probability 0.5 or 0.7 (seeded), the dense branch the
 * whole query (dense becomes the strong stage). They are scored with each
 * fold's constants (every query by constants chosen without it). A stress
 * case that is not Cranfield: the seeded random-word corpus of `beir-scale`
 * (5,000 Zipf documents, 200 known-item queries: a document's first six
 * words; BM25 dominant; κ ≈ 0) and its first 300 documents (a small corpus,
 * whose raw latent share is high by size alone), scored the same way.
 *
 *   npm run bench -- query-weighting      (BENCH_CRANFIELD=DIR for another copy; about 2 min)
 */
import path from "node:path";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { beirChunks, loadBeirDataset } from "../src/research/beir.js";
import { ndcgAtK } from "../src/eval/measures/metrics.js";
import { assignFolds } from "../src/research/tune.js";
import { pairedComparison } from "../src/eval/stats/bootstrap.js";
import { DEFAULT_ANALYZERS } from "../src/retrieval/analyzer.js";
import { BM25Index } from "../src/retrieval/bm25.js";
import { InMemoryDenseIndex } from "../src/retrieval/dense.js";
import { loadOrFitLsa } from "../src/retrieval/embedders/lsa.js";
import {
  SIGNALS_BETA,
  SIGNALS_GAMMA,
  fuse,
  headConfidence,
  signalsFusion,
  signalsWeight,
} from "../src/retrieval/fusion.js";
import { LSA_HYBRID_BM25, LSA_STRUCTURE_LAMBDA, lsaDenseWeight, lsaStructureWeight } from "../src/retrieval/hybrid.js";
import { ZipfCorpus } from "./lib/synthetic.js";
import type { Ranked } from "../src/retrieval/types.js";
import { REPO_ROOT } from "./lib/eval-set.js";

const DEPTH = 100;
/** The candidate weights on Cranfield are its latent-share weight plus these (the grid of the earlier rule's shift); λ = weight / κ_Cranfield. */
const SHIFTS = [0, 0.1, 0.2, 0.3, 0.4, 0.5];
const BETAS = [0, 0.5, 1, 2, 4];
const GAMMAS = [0, -1, 1, -2, 2];
type Theta = [number, number, number];
const GRID: Theta[] = SHIFTS.flatMap((s) => BETAS.flatMap((b) => GAMMAS.map((g): Theta => [s, b, g])));

interface Q {
  id: string;
  gains: Map<string, number>;
  dense: Ranked[];
  bm25: Ranked[];
}
interface Variant {
  name: string;
  /** The latent-share weight (the previous default's). */
  alpha: number;
  /** The embedder's chance-corrected latent share κ. */
  kappa: number;
  qs: Q[];
}

/** Seeded LCG (the dropout of the "BM25 weak" simulation). */
function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
}

const recallAt = (ids: readonly string[], gains: Map<string, number>, k: number): number => {
  const rel = [...gains].filter(([, g]) => g > 0).map(([d]) => d);
  const top = new Set(ids.slice(0, k));
  return rel.length === 0 ? 0 : rel.filter((d) => top.has(d)).length / rel.length;
};
const mean = (m: Map<string, number>) => [...m.values()].reduce((s, x) => s + x, 0) / m.size;
const f4 = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(4)}`;
const cmp = (a: Map<string, number>, b: Map<string, number>) => {
  const c = pairedComparison(a, b, { seed: 42 });
  return c === null ? "n/a" : `${f4(c.diff)} [${c.ci95?.map((x) => x.toFixed(4)).join(", ")}] p=${c.pValue.toFixed(4)}`;
};

/** Spearman's ρ (average ranks for ties). */
function spearman(x: readonly number[], y: readonly number[]): number {
  const ranks = (a: readonly number[]) => {
    const idx = a.map((v, i) => [v, i] as const).sort((p, q) => p[0] - q[0]);
    const r = new Array<number>(a.length);
    for (let i = 0; i < idx.length;) {
      let j = i;
      while (j + 1 < idx.length && idx[j + 1]![0] === idx[i]![0]) j++;
      for (let k = i; k <= j; k++) r[idx[k]![1]] = (i + j) / 2;
      i = j + 1;
    }
    return r;
  };
  const rx = ranks(x);
  const ry = ranks(y);
  const mx = rx.reduce((s, v) => s + v, 0) / rx.length;
  const my = ry.reduce((s, v) => s + v, 0) / ry.length;
  let a = 0;
  let b = 0;
  let c = 0;
  rx.forEach((_, i) => {
    a += (rx[i]! - mx) * (ry[i]! - my);
    b += (rx[i]! - mx) ** 2;
    c += (ry[i]! - my) ** 2;
  });
  return a / Math.sqrt(b * c);
}
/** (s₁ − s₂)/(s₁ − s_n) over the top n scores; 0 when flat or shorter than 2. */
const topGap = (r: readonly Ranked[], n = 10) => {
  const s = r.slice(0, n).map((x) => x.score);
  const range = (s[0] ?? 0) - (s[s.length - 1] ?? 0);
  return s.length < 2 || !(range > 0) ? 0 : ((s[0] as number) - (s[1] as number)) / range;
};
const overlapAt = (a: readonly Ranked[], b: readonly Ranked[], n: number) => {
  const head = new Set(a.slice(0, n).map((x) => x.id));
  return b.slice(0, n).filter((x) => head.has(x.id)).length / n;
};

function score(
  v: Variant,
  system: (q: Q) => readonly { id: string }[],
): { ndcg: Map<string, number>; r100: Map<string, number> } {
  const ndcg = new Map<string, number>();
  const r100 = new Map<string, number>();
  for (const q of v.qs) {
    const ids = system(q)
      .map((r) => r.id)
      .slice(0, DEPTH);
    ndcg.set(q.id, ndcgAtK(ids.slice(0, 10), q.gains, 10) ?? 0);
    r100.set(q.id, recallAt(ids, q.gains, 100));
  }
  return { ndcg, r100 };
}
const listsAt = (alpha: number, q: Q) => [
  { name: "dense", ranked: q.dense, weight: alpha },
  { name: "bm25", ranked: q.bm25, weight: Math.round((1 - alpha) * 100) / 100 },
];
/** The lists with the previous default's weight (the latent share). */
const lists = (v: Variant, q: Q) => listsAt(v.alpha, q);

export async function run(): Promise<void> {
  const dir = process.env.BENCH_CRANFIELD ?? path.resolve(REPO_ROOT, "..", "shared", "datasets", "cranfield");
  const stateDir = mkdtempSync(path.join(os.tmpdir(), "retrace-qw-"));
  try {
    const data = await loadBeirDataset(dir);
    const chunks = beirChunks(data.corpus);
    const bm25 = BM25Index.build(chunks, LSA_HYBRID_BM25, DEFAULT_ANALYZERS);
    const build = async (dimension: number) => {
      const { embedder } = await loadOrFitLsa(chunks, {
        dir: path.join(stateDir, String(dimension)),
        params: { dimension },
        analyzers: DEFAULT_ANALYZERS,
      });
      const dense = await InMemoryDenseIndex.fromChunks(chunks, embedder);
      const out: Array<{ id: string; gains: Map<string, number>; dense: Ranked[]; text: string }> = [];
      for (const q of data.queries) {
        const v = await embedder.embedQuery(q.text, { locale: "en" });
        out.push({
          id: q.id,
          text: q.text,
          gains: data.qrels.get(q.id) as Map<string, number>,
          dense: await dense.search(v, { topN: DEPTH, locale: "en" }),
        });
      }
      return {
        alpha: lsaDenseWeight(embedder.latentShare),
        share: embedder.latentShare,
        kappa: embedder.structure as number,
        out,
      };
    };
    const full = await build(128);
    const weak = await build(32);
    const bm25Of = (text: string) => bm25.search(text, { topN: DEPTH, locale: "en" });
    const dropped = (p: number) => {
      const r = lcg(12345);
      return (text: string) => {
        const words = text.split(/\s+/).filter((w) => w !== "");
        const kept = words.filter(() => r() >= p);
        return kept.length === 0 ? (words[0] ?? text) : kept.join(" ");
      };
    };
    const cran: Variant = {
      name: "Cranfield",
      alpha: full.alpha,
      kappa: full.kappa,
      qs: full.out.map((q) => ({ ...q, bm25: bm25Of(q.text) })),
    };
    const d5 = dropped(0.5);
    const d7 = dropped(0.7);
    const variants: Variant[] = [
      cran,
      {
        name: "sim: dense weak (LSA k=32)",
        alpha: weak.alpha,
        kappa: weak.kappa,
        qs: weak.out.map((q, i) => ({ ...q, bm25: (cran.qs[i] as Q).bm25 })),
      },
      {
        name: "sim: BM25 weak (dropout 0.5)",
        alpha: full.alpha,
        kappa: full.kappa,
        qs: full.out.map((q) => ({ ...q, bm25: bm25Of(d5(q.text)) })),
      },
      {
        name: "sim: BM25 weak (dropout 0.7)",
        alpha: full.alpha,
        kappa: full.kappa,
        qs: full.out.map((q) => ({ ...q, bm25: bm25Of(d7(q.text)) })),
      },
    ];
    // The random-word corpus of `beir-scale` (bench/beir-scale.bench.ts builds the same folder for the real command), and its first 300 documents.
    for (const n of [5000, 300]) {
      const zc = new ZipfCorpus({ seed: 7 }).chunks(n, 11).map((c) => ({
        id: c.parentId,
        parentId: c.parentId,
        cardId: c.parentId,
        locale: "en" as const,
        text: c.text,
      }));
      const zBm25 = BM25Index.build(zc as never, LSA_HYBRID_BM25, DEFAULT_ANALYZERS);
      const { embedder } = await loadOrFitLsa(zc, {
        dir: path.join(stateDir, `random-word-${n}`),
        analyzers: DEFAULT_ANALYZERS,
      });
      const zDense = await InMemoryDenseIndex.fromChunks(zc as never, embedder);
      const qs: Q[] = [];
      for (let i = 0; i < 200; i++) {
        // 5,000: document 25·i, as `beir-scale`; 300: the first 200 documents
        const doc = zc[n === 5000 ? (25 * i) % n : i]!;
        const text = doc.text.split(/\s+/).slice(0, 6).join(" ");
        const v = await embedder.embedQuery(text, { locale: "en" });
        qs.push({
          id: String(i + 1),
          gains: new Map([[doc.id, 1]]),
          dense: await zDense.search(v, { topN: DEPTH, locale: "en" }),
          bm25: zBm25.search(text, { topN: DEPTH, locale: "en" }),
        });
      }
      variants.push({
        name: `stress: random-word corpus, ${n} documents (synthetic known-item queries)`,
        alpha: lsaDenseWeight(embedder.latentShare),
        kappa: embedder.structure as number,
        qs,
      });
    }
    for (const v of variants)
      console.log(
        `${v.name}: latent-share weight ${v.alpha}, κ ${v.kappa.toFixed(4)} → shipped α = λ·κ = ${lsaStructureWeight(v.kappa)}`,
      );
    // Which query-time signals say, per query, which branch wins? (Cranfield; Spearman ρ with nDCG@10 dense − BM25.)
    {
      const de = score(cran, (q) => q.dense);
      const bm = score(cran, (q) => q.bm25);
      const diff = cran.qs.map((q) => (de.ndcg.get(q.id) as number) - (bm.ndcg.get(q.id) as number));
      const terms = cran.qs.map((q) => DEFAULT_ANALYZERS.analyze(full.out.find((o) => o.id === q.id)!.text, "en"));
      const signals: Array<[string, number[]]> = [
        ["head confidence, dense", cran.qs.map((q) => headConfidence(q.dense.map((r) => r.score)))],
        ["head confidence, BM25", cran.qs.map((q) => headConfidence(q.bm25.map((r) => r.score)))],
        [
          "head confidence, dense − BM25",
          cran.qs.map((q) => headConfidence(q.dense.map((r) => r.score)) - headConfidence(q.bm25.map((r) => r.score))),
        ],
        ["top-score gap, dense", cran.qs.map((q) => topGap(q.dense))],
        ["top-score gap, BM25", cran.qs.map((q) => topGap(q.bm25))],
        ["overlap of the top 10", cran.qs.map((q) => overlapAt(q.dense, q.bm25, 10))],
        ["overlap of the top 20", cran.qs.map((q) => overlapAt(q.dense, q.bm25, 20))],
        ["query length (analysed terms)", terms.map((t) => t.length)],
        [
          "share of query terms BM25 knows",
          terms.map((t) =>
            t.length === 0 ? 0 : t.filter((x) => bm25.documentFrequency(x, "en") > 0).length / t.length,
          ),
        ],
        [
          "BM25 top score per query term",
          cran.qs.map((q, i) => (q.bm25[0]?.score ?? 0) / Math.max(1, terms[i]!.length)),
        ],
      ];
      console.log("Signals vs the per-query winner on Cranfield (Spearman ρ with nDCG@10 dense − BM25):");
      for (const [name, xs] of signals) console.log(`  ${name.padEnd(34)} ρ ${f4(spearman(xs, diff))}`);
    }
    console.log(
      `Cranfield: ${data.queries.length} queries; latent share ${full.share.toFixed(4)} → α ${full.alpha}; k=32: ${weak.share.toFixed(4)} → α ${weak.alpha}`,
    );

    // Every θ on every variant (per query), then 5-fold CV over Cranfield's queries only.
    const lambdaOf = (shiftOnCranfield: number) => (cran.alpha + shiftOnCranfield) / cran.kappa;
    const grid = variants.map((v) =>
      GRID.map(([s, beta, gamma]) =>
        score(v, (q) => signalsFusion(listsAt(lsaStructureWeight(v.kappa, lambdaOf(s)), q), { shift: 0, beta, gamma })),
      ),
    );
    const folds = assignFolds(
      cran.qs.map((q) => ({ id: q.id, stratum: "en" })),
      5,
      42,
    );
    const cv = variants.map(() => ({ ndcg: new Map<string, number>(), r100: new Map<string, number>() }));
    const chosen: string[] = [];
    for (let f = 0; f < 5; f++) {
      let best = 0;
      let bestScore = -Infinity;
      GRID.forEach((_, gi) => {
        let s = 0;
        for (const q of cran.qs) if (folds.get(q.id) !== f) s += grid[0]![gi]!.ndcg.get(q.id) as number;
        if (s > bestScore + 1e-12) {
          bestScore = s;
          best = gi;
        }
      });
      chosen.push(
        `α_C ${(cran.alpha + GRID[best]![0]).toFixed(2)} (λ ${lambdaOf(GRID[best]![0]).toFixed(2)}) β ${GRID[best]![1]} γ ${GRID[best]![2]}`,
      );
      variants.forEach((v, vi) => {
        for (const q of v.qs) {
          if (folds.get(q.id) !== f) continue;
          cv[vi]!.ndcg.set(q.id, grid[vi]![best]!.ndcg.get(q.id) as number);
          cv[vi]!.r100.set(q.id, grid[vi]![best]!.r100.get(q.id) as number);
        }
      });
    }
    let allBest = 0;
    GRID.forEach((_, gi) => {
      if (mean(grid[0]![gi]!.ndcg) > mean(grid[0]![allBest]!.ndcg) + 1e-12) allBest = gi;
    });
    console.log(`5-fold CV over Cranfield's queries (seed 42), chosen per fold: ${chosen.join("; ")}`);
    console.log(
      `Fitted on all of Cranfield: α_C ${(cran.alpha + GRID[allBest]![0]).toFixed(2)}, λ ${lambdaOf(GRID[allBest]![0]).toFixed(2)}, β ${GRID[allBest]![1]}, γ ${GRID[allBest]![2]} (shipped LSA_STRUCTURE_LAMBDA, SIGNALS_BETA, SIGNALS_GAMMA: ${LSA_STRUCTURE_LAMBDA}, ${SIGNALS_BETA}, ${SIGNALS_GAMMA})`,
    );
    const at = (t: Theta) =>
      mean(grid[0]![GRID.findIndex((g) => g[0] === t[0] && g[1] === t[1] && g[2] === t[2])]!.ndcg).toFixed(4);
    console.log(
      `In-sample on Cranfield (for the ablation only): α_C 0.83 β 2 γ −2: ${at([0.4, 2, -2])}; α_C 0.83 only (β γ 0): ${at([0.4, 0, 0])}; β γ only (α_C 0.43): ${at([0, 2, -2])}`,
    );

    variants.forEach((v, vi) => {
      const bm = score(v, (q) => q.bm25);
      const de = score(v, (q) => q.dense);
      const mm = score(v, (q) => fuse(lists(v, q), { method: "minmax" }));
      const bestN = mean(de.ndcg) >= mean(bm.ndcg) ? (["dense", de] as const) : (["bm25", bm] as const);
      const bestR = mean(de.r100) >= mean(bm.r100) ? (["dense", de] as const) : (["bm25", bm] as const);
      const c = cv[vi]!;
      console.log(
        `\n${v.name}${vi === 0 ? " (CV: held-out folds)" : " (simulation; each query scored with its fold's constants)"}`,
      );
      console.log(`  bm25                 nDCG@10 ${mean(bm.ndcg).toFixed(4)}  R@100 ${mean(bm.r100).toFixed(4)}`);
      console.log(`  dense                nDCG@10 ${mean(de.ndcg).toFixed(4)}  R@100 ${mean(de.r100).toFixed(4)}`);
      console.log(
        `  minmax α=${v.alpha.toFixed(2)} (previous default) nDCG@10 ${mean(mm.ndcg).toFixed(4)}  R@100 ${mean(mm.r100).toFixed(4)}`,
      );
      const shipped = score(v, (q) => signalsFusion(listsAt(lsaStructureWeight(v.kappa), q), { shift: 0 }));
      console.log(
        `  signals, shipped constants nDCG@10 ${mean(shipped.ndcg).toFixed(4)}  R@100 ${mean(shipped.r100).toFixed(4)}${vi === 0 ? " (in-sample)" : ""}`,
      );
      console.log(`  signals (CV)         nDCG@10 ${mean(c.ndcg).toFixed(4)}  R@100 ${mean(c.r100).toFixed(4)}`);
      console.log(`  signals − best stage (${bestN[0]}): nDCG@10 ${cmp(bestN[1].ndcg, c.ndcg)}`);
      console.log(`  signals − best stage (${bestR[0]}): R@100 ${cmp(bestR[1].r100, c.r100)}`);
      console.log(
        `  signals − previous default (minmax): nDCG@10 ${cmp(mm.ndcg, c.ndcg)}; R@100 ${cmp(mm.r100, c.r100)}`,
      );
      const ws = v.qs.map((q) => signalsWeight(listsAt(lsaStructureWeight(v.kappa), q), { shift: 0 }));
      console.log(
        `  mean over queries: overlap@10 ${(ws.reduce((a, w) => a + w.overlap, 0) / ws.length).toFixed(3)}, confidence dense ${(ws.reduce((a, w) => a + w.confidenceDense, 0) / ws.length).toFixed(3)} / BM25 ${(ws.reduce((a, w) => a + w.confidenceBm25, 0) / ws.length).toFixed(3)}, α_q ${(ws.reduce((a, w) => a + w.dense, 0) / ws.length).toFixed(3)} (shipped constants)`,
      );
      console.log(
        `  previous default (minmax) − best stage: nDCG@10 ${f4(mean(mm.ndcg) - mean(bestN[1].ndcg))}; R@100 ${f4(mean(mm.r100) - mean(bestR[1].r100))}`,
      );
    });
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}
