/**
 * Fits β of the query-adaptive fusion (src/retrieval/fusion/adaptive.ts) on
 * Cranfield ONLY, and reports it honestly (docs/fusion-and-tuning.md,
 * "Adaptive weighting"): each β's in-sample nDCG@10 / R@100, and a 5-fold
 * cross-validation over queries (seed 42): β chosen on four folds by nDCG@10,
 * scored on the fifth, every query scored once by a β chosen without it.
 *
 * The lists are what `retrace beir` builds with the shipped defaults: the
 * corpus-fit LSA embedder (exact cosine over its vectors, in memory), BM25
 * k1 0.9 b 0.4, depth 100 per branch, base weight α = the latent share.
 *
 *   npx tsx bench/adaptive-fusion.ts [--dir ../shared/datasets/cranfield] [--state-dir DIR]
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { beirChunks, loadBeirDataset } from "../src/research/beir.js";
import { ndcgAtK } from "../src/eval/measures/metrics.js";
import { assignFolds } from "../src/research/tune.js";
import { pairedComparison } from "../src/eval/stats/bootstrap.js";
import { DEFAULT_ANALYZERS } from "../src/retrieval/analyzer.js";
import { BM25Index } from "../src/retrieval/bm25.js";
import { InMemoryDenseIndex } from "../src/retrieval/dense.js";
import { loadOrFitLsa } from "../src/retrieval/embedders/lsa.js";
import { adaptiveFusion, fuse } from "../src/retrieval/fusion.js";
import { LSA_HYBRID_BM25, lsaDenseWeight } from "../src/retrieval/hybrid.js";
import type { Ranked } from "../src/retrieval/types.js";
import { REPO_ROOT } from "./lib/eval-set.js";

const { values } = parseArgs({ options: { dir: { type: "string" }, "state-dir": { type: "string" } } });
const dir = values.dir ?? path.resolve(REPO_ROOT, "..", "shared", "datasets", "cranfield");
const DEPTH = 100;
const BETAS = [0, 0.5, 1, 1.5, 2, 3, 4, 6];

const data = await loadBeirDataset(dir);
const chunks = beirChunks(data.corpus);
const { embedder } = await loadOrFitLsa(chunks, {
  ...(values["state-dir"] !== undefined ? { dir: values["state-dir"] } : {}),
  analyzers: DEFAULT_ANALYZERS,
});
const dense = await InMemoryDenseIndex.fromChunks(chunks, embedder);
const bm25 = BM25Index.build(chunks, LSA_HYBRID_BM25, DEFAULT_ANALYZERS);
const alpha = lsaDenseWeight(embedder.latentShare);
const weights = { dense: alpha, bm25: Math.round((1 - alpha) * 100) / 100 };
console.log(
  `Cranfield: ${data.queries.length} queries; ${embedder.id}, latent share ${embedder.latentShare.toFixed(4)} → base α ${alpha}`,
);

interface Q {
  id: string;
  gains: Map<string, number>;
  dense: Ranked[];
  bm25: Ranked[];
}
const qs: Q[] = [];
for (const q of data.queries) {
  const v = await embedder.embedQuery(q.text, { locale: "en" });
  qs.push({
    id: q.id,
    gains: data.qrels.get(q.id) as Map<string, number>,
    dense: await dense.search(v, { topN: DEPTH, locale: "en" }),
    bm25: bm25.search(q.text, { topN: DEPTH, locale: "en" }),
  });
}

const recallAt = (ids: string[], gains: Map<string, number>, k: number) => {
  const rel = [...gains].filter(([, g]) => g > 0).map(([d]) => d);
  if (rel.length === 0) return 0;
  const top = new Set(ids.slice(0, k));
  return rel.filter((d) => top.has(d)).length / rel.length;
};
type System = (q: Q) => string[];
const lists = (q: Q) => [
  { name: "dense", ranked: q.dense, weight: weights.dense },
  { name: "bm25", ranked: q.bm25, weight: weights.bm25 },
];
const systems: Array<[string, System]> = [
  ["bm25", (q) => q.bm25.map((r) => r.id)],
  ["dense", (q) => q.dense.map((r) => r.id)],
  ["minmax (previous default)", (q) => fuse(lists(q), { method: "minmax" }).map((r) => r.id)],
  ...BETAS.map((b): [string, System] => [
    `adaptive β=${b}`,
    (q) => adaptiveFusion(lists(q), { beta: b }).map((r) => r.id),
  ]),
];
const per = new Map<string, { ndcg: Map<string, number>; r100: Map<string, number> }>();
for (const [name, sys] of systems) {
  const ndcg = new Map<string, number>();
  const r100 = new Map<string, number>();
  for (const q of qs) {
    const ids = sys(q).slice(0, DEPTH);
    ndcg.set(q.id, ndcgAtK(ids.slice(0, 10), q.gains, 10) ?? 0);
    r100.set(q.id, recallAt(ids, q.gains, 100));
  }
  per.set(name, { ndcg, r100 });
}
const mean = (m: Map<string, number>) => [...m.values()].reduce((s, x) => s + x, 0) / m.size;
console.log("\nIn-sample (every query; β not chosen here):");
for (const [name] of systems) {
  const p = per.get(name)!;
  console.log(`  ${name.padEnd(26)} nDCG@10 ${mean(p.ndcg).toFixed(4)}  R@100 ${mean(p.r100).toFixed(4)}`);
}

// 5-fold CV over queries: β chosen on the training folds by nDCG@10 (ties: the smaller β).
const folds = assignFolds(
  qs.map((q) => ({ id: q.id, stratum: "en" })),
  5,
  42,
);
const cvNdcg = new Map<string, number>();
const cvR100 = new Map<string, number>();
const chosen: number[] = [];
for (let f = 0; f < 5; f++) {
  const train = qs.filter((q) => folds.get(q.id) !== f);
  let best = BETAS[0] as number;
  let bestScore = -Infinity;
  for (const b of BETAS) {
    const p = per.get(`adaptive β=${b}`)!;
    const s = train.reduce((acc, q) => acc + (p.ndcg.get(q.id) as number), 0) / train.length;
    if (s > bestScore + 1e-12) {
      bestScore = s;
      best = b;
    }
  }
  chosen.push(best);
  const p = per.get(`adaptive β=${best}`)!;
  for (const q of qs.filter((x) => folds.get(x.id) === f)) {
    cvNdcg.set(q.id, p.ndcg.get(q.id) as number);
    cvR100.set(q.id, p.r100.get(q.id) as number);
  }
}
const fmt = (c: ReturnType<typeof pairedComparison>) =>
  c === null
    ? "n/a"
    : `${c.diff >= 0 ? "+" : ""}${c.diff.toFixed(4)} [${c.ci95?.map((x) => x.toFixed(4)).join(", ")}] p=${c.pValue.toFixed(4)}`;
console.log(`\n5-fold CV over queries (seed 42): β per fold ${chosen.join(", ")}`);
console.log(`  adaptive (CV)              nDCG@10 ${mean(cvNdcg).toFixed(4)}  R@100 ${mean(cvR100).toFixed(4)}`);
const ref = (name: string) => per.get(name)!;
for (const other of ["minmax (previous default)", "dense", "bm25"]) {
  console.log(
    `  CV − ${other}: nDCG@10 ${fmt(pairedComparison(ref(other).ndcg, cvNdcg, { seed: 42 }))}; R@100 ${fmt(pairedComparison(ref(other).r100, cvR100, { seed: 42 }))}`,
  );
}
