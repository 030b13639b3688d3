/**
 * The live gate (ADR-0023 decision E): ingest the real KB into a temporary
 * Chroma, run every case's turns through the real graph and its retrieval
 * node, and assert conservative floors on the gold-bearing turns — dense-only
 * (the conservative lower bound the ADR names) and hybrid.
 *
 * Floors are the values measured with the built-in embedder on the shipped
 * data (2026-11-29, `retrace eval --embedder builtin --mode dense|hybrid`)
 * minus a margin of 0.05, so a real regression fails and noise does not:
 *
 *   mode    measured hit@5  recall@5   floor hit@5  recall@5
 *   dense   0.882           0.824      0.83         0.77
 *   hybrid  0.962           0.916      0.91         0.86
 *
 * The same hybrid sweep is also compared with the committed baseline
 * (kb/eval/baseline.json, written by `retrace eval --embedder builtin
 * --update-baseline`) with the CLI's default tolerance: a triad mean may not
 * drop by more than 0.02.
 */
import os from "node:os";
import path from "node:path";
import { mkdtemp, rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildReport } from "../../src/eval/aggregate.js";
import { assertComparable, readBaseline } from "../../src/eval/baseline.js";
import { allEvaluators } from "../../src/eval/evaluators.js";
import { gate } from "../../src/eval/gate.js";
import { runSweep } from "../../src/eval/runner.js";
import { loadData } from "../../src/eval/session.js";
import { buildGraph } from "../../src/graph/build.js";
import { openStore, type ChromaStoreHandle } from "../../src/retrieval/chroma-server.js";
import { ChromaDenseIndex, openCurrentCollection } from "../../src/retrieval/chroma-store.js";
import { HashingEmbedder } from "../../src/retrieval/embedders/builtin.js";
import { HybridRetriever } from "../../src/retrieval/hybrid.js";
import { ingest } from "../../src/retrieval/ingest.js";
import type { RetrievalMode } from "../../src/retrieval/types.js";
import { SHIPPED_KB } from "../helpers/fixtures.js";

const FLOORS: Record<"dense" | "hybrid", { minHit: number; minRecall: number }> = {
  dense: { minHit: 0.83, minRecall: 0.77 },
  hybrid: { minHit: 0.91, minRecall: 0.86 },
};

let dataDir: string;
let store: ChromaStoreHandle;
let data: Awaited<ReturnType<typeof loadData>>;
let retriever: HybridRetriever;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), "retrace-live-gate-"));
  data = await loadData(SHIPPED_KB, path.join(SHIPPED_KB, "eval", "cases.jsonl"));
  store = await openStore({ url: undefined, dataDir });
  const embedder = new HashingEmbedder();
  await ingest({ client: store.client, chunks: data.chunks, embedder, kbHash: data.hashes.kb });
  const current = await openCurrentCollection(store.client, { kbHash: data.hashes.kb, embedder, fallbackToLatest: false });
  if (current === null) throw new Error("the ingested collection is not current");
  retriever = new HybridRetriever({ chunks: data.chunks, embedder, dense: new ChromaDenseIndex(current.collection) });
});

afterAll(async () => {
  await store?.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function sweep(mode: RetrievalMode) {
  const evaluators = allEvaluators({ k: 5 });
  const { turns } = await runSweep({
    graph: buildGraph({ store: retriever, cards: data.kb, defaults: { k: 5, mode } }),
    cases: data.cases,
    evaluators,
    knownIds: new Set(data.kb.byId.keys()),
    storeBacked: true,
  });
  return buildReport({
    run: {
      datasetHash: data.hashes.dataset,
      kbHash: data.hashes.kb,
      embedder: retriever.embedder.id,
      k: 5,
      store: "local",
      mode,
      rerank: null,
      started: new Date().toISOString(),
      durationMs: 0,
    },
    turns,
    evaluators,
  });
}

describe.each(["dense", "hybrid"] as const)("live gate, %s retrieval", (mode: RetrievalMode & keyof typeof FLOORS) => {
  it("meets the floors on every gold-bearing turn of the shipped eval set", async () => {
    const report = await sweep(mode);
    const hit = report.aggregates.retrieval_hit_at_k!;
    const recall = report.aggregates.retrieval_recall_at_k!;
    const perLocale = Object.entries(report.splits.locale).map(([l, a]) => `${l} hit@5 ${a.retrieval_hit_at_k?.mean.toFixed(3)} (n=${a.retrieval_hit_at_k?.n})`);
    console.log(`live gate ${mode}: hit@5 ${hit.mean.toFixed(3)} recall@5 ${recall.mean.toFixed(3)} (n=${hit.n}); ${perLocale.join(", ")}`);
    expect(hit.n).toBe(212);
    const result = gate(report, FLOORS[mode]);
    expect(result.failures).toEqual([]);
    expect(result.passed).toBe(true);
  }, 120_000);
});

describe("regression gate against the committed baseline", () => {
  it("the hybrid sweep does not regress beyond the tolerance", async () => {
    const baseline = await readBaseline(path.join(SHIPPED_KB, "eval", "baseline.json"));
    const report = await sweep("hybrid");
    expect(assertComparable(baseline, report)).toEqual([]); // same dataset, KB, k and retrieval config
    const result = gate(report, {}, baseline);
    expect(result.failures).toEqual([]);
    expect(result.passed).toBe(true);
  }, 120_000);
});
