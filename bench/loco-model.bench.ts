/**
 * Leave-one-collection-out choice of the hybrid default over a **model
 * embedder** (issue 56; docs/fusion-and-tuning.md, "The default over a model
 * embedder"): the study of loco-fusion.bench.ts (same collections, fitting
 * rule, choice rule and scorer) with the dense branch of a transformers.js
 * model instead of LSA, and the candidates of MODEL_CANDIDATES (fixed
 * constants: a model has no κ). The choice rule adds issue 56's acceptance
 * bound on recall: only candidates whose held-out R@100 is never more than
 * 0.01 below the better stage's may be chosen. The constants chosen are what
 * MODEL_HYBRID_DEFAULTS ships (src/retrieval/hybrid.ts); the run says whether
 * they still agree.
 *
 *   npm run bench -- loco-model
 *
 * The model: `BENCH_MODEL` (default `Xenova/bge-small-en-v1.5`) at
 * `BENCH_MODEL_DTYPE` (`fp32`, the default, or `q8`), from
 * `$RETRACE_MODELS_DIR` (`npm run models` fetches it). Each corpus is
 * embedded once: the vectors go through the content-addressed vector cache
 * (src/retrieval/vector-cache.ts) and the branch lists are cached
 * (bench/lib/branch-lists.ts). Embedding the four corpora (about 21,000
 * documents) takes most of an hour on a shared 2-core machine the first time;
 * then the study runs in about a minute.
 */
import { pairedComparison, type PairedComparison } from "../src/eval/stats/bootstrap.js";
import { DEFAULT_EMBEDDING_MODEL, type ModelDtype } from "../src/retrieval/embedders/transformers.js";
import { MODEL_HYBRID_BM25, MODEL_HYBRID_DEFAULTS } from "../src/retrieval/hybrid.js";
import { branchLists } from "./lib/branch-lists.js";
import { MODEL_CANDIDATES, scoreLists, type Candidate, type Params } from "./lib/fusion-candidates.js";
import { locoStudy } from "./loco-fusion.bench.js";

const f4 = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(4)}`;
const cmpText = (c: PairedComparison | null) =>
  c === null ? "n/a" : `${f4(c.diff)} [${c.ci95?.map((x) => f4(x)).join(", ")}] p=${c.pValue.toFixed(4)}`;

/** Issue 56's acceptance bound on R@100, fixed before the study: a candidate that loses more than this to the better stage on any held-out collection is not chosen. */
const R100_BOUND = 0.01;

export function benchModel(env: NodeJS.ProcessEnv = process.env): { id: string; dtype: ModelDtype } {
  const dtype = env.BENCH_MODEL_DTYPE ?? "fp32";
  if (dtype !== "fp32" && dtype !== "q8") throw new Error(`BENCH_MODEL_DTYPE: fp32 or q8, not ${dtype}`);
  return { id: env.BENCH_MODEL ?? DEFAULT_EMBEDDING_MODEL, dtype };
}

export async function run(): Promise<void> {
  const model = benchModel();
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const { colls, rows, worst, chosen, shipped } = await locoStudy(log, {
    lists: (name) => branchLists(name, { log, model }),
    candidates: MODEL_CANDIDATES,
    maxR100Loss: R100_BOUND,
  });
  const label = `${model.id} ${model.dtype}`;
  console.log(`Stages (depth 100 per branch; BM25 k1 0.9 b 0.4; dense ${label}, exact cosine):\n`);
  console.log("| collection | queries | BM25 nDCG@10 / R@100 | dense nDCG@10 / R@100 |");
  console.log("|---|---:|---|---|");
  for (const [name, c] of colls)
    console.log(
      `| ${name} | ${c.lists.queries.length} | ${c.bm25.mNdcg.toFixed(4)} / ${c.bm25.mR100.toFixed(4)} | ${c.dense.mNdcg.toFixed(4)} / ${c.dense.mR100.toFixed(4)} |`,
    );
  console.log(
    "\nLeave-one-collection-out (constants fitted on the other three; margin = candidate − best stage, paired over the held-out queries, bootstrap 95% interval, sign-flip p, seed 42):\n",
  );
  console.log(
    "| held out | candidate | constants (fitted without it) | nDCG@10 | − best stage | R@100 | − best stage |",
  );
  console.log("|---|---|---|---:|---|---:|---|");
  for (const r of rows)
    console.log(
      `| ${r.heldOut} | ${r.candidate} | ${r.constants} | ${r.ndcg.toFixed(4)} | ${cmpText(r.ndcgMargin)} | ${r.r100.toFixed(4)} | ${cmpText(r.r100Margin)} |`,
    );
  console.log("\nWorst held-out margin per candidate (nDCG@10; the choice reads this column):\n");
  console.log("| candidate | worst nDCG@10 margin | on | mean of the four | worst R@100 margin |");
  console.log("|---|---:|---|---:|---:|");
  for (const w of [...worst].sort((a, b) => b.worst - a.worst))
    console.log(`| ${w.candidate.name} | ${f4(w.worst)} | ${w.where} | ${f4(w.mean)} | ${f4(w.worstR100)} |`);
  console.log(
    `\nChosen (among the candidates whose worst R@100 margin is at least −${R100_BOUND}: highest worst nDCG@10 case; within 0.002, the simpler): ${chosen.candidate.name}, worst ${f4(chosen.worst)} on ${chosen.where}.`,
  );
  console.log(
    `Its constants fitted on all four collections (the shipped ones; in-sample, no figure reported on them): ${chosen.candidate.describe(shipped)}.`,
  );
  const ships = `${MODEL_HYBRID_DEFAULTS.fusion}, dense ${MODEL_HYBRID_DEFAULTS.weights.dense}, BM25 k1 ${MODEL_HYBRID_BM25.k1} b ${MODEL_HYBRID_BM25.b}`;
  const agrees =
    chosen.candidate.name === `${MODEL_HYBRID_DEFAULTS.fusion} fixed` &&
    shipped.alpha === MODEL_HYBRID_DEFAULTS.weights.dense;
  console.log(
    `MODEL_HYBRID_DEFAULTS (src/retrieval/hybrid.ts) ships ${ships}: ${agrees ? "agrees with this study" : "DIFFERS from this study's choice"}.`,
  );
  // The model embedder's default before this study (RRF k 60, equal weights), nothing fitted.
  const rrf = MODEL_CANDIDATES.find((c) => c.name === "rrf") as Candidate;
  const prev: Params = { k: 60, alpha: 0.5 };
  console.log(`\nReference: the previous model default, ${rrf.describe(prev)} (nothing fitted):\n`);
  console.log("| collection | nDCG@10 | − best stage | R@100 | − best stage |");
  console.log("|---|---:|---|---:|---|");
  for (const [name, c] of colls) {
    const s = scoreLists(c.lists, (q) => rrf.rank(q, c.lists, prev));
    const bestN = c[c.best.ndcg];
    const bestR = c[c.best.r100];
    const mean = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0) / Math.max(1, m.size);
    console.log(
      `| ${name} | ${mean(s.ndcg).toFixed(4)} | ${cmpText(pairedComparison(bestN.ndcg, s.ndcg, { seed: 42 }))} | ${mean(s.r100).toFixed(4)} | ${cmpText(pairedComparison(bestR.r100, s.r100, { seed: 42 }))} |`,
    );
  }
}
