import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { loadKnowledgeBase } from "../../src/kb/cards.js";
import { chunkKnowledgeBase } from "../../src/kb/chunk.js";
import type { Chunk, Locale } from "../../src/kb/types.js";
import { BM25Index } from "../../src/retrieval/bm25.js";
import { InMemoryDenseIndex } from "../../src/retrieval/dense.js";
import { HashingEmbedder } from "../../src/retrieval/embedders/builtin.js";
import { RRF_K, minMaxFusion, reciprocalRankFusion } from "../../src/retrieval/fusion.js";
import {
  HYBRID_DEFAULTS,
  HybridRetriever,
  hybridDefaultsFor,
  isModelEmbedderId,
  type HybridRetrieverOptions,
} from "../../src/retrieval/hybrid.js";
import { dedupeParents } from "../../src/retrieval/parents.js";
import type { Embedder, Ranked, RetrievalTrace, Reranker } from "../../src/retrieval/types.js";
import { MINI_KB } from "../helpers/fixtures.js";

const chunk = (parentId: string, n: number, locale: Locale, section: string, body: string): Chunk => ({
  id: `${parentId}#${n}`,
  parentId,
  locale,
  title: parentId,
  section,
  text: `${section}\n${body}`,
});

/** A small synthetic KB: several chunks per card so that parent dedup has work to do. */
const CHUNKS: Chunk[] = [
  chunk(
    "card-freeze",
    1,
    "en",
    "What freezing does",
    "Freezing your card blocks new card payments and ATM withdrawals.",
  ),
  chunk("card-freeze", 2, "en", "How to freeze", "Open the app, tap Card, then Freeze. Unfreeze the same way."),
  chunk("fees", 1, "en", "Monthly fee", "There is no monthly fee for the standard account."),
  chunk("fees", 2, "en", "ATM fees", "Out-of-network ATM withdrawals cost a fee of 2.50."),
  chunk("refund-timelines", 1, "en", "Card refunds", "A merchant refund reaches your balance in 3 to 5 business days."),
  chunk("refund-timelines", 2, "en", "Duplicate charges", "A duplicate pending charge drops off within 3 days."),
  chunk(
    "lost-card",
    1,
    "en",
    "Report a lost card",
    "If your card is lost or stolen, freeze it and order a replacement.",
  ),
  chunk("es-congelar-tarjeta", 1, "es-419", "Qué hace", "Congelar bloquea compras nuevas con la tarjeta."),
  chunk("es-congelar-tarjeta", 2, "es-419", "Cómo congelar", "En la app, toca Tarjeta y luego Congelar."),
  chunk("es-comisiones", 1, "es-419", "Comisiones", "No cobramos comisión mensual por la cuenta."),
  chunk(
    "pt-chaves-pix",
    1,
    "pt-BR",
    "O que é uma chave",
    "Uma chave PIX identifica sua conta: CPF, celular ou e-mail.",
  ),
  chunk("pt-bloquear-cartao", 1, "pt-BR", "Bloquear o cartão", "No app, toque em Cartão e depois em Bloquear."),
];

/** The real built-in embedder, counting calls (to check what each mode runs). */
class CountingEmbedder extends HashingEmbedder {
  queries = 0;
  override async embedQuery(text: string): Promise<number[]> {
    this.queries += 1;
    return super.embedQuery(text);
  }
}

/** A fake cross-encoder (no model weights can be loaded here): prefers texts mentioning "replacement". */
class FakeKeywordReranker implements Reranker {
  readonly id = "fake-keyword-reranker";
  calls = 0;
  async score(_query: string, texts: string[]): Promise<number[]> {
    this.calls += 1;
    return texts.map((t) => (t.includes("replacement") ? 10 : 0));
  }
}

async function makeRetriever(overrides: Partial<HybridRetrieverOptions> = {}, chunks: Chunk[] = CHUNKS) {
  const embedder = new CountingEmbedder();
  const dense = await InMemoryDenseIndex.fromChunks(chunks, embedder);
  const retriever = new HybridRetriever({ chunks, embedder, dense, ...overrides });
  return { retriever, embedder, dense };
}

function expectRanked(list: readonly Ranked[] | undefined): void {
  expect(list).toBeDefined();
  expect(list!.map((r) => r.rank)).toEqual(list!.map((_, i) => i + 1));
  expect(new Set(list!.map((r) => r.id)).size).toBe(list!.length);
}

function expectConsistent(trace: RetrievalTrace): void {
  const { stages } = trace;
  for (const stage of [stages.dense, stages.bm25, stages.reranked].filter((s) => s !== undefined)) expectRanked(stage);
  expectRanked(stages.fused);
  expectRanked(stages.parents);
  expect(stages.parents).toEqual(dedupeParents(stages.reranked ?? stages.fused));
  expect(trace.retrievedIds).toEqual(stages.parents.slice(0, trace.k).map((r) => r.id));
}

describe("HybridRetriever", () => {
  it("records every stage of the hybrid pipeline and the resolved config", async () => {
    const { retriever } = await makeRetriever();
    const trace = await retriever.retrieve("how do I freeze my card?", { turn: 2 });
    expect(Object.keys(trace.stages)).toEqual(["dense", "bm25", "fused", "parents"]);
    expect(trace.turn).toBe(2);
    expect(trace.query).toBe("how do I freeze my card?");
    expect(trace.k).toBe(5);
    expect("locale" in trace).toBe(false);
    expect(trace.config).toEqual({
      embedder: "builtin-hashed-ngrams-384-v1",
      denseK: 20,
      bm25K: 20,
      fusion: { method: "rrf", params: { k: RRF_K } },
      settings: { weights: { dense: 1, bm25: 1 }, bm25: { k1: 1.2, b: 0.75 } },
      rerank: null,
      mode: "hybrid",
    });
    expectConsistent(trace);
    // The fused stage is RRF of the two recorded branches.
    expect(trace.stages.fused).toEqual(
      reciprocalRankFusion([
        { name: "dense", ranked: trace.stages.dense! },
        { name: "bm25", ranked: trace.stages.bm25! },
      ]),
    );
    expect(trace.retrievedIds).toHaveLength(5);
    expect(trace.retrievedIds[0]).toBe("card-freeze");
    expect(Object.keys(trace.timingsMs).sort()).toEqual(["bm25", "dense", "embed", "fusion", "parents", "total"]);
    for (const ms of Object.values(trace.timingsMs)) expect(ms).toBeGreaterThanOrEqual(0);
    expect(JSON.parse(JSON.stringify(trace))).toEqual(trace);
  });

  it("filters both branches by locale and records it", async () => {
    const { retriever } = await makeRetriever();
    const trace = await retriever.retrieve("congelar mi tarjeta", { locale: "es-419", k: 3 });
    expect(trace.locale).toBe("es-419");
    const esIds = new Set(CHUNKS.filter((c) => c.locale === "es-419").map((c) => c.id));
    for (const r of [...trace.stages.dense!, ...trace.stages.bm25!]) expect(esIds.has(r.id)).toBe(true);
    expect(trace.retrievedIds).toEqual(["es-congelar-tarjeta", "es-comisiones"]);
    expectConsistent(trace);
  });

  it("cuts the branches at denseK and bm25K, and the cards at k", async () => {
    const { retriever } = await makeRetriever();
    const trace = await retriever.retrieve("card fee", { denseK: 3, bm25K: 2, k: 2 });
    expect(trace.stages.dense).toHaveLength(3);
    expect(trace.stages.bm25!.length).toBeLessThanOrEqual(2);
    expect(trace.retrievedIds).toHaveLength(2);
    expect(trace.config).toMatchObject({ denseK: 3, bm25K: 2 });
    expectConsistent(trace);
  });

  it("dense-only mode: no BM25, fused is the dense list", async () => {
    const { retriever, embedder } = await makeRetriever();
    const trace = await retriever.retrieve("freeze card", { mode: "dense" });
    expect(Object.keys(trace.stages)).toEqual(["dense", "fused", "parents"]);
    expect(trace.stages.fused).toEqual(trace.stages.dense);
    expect(trace.config.mode).toBe("dense");
    expect(embedder.queries).toBe(1);
    expect(trace.timingsMs).not.toHaveProperty("bm25");
    expectConsistent(trace);
  });

  it("BM25-only mode: nothing embedded, fused is the BM25 list", async () => {
    const { retriever, embedder } = await makeRetriever();
    const trace = await retriever.retrieve("duplicate charges", { mode: "bm25" });
    expect(Object.keys(trace.stages)).toEqual(["bm25", "fused", "parents"]);
    expect(trace.stages.fused).toEqual(trace.stages.bm25);
    expect(embedder.queries).toBe(0);
    expect(trace.timingsMs).not.toHaveProperty("embed");
    expect(trace.retrievedIds[0]).toBe("refund-timelines");
    expectConsistent(trace);
  });

  it("reranks the fused head when asked, and dedups parents from the reranked list", async () => {
    const reranker = new FakeKeywordReranker();
    const { retriever } = await makeRetriever({ reranker, defaults: { rerankHead: 20 } });
    const off = await retriever.retrieve("freeze my card", { k: 3 });
    expect(off.stages.reranked).toBeUndefined();
    expect(reranker.calls).toBe(0);
    const on = await retriever.retrieve("freeze my card", { k: 3, rerank: true });
    expect(reranker.calls).toBe(1);
    expect(Object.keys(on.stages)).toEqual(["dense", "bm25", "fused", "reranked", "parents"]);
    expect(on.config.rerank).toBe("fake-keyword-reranker");
    expect(on.stages.reranked![0]!.id).toBe("lost-card#1");
    expect(on.retrievedIds[0]).toBe("lost-card");
    expect(on.timingsMs).toHaveProperty("rerank");
    expectConsistent(on);
  });

  it("a model embedder (`<model>@fp32` / `@q8`) starts from the model defaults the leave-one-collection-out study chose: CombMNZ, dense 0.6 / BM25 0.4, BM25 k1 0.9 b 0.4; a per-locale mix and the hashed n-grams keep RRF", async () => {
    // The study's choice (docs/fusion-and-tuning.md, "The default over a model embedder"), written out here, not read from the code.
    for (const id of ["Xenova/bge-small-en-v1.5@fp32", "Xenova/bge-small-en-v1.5@q8"]) {
      expect(isModelEmbedderId(id)).toBe(true);
      const d = hybridDefaultsFor({ id });
      expect(d.defaults).toMatchObject({
        fusion: "combmnz",
        weights: { dense: 0.6, bm25: 0.4 },
        denseK: 20,
        bm25K: 20,
      });
      expect(d.bm25).toEqual({ k1: 0.9, b: 0.4 });
    }
    for (const id of [
      "builtin-hash-v1",
      "locales(en=Xenova/bge-small-en-v1.5@fp32;es-419=lsa-128-916eee2dd175-v1)",
      "Xenova/bge-small-en-v1.5",
    ]) {
      expect(isModelEmbedderId(id)).toBe(false);
      expect(hybridDefaultsFor({ id }).defaults).toEqual(HYBRID_DEFAULTS);
    }
    // A retriever over such an embedder fuses with CombMNZ: a chunk both branches return is counted twice.
    class Named extends HashingEmbedder {
      override readonly id = "Xenova/bge-small-en-v1.5@q8";
    }
    const embedder = new Named();
    const retriever = new HybridRetriever({
      chunks: CHUNKS,
      embedder,
      dense: await InMemoryDenseIndex.fromChunks(CHUNKS, embedder),
    });
    expect(retriever.defaults.fusion).toBe("combmnz");
    expect([retriever.bm25.k1, retriever.bm25.b]).toEqual([0.9, 0.4]);
    const trace = await retriever.retrieve("freeze my card");
    expect(trace.config.fusion).toMatchObject({ method: "combmnz" });
  });

  it("respects the defaults it is given, including explicit zero weights", async () => {
    const { retriever } = await makeRetriever({ defaults: { k: 2, mode: "hybrid", weights: { dense: 0 } } });
    expect(retriever.defaults).toEqual({ ...HYBRID_DEFAULTS, k: 2, weights: { dense: 0, bm25: 1 } });
    const trace = await retriever.retrieve("ATM fee");
    expect(trace.k).toBe(2);
    // Dense contributes nothing: the fused head is the BM25 list, dense-only chunks follow with score 0.
    const bm25Ids = trace.stages.bm25!.map((r) => r.id);
    expect(trace.stages.fused.slice(0, bm25Ids.length).map((r) => r.id)).toEqual(bm25Ids);
    for (const r of trace.stages.fused.slice(bm25Ids.length)) expect(r.score).toBe(0);
  });

  it("uses a BM25 index it is given", async () => {
    const bm25 = BM25Index.build(CHUNKS, { k1: 0 });
    const { retriever } = await makeRetriever({ bm25 });
    expect(retriever.bm25).toBe(bm25);
    const trace = await retriever.retrieve("refund", { mode: "bm25" });
    expect(trace.stages.bm25).toEqual(bm25.search("refund", { topN: 20 }));
  });

  it("fuses with the method and weights asked per call, and records them with each list's contribution", async () => {
    const { retriever } = await makeRetriever();
    const trace = await retriever.retrieve("card fee", { fusion: "minmax", weights: { dense: 0.25, bm25: 0.75 } });
    expect(trace.config).toMatchObject({
      fusion: { method: "minmax", params: {} },
      settings: { weights: { dense: 0.25, bm25: 0.75 } },
    });
    expect(trace.stages.fused).toEqual(
      minMaxFusion([
        { name: "dense", ranked: trace.stages.dense!, weight: 0.25 },
        { name: "bm25", ranked: trace.stages.bm25!, weight: 0.75 },
      ]),
    );
    const top = trace.stages.fused[0]!;
    expect(top.contributions!.reduce((s, c) => s + c.value, 0)).toBeCloseTo(top.score, 12);
    await expect(retriever.retrieve("x", { weights: { dense: -1 } })).rejects.toThrow("weights.dense");
  });

  it("validates k, denseK, bm25K, mode and rerank", async () => {
    const { retriever } = await makeRetriever();
    await expect(retriever.retrieve("x", { k: 0 })).rejects.toThrow("Expected `k` to be a positive integer, got 0");
    await expect(retriever.retrieve("x", { denseK: -1 })).rejects.toThrow(
      "Expected `denseK` to be a positive integer, got -1",
    );
    await expect(retriever.retrieve("x", { bm25K: 2.5 })).rejects.toThrow(
      "Expected `bm25K` to be a positive integer, got 2.5",
    );
    await expect(retriever.retrieve("x", { mode: "sparse" as never })).rejects.toThrow(InvalidArgumentError);
    await expect(retriever.retrieve("x", { locale: "fr_FR" as Locale })).rejects.toThrow(InvalidArgumentError);
    await expect(retriever.retrieve("x", { rerank: true })).rejects.toThrow(
      "Expected `rerank` to be false when no reranker is configured, got true",
    );
  });

  it("validates its construction", async () => {
    const embedder = new HashingEmbedder();
    const dense = await InMemoryDenseIndex.fromChunks(CHUNKS, embedder);
    const make = (defaults: HybridRetrieverOptions["defaults"]) => () =>
      new HybridRetriever({ chunks: CHUNKS, embedder, dense, defaults });
    expect(make({ k: 0 })).toThrow("Expected `k` to be a positive integer, got 0");
    expect(make({ rerank: true })).toThrow(InvalidArgumentError);
    expect(make({ rrfK: -1 })).toThrow(InvalidArgumentError);
    expect(make({ fusion: "borda" as never })).toThrow("Expected `fusion` to be one of rrf, minmax, zscore, combmnz");
    expect(make({ weights: { bm25: Number.NaN } })).toThrow(InvalidArgumentError);
    expect(() => new HybridRetriever({ chunks: [...CHUNKS, CHUNKS[0]!], embedder, dense })).toThrow(/unique chunk ids/);
  });

  it("fails clearly when the dense index returns a chunk the retriever does not know and a rerank needs its text", async () => {
    const embedder: Embedder = new HashingEmbedder();
    const dense = await InMemoryDenseIndex.fromChunks(
      [...CHUNKS, chunk("ghost", 1, "en", "Freeze", "freeze card")],
      embedder,
    );
    const retriever = new HybridRetriever({ chunks: CHUNKS, embedder, dense, reranker: new FakeKeywordReranker() });
    await expect(retriever.retrieve("freeze card ghost", { rerank: true })).rejects.toThrow(/ghost#1/);
  });

  it("retrieves each card of the mini KB from its title, through the real card loader and chunker", async () => {
    const kb = await loadKnowledgeBase(MINI_KB);
    const chunks = chunkKnowledgeBase(kb);
    const { retriever } = await makeRetriever({}, chunks);
    for (const card of kb.cards) {
      const trace = await retriever.retrieve(card.title, { locale: card.locale, k: 1 });
      expect(trace.retrievedIds, card.title).toEqual([card.id]);
      expectConsistent(trace);
    }
  });
});
