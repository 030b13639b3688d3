/**
 * Fusion methods side by side (docs/fusion-and-tuning.md), on the shipped
 * eval set (every gold-bearing turn, routed by locale; nDCG@5 over cards)
 * and on Cranfield (nDCG@10 with graded gains, R@100):
 *
 *   BM25, dense (built-in hashed n-grams, then the corpus-fit LSA embedder
 *   fitted on the set's chunks; exact cosine in memory), hybrid
 *   under each fusion method with equal weights, "tuned" — the
 *   cross-validated figure of retrace tune's search (each query scored by the
 *   configuration chosen on the other folds; folds by case, stratified by
 *   locale, seed 42) — beside SQLite FTS5 and LangChain's EnsembleRetriever
 *   (BM25Retriever + MemoryVectorStore over the same embedder, weights 0.5/0.5).
 *
 * Each row has n and a 95% percentile bootstrap interval over queries
 * (2,000 resamples, seed 42). The dense index is exact (in memory), so the
 * numbers can differ slightly from `retrace beir`, whose dense list comes from
 * Chroma's HNSW index.
 */
import { existsSync } from "node:fs";
import { EnsembleRetriever } from "@langchain/classic/retrievers/ensemble";
import { MemoryVectorStore } from "@langchain/classic/vectorstores/memory";
import { BM25Retriever } from "@langchain/community/retrievers/bm25";
import { beirChunks, loadBeirDataset } from "../src/research/beir.js";
import { dedupeFirst, ndcgAtK, recallAtK, type Gold } from "../src/eval/measures/metrics.js";
import { bootstrapCI } from "../src/eval/stats/bootstrap.js";
import {
  DEFAULT_GRID,
  assignFolds,
  bm25Key,
  crossValidate,
  expandGrid,
  scoreMatrix,
  scoreUnit,
  type Candidate,
  type TuneUnit,
} from "../src/research/tune.js";
import type { Chunk, Locale } from "../src/kb/types.js";
import { BM25Index } from "../src/retrieval/bm25.js";
import { InMemoryDenseIndex } from "../src/retrieval/dense.js";
import { HashingEmbedder } from "../src/retrieval/embedders/builtin.js";
import { FUSION_METHODS, fuse } from "../src/retrieval/fusion.js";
import { HYBRID_DEFAULTS, hybridDefaultsFor } from "../src/retrieval/hybrid.js";
import { LsaEmbedder, fitLsa } from "../src/retrieval/embedders/lsa.js";
import { dedupeParents } from "../src/retrieval/parents.js";
import type { Embedder, Ranked } from "../src/retrieval/types.js";
import { CRANFIELD_DIR } from "./cranfield.bench.js";
import { loadEvalSet } from "./lib/eval-set.js";
import { Fts5Index } from "./lib/fts5.js";
import { EmbedderAsLangChain, chunksToDocuments, parentsOf } from "./lib/langchain.js";
import { fmtNum, print, printTable } from "./lib/report.js";

const SEED = 42;

interface Query {
  id: string;
  group: string;
  locale: Locale;
  text: string;
  gold: Gold;
}

interface Setup {
  name: string;
  chunks: Chunk[];
  queries: Query[];
  depth: number;
  /** Cut of nDCG. */
  k: number;
  /** Whether ranked chunk ids map to cards (eval set) or are documents (BEIR). */
  cards: boolean;
  routed: boolean;
  recallDepth?: number;
}

type Row = { system: string; perQuery: Map<string, { ndcg: number; recall: number | null; locale: string }> };

function score(
  s: Setup,
  q: Query,
  rankedIds: readonly string[],
): { ndcg: number; recall: number | null; locale: string } {
  const ids = dedupeFirst(rankedIds);
  return {
    ndcg: ndcgAtK(ids, q.gold, s.k) ?? 0,
    recall: s.recallDepth === undefined ? null : (recallAtK(ids, q.gold, s.recallDepth) ?? 0),
    locale: q.locale,
  };
}

const idsOf = (s: Setup, ranked: readonly Ranked[]) =>
  s.cards ? dedupeParents(ranked).map((r) => r.id) : ranked.map((r) => r.id);

async function measure(s: Setup, embedder: Embedder, peers: boolean): Promise<void> {
  const dense = await InMemoryDenseIndex.fromChunks(s.chunks, embedder);
  const indexes = new Map(DEFAULT_GRID.bm25.map((p) => [bm25Key(p), BM25Index.build(s.chunks, p)]));
  const shipped = bm25Key({ k1: 1.2, b: 0.75 });
  const lists = new Map<string, { dense: Ranked[]; bm25: Map<string, Ranked[]> }>();
  for (const q of s.queries) {
    const opt = s.routed ? { locale: q.locale } : {};
    const d = await dense.search(await embedder.embedQuery(q.text, { locale: q.locale }), { topN: s.depth, ...opt });
    lists.set(q.id, {
      dense: d,
      bm25: new Map([...indexes].map(([key, idx]) => [key, idx.search(q.text, { topN: s.depth, ...opt })])),
    });
  }
  const rows: Row[] = [];
  const row = (system: string, rank: (q: Query) => string[] | Promise<string[]>) =>
    (async () => {
      const perQuery: Row["perQuery"] = new Map();
      for (const q of s.queries) perQuery.set(q.id, score(s, q, await rank(q)));
      rows.push({ system, perQuery });
    })();
  await row("BM25 (k1 1.2, b 0.75)", (q) => idsOf(s, lists.get(q.id)!.bm25.get(shipped)!));
  await row(`dense (${embedder.id})`, (q) => idsOf(s, lists.get(q.id)!.dense));
  for (const method of FUSION_METHODS) {
    await row(`hybrid ${method}, equal weights`, (q) => {
      const l = lists.get(q.id)!;
      return idsOf(
        s,
        fuse(
          [
            { name: "dense", ranked: l.dense },
            { name: "bm25", ranked: l.bm25.get(shipped)! },
          ],
          { method, rrfK: HYBRID_DEFAULTS.rrfK },
        ),
      );
    });
  }

  // The shipped default for this embedder (hybridDefaultsFor): fusion, weights, depths (BEIR: both at the depth) and BM25 k1/b.
  {
    const base = hybridDefaultsFor(embedder);
    const d = base.defaults;
    const bm25 = BM25Index.build(s.chunks, base.bm25);
    await row(
      `hybrid shipped default (${d.fusion} ${d.weights.dense}/${d.weights.bm25}, k1 ${base.bm25.k1} b ${base.bm25.b})`,
      (q) => {
        const l = lists.get(q.id)!;
        const opt = s.routed ? { locale: q.locale } : {};
        const dk = s.cards ? d.denseK : s.depth;
        const bk = s.cards ? d.bm25K : s.depth;
        return idsOf(
          s,
          fuse(
            [
              { name: "dense", ranked: l.dense.slice(0, dk), weight: d.weights.dense },
              { name: "bm25", ranked: bm25.search(q.text, { topN: bk, ...opt }), weight: d.weights.bm25 },
            ],
            { method: d.fusion, rrfK: d.rrfK },
          ),
        );
      },
    );
  }

  // Tuned: each query scored by the configuration chosen on the other folds (folds by case/query, stratified by locale).
  const grid = {
    ...DEFAULT_GRID,
    denseK: s.cards ? DEFAULT_GRID.denseK.filter((x) => x <= s.depth) : [s.depth],
    bm25K: s.cards ? DEFAULT_GRID.bm25K.filter((x) => x <= s.depth) : [s.depth],
  };
  const current: Candidate = {
    fusion: HYBRID_DEFAULTS.fusion,
    rrfK: HYBRID_DEFAULTS.rrfK,
    weights: { ...HYBRID_DEFAULTS.weights },
    denseK: Math.min(HYBRID_DEFAULTS.denseK, s.depth),
    bm25K: Math.min(HYBRID_DEFAULTS.bm25K, s.depth),
    bm25: { k1: 1.2, b: 0.75 },
  };
  const candidates = expandGrid(grid, current);
  const unitOf = (q: Query): TuneUnit => ({
    group: q.group,
    stratum: q.locale,
    dense: lists.get(q.id)!.dense,
    bm25: lists.get(q.id)!.bm25,
    evaluate: (fused) => score(s, q, idsOf(s, fused)).ndcg,
  });
  const units = s.queries.map(unitOf);
  const groupIds = [...new Set(units.map((u) => u.group))].sort();
  const stratum = new Map(units.map((u) => [u.group, u.stratum]));
  const groups = groupIds.map((id) => ({ id, stratum: stratum.get(id)! }));
  const cv = crossValidate(scoreMatrix(units, candidates, groupIds), groups, 5, SEED);
  const folds = assignFolds(groups, 5, SEED);
  await row(`tuned (5-fold CV over ${candidates.length} configurations, held out)`, (q) => {
    const c = candidates[Number(cv.chosenPerFold[folds.get(q.group)!])]!;
    const l = lists.get(q.id)!;
    return idsOf(
      s,
      fuse(
        [
          { name: "dense", ranked: l.dense.slice(0, c.denseK), weight: c.weights.dense },
          { name: "bm25", ranked: l.bm25.get(bm25Key(c.bm25))!.slice(0, c.bm25K), weight: c.weights.bm25 },
        ],
        { method: c.fusion, rrfK: c.rrfK },
      ),
    );
  });
  void scoreUnit;

  if (peers) {
    const fts = new Fts5Index(s.chunks, s.cards ? "unicode61 remove_diacritics 2" : "porter unicode61");
    try {
      await row(`SQLite FTS5 bm25()`, (q) => {
        const hits = fts.search(q.text, s.depth, s.routed ? q.locale : undefined);
        return s.cards ? hits.map((h) => h.parentId) : hits.map((h) => h.id);
      });
    } finally {
      fts.close();
    }
    const lcEmb = new EmbedderAsLangChain(embedder);
    const byLocale = new Map<string, EnsembleRetriever>();
    for (const locale of s.routed ? [...new Set(s.queries.map((q) => q.locale))] : ["*"]) {
      const docs = chunksToDocuments(s.chunks.filter((c) => locale === "*" || c.locale === locale));
      const store = await MemoryVectorStore.fromDocuments(docs, lcEmb);
      byLocale.set(
        locale,
        new EnsembleRetriever({
          retrievers: [BM25Retriever.fromDocuments(docs, { k: s.depth }), store.asRetriever({ k: s.depth })],
          weights: [0.5, 0.5],
        }),
      );
    }
    await row("LangChain EnsembleRetriever (BM25Retriever + MemoryVectorStore, 0.5/0.5)", async (q) => {
      const docs = await byLocale.get(s.routed ? q.locale : "*")!.invoke(q.text);
      return s.cards ? parentsOf(docs) : docs.map((d) => String(d.metadata.chunkId));
    });
  }

  const locales = s.routed ? [...new Set(s.queries.map((q) => q.locale))].sort() : [];
  const ci = (xs: number[]) => {
    const c = bootstrapCI(xs, { seed: SEED });
    return c === null ? "" : ` [${fmtNum(c[0])}, ${fmtNum(c[1])}]`;
  };
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  printTable(
    `${s.name}, embedder ${embedder.id}: nDCG@${s.k}${s.recallDepth !== undefined ? ` and R@${s.recallDepth}` : ""}, depth ${s.depth} per branch (95% bootstrap CI over queries, seed ${SEED})`,
    [
      { header: "system" },
      { header: "n", align: "right" },
      { header: `nDCG@${s.k} [CI]`, align: "right" },
      ...(s.recallDepth !== undefined ? [{ header: `R@${s.recallDepth} [CI]`, align: "right" as const }] : []),
      ...locales.map((l) => ({ header: `nDCG@${s.k} ${l}`, align: "right" as const })),
    ],
    rows.map((r) => {
      const v = [...r.perQuery.values()];
      const nd = v.map((x) => x.ndcg);
      const rc = v.map((x) => x.recall ?? 0);
      return [
        r.system,
        String(v.length),
        `${fmtNum(mean(nd))}${ci(nd)}`,
        ...(s.recallDepth !== undefined ? [`${fmtNum(mean(rc))}${ci(rc)}`] : []),
        ...locales.map((l) => fmtNum(mean(v.filter((x) => x.locale === l).map((x) => x.ndcg)))),
      ];
    }),
  );
  print(
    `tuned: chosen per fold: ${cv.chosenPerFold
      .map((c) => {
        const x = candidates[Number(c)]!;
        return `${x.fusion} ${x.weights.dense}/${x.weights.bm25}`;
      })
      .join(", ")}`,
  );
}

/** Each setup with the built-in hashed n-grams (plus the FTS5 and LangChain peers) and with the corpus-fit LSA embedder fitted on its chunks. */
async function both(s: Setup): Promise<void> {
  await measure(s, new HashingEmbedder(), true);
  await measure(s, new LsaEmbedder(fitLsa(s.chunks)), false);
}

export async function run(): Promise<void> {
  const evalSet = await loadEvalSet();
  await both({
    name: "Shipped eval set (all cases; every gold-bearing turn, routed by locale)",
    chunks: evalSet.chunks,
    queries: evalSet.queries
      .filter((q) => q.gold.length > 0)
      .map((q) => ({ id: `${q.caseId}#${q.turn}`, group: q.caseId, locale: q.locale, text: q.text, gold: q.gold })),
    depth: 20,
    k: 5,
    cards: true,
    routed: true,
  });
  if (!existsSync(CRANFIELD_DIR)) {
    print(`Cranfield not found at ${CRANFIELD_DIR}; skipping its part.`);
    return;
  }
  const data = await loadBeirDataset(CRANFIELD_DIR);
  await both({
    name: "Cranfield (225 queries)",
    chunks: beirChunks(data.corpus),
    queries: data.queries.map((q) => ({
      id: q.id,
      group: q.id,
      locale: "en",
      text: q.text,
      gold: data.qrels.get(q.id)!,
    })),
    depth: 100,
    k: 10,
    cards: false,
    routed: false,
    recallDepth: 100,
  });
}
