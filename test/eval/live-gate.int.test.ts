/**
 * The live gate (ADR-0023 decision E): ingest the real KB into a temporary
 * Chroma, run every case's turns through the real graph and its retrieval
 * node, and assert conservative floors on the gold-bearing turns — dense-only
 * (the conservative lower bound the ADR names) and hybrid.
 *
 * BM25-only runs too, for attribution. Floors are the values measured with
 * the built-in embedder on the shipped data (2026-11-30, after the held-out
 * cases of docs/holdout.md were added; `retrace eval --embedder builtin
 * --mode dense|bm25|hybrid`) minus a margin, rounded down: 0.05 overall
 * (n=365), 0.10 per locale (n=157 / 103 / 105), so a real regression fails
 * and noise does not:
 *
 *   mode    measured hit@5  recall@5   floor hit@5  recall@5   measured hit@5 en / es-419 / pt-BR   floor
 *   dense   0.882           0.837      0.83         0.78       0.866 / 0.825 / 0.962                0.76 / 0.72 / 0.86
 *   bm25    0.948           0.910      0.89         0.86       0.943 / 0.913 / 0.990                0.84 / 0.81 / 0.89
 *   hybrid  0.962           0.926      0.91         0.87       0.955 / 0.942 / 0.990                0.85 / 0.84 / 0.89
 *
 * The committed baseline (kb/eval/baseline.json, written by `retrace eval
 * --update-baseline` with the default embedder: `auto`, i.e. the corpus-fit
 * LSA embedder when no model weights are present) is compared with a hybrid
 * sweep over that embedder, exact dense search and the retriever's own
 * defaults, as `retrace eval` runs it, with the CLI's default tolerance.
 */
import os from "node:os";
import path from "node:path";
import { mkdtemp, rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildReport } from "../../src/eval/report/aggregate.js";
import { assertComparable, readBaseline } from "../../src/eval/gate/baseline.js";
import { allEvaluators } from "../../src/eval/measures/evaluators.js";
import { gate } from "../../src/eval/gate/gate.js";
import { OWN_GRAPH_CAPTURE } from "../../src/app/own-graph/parallel.js";
import { runGraphSweep } from "../../src/eval/sweep/external-graph.js";
import { loadData } from "../../src/system.js";
import { buildGraph } from "../../src/graph/build.js";
import { openStore, type ChromaStoreHandle } from "../../src/retrieval/chroma-server.js";
import { ChromaDenseIndex, requireCurrentCollection } from "../../src/retrieval/chroma-store.js";
import { HashingEmbedder } from "../../src/retrieval/embedders/builtin.js";
import { resolveEmbedder } from "../../src/retrieval/embedders/resolve.js";
import { openExactDense } from "../../src/retrieval/exact-dense.js";
import { HybridRetriever } from "../../src/retrieval/hybrid.js";
import { ingest } from "../../src/retrieval/ingest.js";
import type { RetrievalMode } from "../../src/retrieval/types.js";
import { SHIPPED_KB } from "../helpers/fixtures.js";

const FLOORS: Record<RetrievalMode, { minHit: number; minRecall: number }> = {
  dense: { minHit: 0.83, minRecall: 0.78 },
  bm25: { minHit: 0.89, minRecall: 0.86 },
  hybrid: { minHit: 0.91, minRecall: 0.87 },
};
const LOCALE_HIT_FLOORS: Record<RetrievalMode, Record<string, number>> = {
  dense: { en: 0.76, "es-419": 0.72, "pt-BR": 0.86 },
  bm25: { en: 0.84, "es-419": 0.81, "pt-BR": 0.89 },
  hybrid: { en: 0.85, "es-419": 0.84, "pt-BR": 0.89 },
};

let dataDir: string;
let store: ChromaStoreHandle;
let data: Awaited<ReturnType<typeof loadData>>;
let retriever: HybridRetriever;
/** The default embedder's retriever (LSA fitted on the KB, exact dense search), as `retrace eval` builds it. */
let lsaRetriever: HybridRetriever;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), "retrace-live-gate-"));
  data = await loadData(SHIPPED_KB, path.join(SHIPPED_KB, "eval", "cases.jsonl"));
  store = await openStore({ url: undefined, dataDir });
  const embedder = new HashingEmbedder();
  await ingest({ client: store.client, chunks: data.chunks, embedder, kbHash: data.hashes.kb });
  const current = await requireCurrentCollection(store.client, {
    kbHash: data.hashes.kb,
    embedder,
    fallbackToLatest: false,
  });
  retriever = new HybridRetriever({ chunks: data.chunks, embedder, dense: new ChromaDenseIndex(current.collection) });
  const lsa = (await resolveEmbedder("lsa", { corpus: { chunks: data.chunks, stateDir: path.join(dataDir, "lsa") } }))
    .embedder;
  await ingest({ client: store.client, chunks: data.chunks, embedder: lsa, kbHash: data.hashes.kb });
  const lsaCurrent = await requireCurrentCollection(store.client, {
    kbHash: data.hashes.kb,
    embedder: lsa,
    fallbackToLatest: false,
  });
  lsaRetriever = new HybridRetriever({ chunks: data.chunks, embedder: lsa, dense: await openExactDense(lsaCurrent) });
});

afterAll(async () => {
  await store?.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function sweep(mode: RetrievalMode, over: HybridRetriever = retriever) {
  const evaluators = allEvaluators({ k: 5 });
  const turns = await runGraphSweep({
    graph: buildGraph({ store: over, cards: data.kb, defaults: { k: 5, mode } }),
    cases: data.cases,
    evaluators,
    knownIds: new Set(data.kb.byId.keys()),
    k: 5,
    ...OWN_GRAPH_CAPTURE,
  });
  // Every turn ran and was traced: none failed, no gold-bearing turn went without retrieval.
  expect(turns.filter((t) => t.report.error !== undefined || t.report.noRetrieval === true)).toEqual([]);
  return buildReport({
    run: {
      datasetHash: data.hashes.dataset,
      kbHash: data.hashes.kb,
      source: "own",
      embedder: over.embedder.id,
      k: 5,
      store: "local",
      mode,
      rerank: null,
    },
    turns: turns.map((t) => t.report),
    evaluators,
  });
}

describe.each(["dense", "bm25", "hybrid"] as const)("live gate, %s retrieval", (mode: RetrievalMode) => {
  it("meets the floors on every gold-bearing turn of the shipped eval set", async () => {
    const report = await sweep(mode);
    const hit = report.aggregates.retrieval_hit_at_k!;
    const recall = report.aggregates.retrieval_recall_at_k!;
    const perLocale = Object.entries(report.splits.locale).map(
      ([l, a]) => `${l} hit@5 ${a.retrieval_hit_at_k?.mean.toFixed(3)} (n=${a.retrieval_hit_at_k?.n})`,
    );
    console.log(
      `live gate ${mode}: hit@5 ${hit.mean.toFixed(3)} recall@5 ${recall.mean.toFixed(3)} (n=${hit.n}); ${perLocale.join(", ")}`,
    );
    expect(hit.n).toBe(365); // gold-bearing turns, as `retrace check` counts them
    const result = gate(report, FLOORS[mode]);
    expect(result.failures).toEqual([]);
    expect(result.passed).toBe(true);
    for (const [locale, floor] of Object.entries(LOCALE_HIT_FLOORS[mode])) {
      expect(report.splits.locale[locale]?.retrieval_hit_at_k?.mean, `${mode} hit@5 ${locale}`).toBeGreaterThanOrEqual(
        floor,
      );
    }
  }, 300_000);
});

describe("regression gate against the committed baseline", () => {
  it("the hybrid sweep does not regress beyond the tolerance", async () => {
    const baseline = await readBaseline(path.join(SHIPPED_KB, "eval", "baseline.json"));
    const report = await sweep("hybrid", lsaRetriever);
    expect(baseline.config.embedder).toMatch(/^lsa-128-/);
    expect(assertComparable(baseline, report)).toEqual([]); // same dataset, KB, k and retrieval config
    const result = gate(report, {}, baseline);
    expect(result.failures).toEqual([]);
    expect(result.passed).toBe(true);
  }, 300_000);
});
