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
 * The embedder is part of the candidate: with `--embedders builtin,lsa`
 * (the default) every fusion configuration is scored once with the built-in
 * hashed n-grams and once with the corpus-fit LSA embedder, and the CV picks
 * among all of them (candidate 0 = the current defaults with the built-in
 * embedder). Each embedder's own CV (its rows only) is printed too. Dense
 * lists come from the exact search over the vectors stored in Chroma
 * (src/retrieval/exact-dense.ts), so the figures are deterministic.
 * Intermediate lists are cached nowhere: a run takes a few minutes.
 *
 * Run: npx tsx bench/choose-default.ts [--kb DIR] [--split FILE] [--out FILE] [--embedders builtin,lsa]
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../src/atomic.js";
import { loadBeirDataset } from "../src/research/beir.js";
import { allEvaluators } from "../src/eval/measures/evaluators.js";
import { ndcgAtK, recallAtK } from "../src/eval/measures/metrics.js";
import { OWN_GRAPH_CAPTURE } from "../src/app/own-graph/parallel.js";
import { runGraphSweep } from "../src/eval/sweep/external-graph.js";
import { openSystem as openSession } from "../src/system.js";
import { configToJSON, readConfigFile } from "../src/research/tune-config.js";
import {
  DEFAULT_GRID,
  assignFolds,
  bm25Key,
  candidateKey,
  crossValidate,
  expandGrid,
  scoreMatrix,
  scoreUnit,
  type Candidate,
  type TuneUnit,
} from "../src/research/tune.js";
import { buildGraph } from "../src/graph/build.js";
import { loadSplit } from "../src/kb/split.js";
import type { Locale } from "../src/kb/types.js";
import { BM25Index } from "../src/retrieval/bm25.js";
import { openStore } from "../src/retrieval/chroma-server.js";
import { requireCurrentCollection } from "../src/retrieval/chroma-store.js";
import { resolveEmbedder } from "../src/retrieval/embedders/resolve.js";
import { openExactDense } from "../src/retrieval/exact-dense.js";
import { HYBRID_DEFAULTS, HybridRetriever } from "../src/retrieval/hybrid.js";
import { ingest } from "../src/retrieval/ingest.js";
import { dedupeParents, topK } from "../src/retrieval/parents.js";
import { beirChunks } from "../src/research/beir.js";
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
/** `--confirm FILE`: measure that configuration (a config file with `tuned.embedder`) on the holdout part, beside BM25 and each embedder's dense and RRF; no CV, no Cranfield. */
const CONFIRM = arg("--confirm", "");
const PART = CONFIRM === "" ? "tune" : "holdout";
/** `--alpha 0.1,0.2,...`: the dense weights searched (default the grid of retrace tune, 0.1–0.6). */
const ALPHA = arg("--alpha", "")
  .split(",")
  .filter((x) => x.trim() !== "")
  .map(Number);
const EMBEDDERS = arg("--embedders", "builtin,lsa")
  .split(",")
  .map((e) => e.trim())
  .filter((e) => e !== "");
const FOLDS = 5;
const SEED = 42;
const K = 5;
const CRAN_DEPTH = 100;

export async function run(): Promise<void> {
  if (!existsSync(SPLIT)) {
    print(
      `No split file at ${SPLIT}: the default is chosen on the tune part only, so nothing is run. Give --split FILE.`,
    );
    return;
  }
  const current: Candidate = {
    fusion: HYBRID_DEFAULTS.fusion,
    rrfK: HYBRID_DEFAULTS.rrfK,
    weights: { ...HYBRID_DEFAULTS.weights },
    denseK: HYBRID_DEFAULTS.denseK,
    bm25K: HYBRID_DEFAULTS.bm25K,
    bm25: { k1: 1.2, b: 0.75 },
  };
  const grid = ALPHA.length > 0 ? { ...DEFAULT_GRID, alpha: ALPHA } : DEFAULT_GRID;
  const candidates = expandGrid(grid, current);
  const depth = Math.max(...DEFAULT_GRID.denseK, ...DEFAULT_GRID.bm25K);
  const perEmbedder: { name: string; units: TuneUnit[]; recall: Map<string, TuneUnit> }[] = [];
  for (const spec of EMBEDDERS) {
    const units: TuneUnit[] = [];
    const recallUnitsOf = new Map<string, TuneUnit>();

    // The eval set's tune part: one sweep through the real graph for each turn's query and dense list.
    const session = await openSession({
      kbDir: KB,
      casesFile: path.join(KB, "eval", "cases.jsonl"),
      store: "auto",
      embedder: spec,
      dataDir: path.join(REPO_ROOT, ".retrace", "choose-default-kb"),
    });
    try {
      const split = await loadSplit(SPLIT, session.cases);
      const cases = session.cases.filter((c) => split?.partOf.get(c.id) === PART);
      const turns = await runGraphSweep({
        graph: buildGraph({
          store: session.retriever,
          cards: session.kb,
          defaults: { k: K, denseK: depth, bm25K: depth, mode: "hybrid" },
        }),
        ...OWN_GRAPH_CAPTURE,
        cases,
        evaluators: allEvaluators({ k: K }),
        knownIds: new Set(session.kb.byId.keys()),
        k: K,
        concurrency: 1,
      });
      const indexes = new Map(DEFAULT_GRID.bm25.map((p) => [bm25Key(p), BM25Index.build(session.chunks, p)]));
      for (const { report: t, retrieval } of turns) {
        const trace = retrieval?.trace;
        if (t.gold.length === 0 || trace?.stages.dense === undefined) continue;
        const gold = new Set(t.gold);
        units.push({
          group: `kb:${t.caseId}`,
          stratum: `kb:${t.locale}`,
          dense: trace.stages.dense,
          bm25: new Map(
            [...indexes].map(([key, idx]) => [
              key,
              idx.search(trace.query, { topN: depth, locale: t.locale as Locale }),
            ]),
          ),
          evaluate: (fused) =>
            ndcgAtK(
              topK(dedupeParents(fused), K).map((r) => r.id),
              gold,
              K,
            ),
        });
      }
      print(
        `[${spec}: ${session.embedder?.id}] Eval set: ${PART} part of ${path.relative(REPO_ROOT, SPLIT)}: ${cases.length} cases, ${units.length} gold-bearing turns.`,
      );
    } finally {
      await session.close();
    }

    // Cranfield: its queries' dense lists from a real Chroma collection (exact search), BM25 in-process.
    if (CONFIRM !== "") {
      perEmbedder.push({ name: spec, units, recall: recallUnitsOf });
      continue;
    }
    const data = await loadBeirDataset(CRANFIELD);
    const chunks = beirChunks(data.corpus);
    const cranDir = path.join(REPO_ROOT, ".retrace", "choose-default-cranfield");
    const { embedder } = await resolveEmbedder(spec, { corpus: { chunks, stateDir: path.join(cranDir, "lsa") } });
    const handle = await openStore({ dataDir: cranDir });
    try {
      await ingest({ client: handle.client, chunks, embedder, kbHash: data.corpusHash });
      const coll = await requireCurrentCollection(handle.client, {
        kbHash: data.corpusHash,
        embedder,
        fallbackToLatest: false,
      });
      const retriever = new HybridRetriever({ chunks, embedder, dense: await openExactDense(coll) });
      const indexes = new Map(DEFAULT_GRID.bm25.map((p) => [bm25Key(p), BM25Index.build(chunks, p)]));
      for (const q of data.queries) {
        const trace = await retriever.retrieve(q.text, {
          mode: "dense",
          k: CRAN_DEPTH,
          denseK: CRAN_DEPTH,
          locale: "en",
        });
        const gains = data.qrels.get(q.id) as Map<string, number>;
        const bm25 = new Map(
          [...indexes].map(([key, idx]) => [key, idx.search(q.text, { topN: CRAN_DEPTH, locale: "en" })]),
        );
        const base = {
          group: `cran:${q.id}`,
          stratum: "cran",
          dense: trace.stages.dense ?? [],
          bm25,
          depth: CRAN_DEPTH,
        };
        units.push({
          ...base,
          evaluate: (fused) =>
            ndcgAtK(
              fused.slice(0, 10).map((r) => r.id),
              gains,
              10,
            ),
        });
        recallUnitsOf.set(base.group, {
          ...base,
          evaluate: (fused) =>
            recallAtK(
              fused.slice(0, CRAN_DEPTH).map((r) => r.id),
              gains,
              CRAN_DEPTH,
            ),
        });
      }
      print(`[${spec}: ${embedder.id}] Cranfield: ${data.queries.length} queries.`);
    } finally {
      await handle.close();
    }
    perEmbedder.push({ name: spec, units, recall: recallUnitsOf });
  }
  const units = perEmbedder[0]?.units ?? [];

  const groupIds = [...new Set(units.map((u) => u.group))].sort();
  const stratumOf = new Map(units.map((u) => [u.group, u.stratum]));
  const groups = groupIds.map((id) => ({ id, stratum: stratumOf.get(id) as string }));
  const nKb = groups.filter((g) => g.id.startsWith("kb:")).length;
  const nCran = groups.length - nKb;
  const weights = groups.map((g) => (g.id.startsWith("kb:") ? 1 / nKb : 1 / nCran));
  // One row per (embedder, configuration); row 0 = the current defaults with the first embedder.
  const rows: { embedder: number; candidate: Candidate }[] = [];
  const matrix: number[][] = [];
  perEmbedder.forEach((e, ei) => {
    matrix.push(...scoreMatrix(e.units, candidates, groupIds));
    for (const c of candidates) rows.push({ embedder: ei, candidate: c });
  });
  const label = (r: number) => `${perEmbedder[rows[r]!.embedder]!.name}: ${candidateKey(rows[r]!.candidate)}`;
  const folds = assignFolds(groups, FOLDS, SEED);
  const mean = (xs: number[]) => xs.reduce((s, v) => s + v, 0) / Math.max(1, xs.length);
  const cranGroups = groups.filter((g) => g.id.startsWith("cran:"));
  const kbLocales = [...new Set(groups.filter((g) => g.id.startsWith("kb:")).map((g) => g.stratum))].sort();
  const report = (title: string, rowIdx: number[]) => {
    // rowIdx[0] must be row 0 (the current defaults) so crossValidate's paired test is against them.
    const sub = rowIdx.map((r) => matrix[r] as number[]);
    const cv = crossValidate(sub, groups, FOLDS, SEED, weights);
    const chosen = (g: { id: string }) => rowIdx[Number(cv.chosenPerFold[folds.get(g.id) as number])] as number;
    const held = (pred: (g: { id: string; stratum: string }) => boolean) =>
      mean(groups.filter(pred).map((g) => cv.heldOut.get(g.id) ?? 0));
    const r100 = mean(
      cranGroups.map(
        (g) =>
          scoreUnit(perEmbedder[rows[chosen(g)]!.embedder]!.recall.get(g.id) as TuneUnit, rows[chosen(g)]!.candidate) ??
          0,
      ),
    );
    print(
      `\n${title}: pooled ${FOLDS}-fold CV (seed ${SEED}; folds stratified by set and locale; each set weighs half), ${rowIdx.length} configurations:`,
    );
    cv.chosenPerFold.forEach((c, f) => print(`  fold ${f + 1}: ${label(rowIdx[Number(c)] as number)}`));
    print(
      `  eval-set tune part, nDCG@${K} held out: ${held((g) => g.id.startsWith("kb:")).toFixed(4)} (${kbLocales.map((l) => `${l.slice(3)} ${held((g) => g.stratum === l).toFixed(4)}`).join(", ")})`,
    );
    print(
      `  Cranfield held out: nDCG@10 ${held((g) => g.id.startsWith("cran:")).toFixed(4)}, R@100 ${r100.toFixed(4)}`,
    );
    print(`  best on all tuning data: ${label(rowIdx[cv.final] as number)}`);
    return rowIdx[cv.final] as number;
  };
  // Reference rows on all tuning data (nothing chosen): BM25 alone, each embedder's dense alone and equal-weight RRF.
  const kbMean = (xs: (u: TuneUnit) => number, us: TuneUnit[], pred: (u: TuneUnit) => boolean) => {
    const byGroup = new Map<string, number[]>();
    for (const u of us.filter(pred)) byGroup.set(u.group, [...(byGroup.get(u.group) ?? []), xs(u)]);
    return mean([...byGroup.values()].map(mean));
  };
  const only = (which: "dense" | "bm25"): Candidate => ({
    ...current,
    fusion: "rrf",
    weights: which === "dense" ? { dense: 1, bm25: 0 } : { dense: 0, bm25: 1 },
  });
  print(
    `\nReference (${CONFIRM === "" ? "all tuning data" : "the holdout part"}, fixed configurations; eval set nDCG@5 by locale, Cranfield nDCG@10 / R@100):`,
  );
  const line = (name: string, us: TuneUnit[], rec: Map<string, TuneUnit>, c: Candidate) =>
    print(
      `  ${name.padEnd(34)} ${kbLocales
        .map(
          (l) =>
            `${l.slice(3)} ${kbMean(
              (u) => scoreUnit(u, c) ?? 0,
              us,
              (u) => u.stratum === l,
            ).toFixed(4)}`,
        )
        .join("  ")}  ` +
        (cranGroups.length === 0
          ? ""
          : `cran ${kbMean(
              (u) => scoreUnit(u, c) ?? 0,
              us,
              (u) => u.stratum === "cran",
            ).toFixed(4)} / ${mean(cranGroups.map((g) => scoreUnit(rec.get(g.id) as TuneUnit, c) ?? 0)).toFixed(4)}`),
    );
  for (const bm25 of DEFAULT_GRID.bm25)
    line(`bm25 alone (${bm25Key(bm25)})`, perEmbedder[0]!.units, perEmbedder[0]!.recall, { ...only("bm25"), bm25 });
  for (const e of perEmbedder) {
    line(`${e.name} dense alone`, e.units, e.recall, only("dense"));
    line(`${e.name} hybrid rrf(k=60) equal`, e.units, e.recall, current);
  }
  if (CONFIRM !== "") {
    const file = await readConfigFile(CONFIRM);
    const r = file.retrieval ?? {};
    const c: Candidate = {
      fusion: r.fusion ?? current.fusion,
      rrfK: r.rrfK ?? current.rrfK,
      weights: { dense: r.weights?.dense ?? current.weights.dense, bm25: r.weights?.bm25 ?? current.weights.bm25 },
      denseK: r.denseK ?? current.denseK,
      bm25K: r.bm25K ?? current.bm25K,
      bm25: { k1: r.bm25?.k1 ?? 1.2, b: r.bm25?.b ?? 0.75 },
    };
    const name = String((file.tuned as Record<string, unknown> | undefined)?.embedder ?? EMBEDDERS[0]);
    const e = perEmbedder.find((x) => x.name === name);
    if (e === undefined)
      throw new Error(`--confirm ${CONFIRM}: embedder ${name} not among --embedders ${EMBEDDERS.join(",")}`);
    line(`${name} ${candidateKey(c)}`, e.units, e.recall, c);
    return;
  }
  for (let ei = 0; ei < perEmbedder.length; ei++) {
    const idx = rows.map((r, i) => (r.embedder === ei ? i : -1)).filter((i) => i >= 0);
    if (ei > 0) idx.unshift(0);
    report(`Embedder ${perEmbedder[ei]!.name} only`, idx);
  }
  const best =
    perEmbedder.length > 1
      ? report(
          "All embedders",
          rows.map((_, i) => i),
        )
      : 0;
  const final = rows[best]!.candidate;
  print(`  the default candidate: ${label(best)}`);
  if (OUT !== "") {
    await writeFileAtomic(
      OUT,
      configToJSON({
        version: 1,
        retrieval: {
          fusion: final.fusion,
          rrfK: final.rrfK,
          weights: final.weights,
          denseK: final.denseK,
          bm25K: final.bm25K,
          bm25: final.bm25,
        },
        tuned: {
          by: "bench/choose-default.ts: pooled 5-fold CV over the eval set's tune part and Cranfield",
          embedder: perEmbedder[rows[best]!.embedder]!.name,
          seed: SEED,
          folds: FOLDS,
        },
      }),
    );
    print(`  written to ${OUT}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
