/**
 * How the shipped hybrid default is chosen (docs/fusion-and-tuning.md):
 * one k-fold cross-validation over two pooled tuning sets — the `tune` part
 * of the shipped eval set (nDCG@5 over cards per case) and Cranfield's
 * queries (nDCG@10, graded) — each set weighing half in the selection mean,
 * folds stratified by set and locale, seeded. Prints, per fold, the chosen
 * configuration; the held-out (cross-validated) figures per set, beside the
 * same groups under BM25 alone and under the current defaults; and the
 * configuration best on all tuning data (the candidate for the default).
 * Never touches the `holdout` part: measure that with `retrace eval` after.
 *
 * Run: npx tsx bench/choose-default.ts [--kb DIR] [--split FILE] [--out FILE]
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../src/atomic.js";
import { loadBeirDataset } from "../src/eval/beir.js";
import { allEvaluators } from "../src/eval/evaluators.js";
import { ndcgAtK, recallAtK } from "../src/eval/metrics.js";
import { runSweep } from "../src/eval/runner.js";
import { openSystem as openSession } from "../src/system.js";
import { configToJSON } from "../src/eval/tune-config.js";
import { DEFAULT_GRID, assignFolds, bm25Key, candidateKey, crossValidate, expandGrid, scoreMatrix, scoreUnit, type Candidate, type TuneUnit } from "../src/eval/tune.js";
import { buildGraph } from "../src/graph/build.js";
import { loadSplit } from "../src/kb/split.js";
import type { Locale } from "../src/kb/types.js";
import { BM25Index } from "../src/retrieval/bm25.js";
import { openStore } from "../src/retrieval/chroma-server.js";
import { ChromaDenseIndex, requireCurrentCollection } from "../src/retrieval/chroma-store.js";
import { HashingEmbedder } from "../src/retrieval/embedders/builtin.js";
import { HYBRID_DEFAULTS, HybridRetriever } from "../src/retrieval/hybrid.js";
import { ingest } from "../src/retrieval/ingest.js";
import { dedupeParents, topK } from "../src/retrieval/parents.js";
import { beirChunks } from "../src/eval/beir.js";
import { REPO_ROOT } from "./lib/eval-set.js";
import { print } from "./lib/report.js";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const KB = path.resolve(arg("--kb", path.join(REPO_ROOT, "kb")));
const SPLIT = path.resolve(arg("--split", path.join(KB, "eval", "split.json")));
const CRANFIELD = path.resolve(REPO_ROOT, "..", "shared", "datasets", "cranfield");
const OUT = arg("--out", "");
const FOLDS = 5;
const SEED = 42;
const K = 5;
const CRAN_DEPTH = 100;

export async function run(): Promise<void> {
  if (!existsSync(SPLIT)) {
    print(`No split file at ${SPLIT}: the default is chosen on the tune part only, so nothing is run. Give --split FILE.`);
    return;
  }
  const embedder = new HashingEmbedder();
  const current: Candidate = { fusion: HYBRID_DEFAULTS.fusion, rrfK: HYBRID_DEFAULTS.rrfK, weights: { ...HYBRID_DEFAULTS.weights }, denseK: HYBRID_DEFAULTS.denseK, bm25K: HYBRID_DEFAULTS.bm25K, bm25: { k1: 1.2, b: 0.75 } };
  const candidates = expandGrid(DEFAULT_GRID, current);
  const depth = Math.max(...DEFAULT_GRID.denseK, ...DEFAULT_GRID.bm25K);
  const units: TuneUnit[] = [];
  const recallUnits = new Map<string, TuneUnit>();
  const bm25Only = new Map<string, number>();

  // The eval set's tune part: one sweep through the real graph for each turn's query and dense list.
  const session = await openSession({ kbDir: KB, casesFile: path.join(KB, "eval", "cases.jsonl"), store: "auto", embedder: "builtin", dataDir: path.join(REPO_ROOT, ".retrace", "choose-default-kb") });
  try {
    const split = await loadSplit(SPLIT, session.cases);
    const cases = session.cases.filter((c) => split?.partOf.get(c.id) === "tune");
    const { turns, traces } = await runSweep({
      graph: buildGraph({ store: session.retriever, cards: session.kb, defaults: { k: K, denseK: depth, bm25K: depth, mode: "hybrid" } }),
      cases,
      evaluators: allEvaluators({ k: K }),
      knownIds: new Set(session.kb.byId.keys()),
      storeBacked: true,
      concurrency: 1,
    });
    const indexes = new Map(DEFAULT_GRID.bm25.map((p) => [bm25Key(p), BM25Index.build(session.chunks, p)]));
    for (const t of turns) {
      const trace = traces.forTurn(t.caseId, t.turn);
      if (t.gold.length === 0 || trace?.stages.dense === undefined) continue;
      const gold = new Set(t.gold);
      units.push({
        group: `kb:${t.caseId}`,
        stratum: `kb:${t.locale}`,
        dense: trace.stages.dense,
        bm25: new Map([...indexes].map(([key, idx]) => [key, idx.search(trace.query, { topN: depth, locale: t.locale as Locale })])),
        evaluate: (fused) => ndcgAtK(topK(dedupeParents(fused), K).map((r) => r.id), gold, K),
      });
    }
    print(`Eval set: tune part of ${path.relative(REPO_ROOT, SPLIT)}: ${cases.length} cases, ${units.length} gold-bearing turns.`);
  } finally {
    await session.close();
  }

  // Cranfield: its queries' dense lists from a real Chroma collection, BM25 in-process.
  const data = await loadBeirDataset(CRANFIELD);
  const chunks = beirChunks(data.corpus);
  const handle = await openStore({ dataDir: path.join(REPO_ROOT, ".retrace", "choose-default-cranfield") });
  try {
    await ingest({ client: handle.client, chunks, embedder, kbHash: data.corpusHash });
    const coll = await requireCurrentCollection(handle.client, { kbHash: data.corpusHash, embedder, fallbackToLatest: false });
    const retriever = new HybridRetriever({ chunks, embedder, dense: new ChromaDenseIndex(coll.collection) });
    const indexes = new Map(DEFAULT_GRID.bm25.map((p) => [bm25Key(p), BM25Index.build(chunks, p)]));
    for (const q of data.queries) {
      const trace = await retriever.retrieve(q.text, { mode: "dense", k: CRAN_DEPTH, denseK: CRAN_DEPTH, locale: "en" });
      const gains = data.qrels.get(q.id) as Map<string, number>;
      const bm25 = new Map([...indexes].map(([key, idx]) => [key, idx.search(q.text, { topN: CRAN_DEPTH, locale: "en" })]));
      const base = { group: `cran:${q.id}`, stratum: "cran", dense: trace.stages.dense ?? [], bm25, depth: CRAN_DEPTH };
      units.push({ ...base, evaluate: (fused) => ndcgAtK(fused.slice(0, 10).map((r) => r.id), gains, 10) });
      recallUnits.set(base.group, { ...base, evaluate: (fused) => recallAtK(fused.slice(0, CRAN_DEPTH).map((r) => r.id), gains, CRAN_DEPTH) });
      const b = bm25.get(bm25Key({ k1: 1.2, b: 0.75 })) ?? [];
      bm25Only.set(base.group, ndcgAtK(b.slice(0, 10).map((r) => r.id), gains, 10) ?? 0);
      bm25Only.set(`${base.group}#r100`, recallAtK(b.map((r) => r.id), gains, CRAN_DEPTH) ?? 0);
    }
    print(`Cranfield: ${data.queries.length} queries.`);
  } finally {
    await handle.close();
  }

  const groupIds = [...new Set(units.map((u) => u.group))].sort();
  const stratumOf = new Map(units.map((u) => [u.group, u.stratum]));
  const groups = groupIds.map((id) => ({ id, stratum: stratumOf.get(id) as string }));
  const nKb = groups.filter((g) => g.id.startsWith("kb:")).length;
  const nCran = groups.length - nKb;
  const weights = groups.map((g) => (g.id.startsWith("kb:") ? 1 / nKb : 1 / nCran));
  const matrix = scoreMatrix(units, candidates, groupIds);
  const cv = crossValidate(matrix, groups, FOLDS, SEED, weights);

  // Held-out figures per set, and Cranfield's held-out R@100 of the configuration each fold chose.
  const folds = assignFolds(groups, FOLDS, SEED);
  const mean = (xs: number[]) => xs.reduce((s, v) => s + v, 0) / Math.max(1, xs.length);
  const held = (prefix: string) => mean(groups.filter((g) => g.id.startsWith(prefix)).map((g) => cv.heldOut.get(g.id) ?? 0));
  const defaults = (prefix: string) => mean(groups.map((g, i) => (g.id.startsWith(prefix) ? (matrix[0]?.[i] ?? 0) : Number.NaN)).filter((v) => !Number.isNaN(v)));
  const cranGroups = groups.filter((g) => g.id.startsWith("cran:"));
  const r100 = mean(cranGroups.map((g) => scoreUnit(recallUnits.get(g.id) as TuneUnit, candidates[Number(cv.chosenPerFold[folds.get(g.id) as number])] as Candidate) ?? 0));
  print(`\nPooled ${FOLDS}-fold CV (seed ${SEED}; folds stratified by set and locale; each set weighs half), ${candidates.length} configurations:`);
  cv.chosenPerFold.forEach((c, f) => print(`  fold ${f + 1}: ${candidateKey(candidates[Number(c)] as Candidate)}`));
  print(`  eval-set tune part, nDCG@${K} held out: ${held("kb:").toFixed(4)} (current defaults on the same cases: ${defaults("kb:").toFixed(4)})`);
  print(
    `  Cranfield nDCG@10 held out: ${held("cran:").toFixed(4)} (BM25 alone ${mean(cranGroups.map((g) => bm25Only.get(g.id) ?? 0)).toFixed(4)}, current defaults ${defaults("cran:").toFixed(4)}); ` +
      `R@100 held out: ${r100.toFixed(4)} (BM25 alone ${mean(cranGroups.map((g) => bm25Only.get(`${g.id}#r100`) ?? 0)).toFixed(4)})`,
  );
  const final = candidates[cv.final] as Candidate;
  print(`  best on all tuning data (the default candidate): ${candidateKey(final)}`);
  if (OUT !== "") {
    await writeFileAtomic(
      OUT,
      configToJSON({
        version: 1,
        retrieval: { fusion: final.fusion, rrfK: final.rrfK, weights: final.weights, denseK: final.denseK, bm25K: final.bm25K, bm25: final.bm25 },
        tuned: { by: "bench/choose-default.ts: pooled 5-fold CV over the eval set's tune part and Cranfield", seed: SEED, folds: FOLDS },
      }),
    );
    print(`  written to ${OUT}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
