/**
 * Retrieval bench on the project's own data, side by side in one run:
 *
 *   BM25:   ours (`BM25Index`) vs LangChain's `BM25Retriever` vs SQLite FTS5 `bm25()`
 *   hybrid: ours (`HybridRetriever`: built-in embedder, Chroma dense index, RRF)
 *           vs LangChain's `EnsembleRetriever` over `BM25Retriever` + LangChain's
 *           Chroma vector store (same embedder wrapped as LangChain `Embeddings`)
 *
 * Same corpus (the 38-card KB's chunks) and queries (every gold-bearing turn of
 * kb/eval/cases.jsonl; see bench/lib/eval-set.ts) for every system; each
 * system returns 20 chunks a query, mapped to card ids by one rule (first
 * occurrence, before the cut; bench/lib/quality.ts) and scored with hit@5 and
 * nDCG@5. Latency: one untimed warm-up pass over all queries, then timed
 * passes, every call timed on its own; median and p95 over all calls.
 *
 * Two scopes: "all" searches the whole multilingual corpus (no locale given);
 * "routed" gives each system the case's locale (ours: `locale` option;
 * LangChain BM25: a retriever over that locale's documents; FTS5: `AND locale = ?`;
 * Chroma: `where {locale}` filter).
 *
 * A real local Chroma server is started for the hybrid part and always
 * stopped (try/finally); its data directory is a temp dir, removed after.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { EnsembleRetriever } from "@langchain/classic/retrievers/ensemble";
import { BM25Retriever } from "@langchain/community/retrievers/bm25";
import { Chroma } from "@langchain/community/vectorstores/chroma";
import type { Document } from "@langchain/core/documents";
import type { BaseRetriever } from "@langchain/core/retrievers";
import type { ChromaClient } from "chromadb";
import { kbHash } from "../src/kb/hash.js";
import { LOCALES, type Chunk, type Locale } from "../src/kb/types.js";
import { log } from "../src/log.js";
import { BM25Index } from "../src/retrieval/bm25.js";
import { connectChroma, startLocalChroma } from "../src/retrieval/chroma-server.js";
import { ChromaDenseIndex, getCollectionOrNull } from "../src/retrieval/chroma-store.js";
import { HashingEmbedder } from "../src/retrieval/embedders/builtin.js";
import { HybridRetriever } from "../src/retrieval/hybrid.js";
import { ingest } from "../src/retrieval/ingest.js";
import { dedupeFirst } from "../src/eval/measures/metrics.js";
import { loadEvalSet, type EvalQuery } from "./lib/eval-set.js";
import { Fts5Index } from "./lib/fts5.js";
import { EmbedderAsLangChain, chunksToDocuments, parentsOf } from "./lib/langchain.js";
import { comparePaired, scoreRankings, type Quality } from "./lib/quality.js";
import { fmtMs, fmtNum, print, printTable, summarizeLatency, timeEach, type LatencySummary } from "./lib/report.js";

/** The cut of the quality metrics. */
const K = 5;
/** Chunks every system returns per query (LangChain's `k`, our `topN` / `denseK` / `bm25K`, FTS5's LIMIT). */
const DEPTH = 20;
/** Timed passes over all queries. In-process BM25 is cheap, so it gets many; the Chroma-backed systems fewer. */
const REPS = { oursBm25: 50, fts5: 50, langchainBm25: 10, hybrid: 5 } as const;
const FTS5_TOKENIZER = "unicode61 remove_diacritics 2";

interface SystemResult {
  system: string;
  scope: "all" | "routed";
  quality: Quality;
  latency: LatencySummary;
}

type RankFn = (q: EvalQuery) => string[] | Promise<string[]>;

async function measure(
  system: string,
  scope: "all" | "routed",
  queries: readonly EvalQuery[],
  fn: RankFn,
  reps: number,
): Promise<SystemResult> {
  log.info(`retrieval bench: ${system} (${scope}), ${reps} timed passes over ${queries.length} queries`);
  const { results, samplesMs } = await timeEach(queries, fn, { warmup: 1, reps });
  return { system, scope, quality: scoreRankings(queries, results, K), latency: summarizeLatency(samplesMs) };
}

function resultRows(results: readonly SystemResult[]): string[][] {
  return results.map((r) => [
    r.system,
    r.scope,
    String(r.quality.n),
    fmtNum(r.quality.hit),
    fmtNum(r.quality.ndcg),
    fmtMs(r.latency.medianMs),
    fmtMs(r.latency.p95Ms),
    String(r.latency.calls),
  ]);
}

const RESULT_COLUMNS = [
  { header: "system" },
  { header: "scope" },
  { header: "n", align: "right" as const },
  { header: `hit@${K}`, align: "right" as const },
  { header: `nDCG@${K}`, align: "right" as const },
  { header: "median ms", align: "right" as const },
  { header: "p95 ms", align: "right" as const },
  { header: "timed calls", align: "right" as const },
];

function pairedLine(label: string, a: Quality, b: Quality): string {
  const hit = comparePaired(a.hits, b.hits);
  const ndcg = comparePaired(a.ndcgs, b.ndcgs);
  if (hit === null || ndcg === null) return `${label}: no common queries`;
  const ci = (c: [number, number] | null) =>
    c === null ? "-" : `[${c[0] >= 0 ? "+" : ""}${c[0].toFixed(3)}, ${c[1] >= 0 ? "+" : ""}${c[1].toFixed(3)}]`;
  const signed = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(4)}`;
  return (
    `${label} (n=${hit.n}): Δhit@${K} ${signed(hit.diff)} 95% CI ${ci(hit.ci95)} p=${hit.pValue.toFixed(4)}; ` +
    `ΔnDCG@${K} ${signed(ndcg.diff)} 95% CI ${ci(ndcg.ci95)} p=${ndcg.pValue.toFixed(4)}`
  );
}

function byLocale<T>(chunks: readonly Chunk[], make: (subset: Chunk[], locale: Locale) => T): Map<Locale, T> {
  const out = new Map<Locale, T>();
  for (const locale of LOCALES) {
    const subset = chunks.filter((c) => c.locale === locale);
    if (subset.length > 0) out.set(locale, make(subset, locale));
  }
  return out;
}

function pick<T>(m: ReadonlyMap<Locale, T>, locale: Locale): T {
  const v = m.get(locale);
  if (v === undefined) throw new Error(`no ${locale} documents in the corpus`);
  return v;
}

export async function run(): Promise<void> {
  const { chunks, queries, kb, cases } = await loadEvalSet();
  const localeCounts = LOCALES.map((l) => `${l} ${queries.filter((q) => q.locale === l).length}`).join(", ");
  print(
    `Corpus: ${chunks.length} chunks of ${kb.cards.length} cards (kb/cards). Queries: ${queries.length} gold-bearing turns of ${cases} cases (${localeCounts}).`,
  );
  print(
    "Query text: the turn's user text; after the first turn, the previous turn's user text + \" \" + this turn's text.",
  );
  print(
    `Every system returns ${DEPTH} chunks; chunk → card id (parentId), first occurrence kept, then cut at ${K}; hit@${K}, nDCG@${K} (binary gain) from src/eval/measures/metrics.ts.`,
  );
  print(`Scopes: "all" = whole multilingual corpus, no locale; "routed" = the case's locale only.`);
  print(
    `Latency: 1 untimed warm-up pass, then timed passes (each call on its own); median / p95 over all timed calls, ms.`,
  );

  // ---------------------------------------------------------------- BM25
  const docs = chunksToDocuments(chunks);
  const ours = BM25Index.build(chunks);
  const langchain = BM25Retriever.fromDocuments(docs, { k: DEPTH });
  const langchainByLocale = byLocale(chunks, (subset) =>
    BM25Retriever.fromDocuments(chunksToDocuments(subset), { k: DEPTH }),
  );
  const fts = new Fts5Index(chunks, FTS5_TOKENIZER);
  const bm25Results: SystemResult[] = [];
  try {
    bm25Results.push(
      await measure(
        "ours BM25Index",
        "all",
        queries,
        (q) => ours.search(q.text, { topN: DEPTH }).map((r) => r.parentId),
        REPS.oursBm25,
      ),
      await measure(
        "LangChain BM25Retriever",
        "all",
        queries,
        async (q) => parentsOf(await langchain.invoke(q.text)),
        REPS.langchainBm25,
      ),
      await measure(
        "SQLite FTS5 bm25()",
        "all",
        queries,
        (q) => fts.search(q.text, DEPTH).map((h) => h.parentId),
        REPS.fts5,
      ),
      await measure(
        "ours BM25Index",
        "routed",
        queries,
        (q) => ours.search(q.text, { topN: DEPTH, locale: q.locale }).map((r) => r.parentId),
        REPS.oursBm25,
      ),
      await measure(
        "LangChain BM25Retriever",
        "routed",
        queries,
        async (q) => parentsOf(await pick(langchainByLocale, q.locale).invoke(q.text)),
        REPS.langchainBm25,
      ),
      await measure(
        "SQLite FTS5 bm25()",
        "routed",
        queries,
        (q) => fts.search(q.text, DEPTH, q.locale).map((h) => h.parentId),
        REPS.fts5,
      ),
    );
  } finally {
    fts.close();
  }
  printTable(`BM25 (k1 = 1.2, b = 0.75 for all three)`, RESULT_COLUMNS, resultRows(bm25Results));
  print(
    "ours: per-locale analyzers (NFKC, lowercase, accent folding, stop words, Snowball stemming); unrouted queries are analysed per locale and merged by score.",
  );
  print(
    "LangChain: query lowercased and split on whitespace, documents not lowercased, substring counting, full corpus scan per query (its BM25Retriever as shipped).",
  );
  print(
    `FTS5: in-memory table, tokenize '${FTS5_TOKENIZER}'; query = NFC + lowercase, runs of letters/marks/digits, each token double-quoted, joined with OR (duplicates kept, no stemming, no stop words).`,
  );

  const find = (results: readonly SystemResult[], system: string, scope: "all" | "routed") => {
    const r = results.find((x) => x.system === system && x.scope === scope);
    if (r === undefined) throw new Error(`missing result ${system} ${scope}`);
    return r.quality;
  };
  print("\nPaired sign-flip tests (10,000 seeded resamples), B − A per query:");
  for (const scope of ["all", "routed"] as const) {
    print(
      `  ${pairedLine(`ours − LangChain BM25 [${scope}]`, find(bm25Results, "LangChain BM25Retriever", scope), find(bm25Results, "ours BM25Index", scope))}`,
    );
    print(
      `  ${pairedLine(`ours − FTS5 [${scope}]`, find(bm25Results, "SQLite FTS5 bm25()", scope), find(bm25Results, "ours BM25Index", scope))}`,
    );
  }

  const localeRows: string[][] = [];
  for (const locale of LOCALES) {
    const cell = (system: string, scope: "all" | "routed") => find(bm25Results, system, scope).byLocale.get(locale);
    const n = cell("ours BM25Index", "all")?.n ?? 0;
    localeRows.push([
      locale,
      String(n),
      fmtNum(cell("ours BM25Index", "all")?.hit),
      fmtNum(cell("LangChain BM25Retriever", "all")?.hit),
      fmtNum(cell("SQLite FTS5 bm25()", "all")?.hit),
      fmtNum(cell("ours BM25Index", "routed")?.hit),
      fmtNum(cell("LangChain BM25Retriever", "routed")?.hit),
      fmtNum(cell("SQLite FTS5 bm25()", "routed")?.hit),
    ]);
  }
  printTable(
    `BM25 hit@${K} per locale (locale deltas are indicative: small n, no significance test per locale)`,
    [
      { header: "locale" },
      { header: "n", align: "right" },
      { header: "ours all", align: "right" },
      { header: "LangChain all", align: "right" },
      { header: "FTS5 all", align: "right" },
      { header: "ours routed", align: "right" },
      { header: "LangChain routed", align: "right" },
      { header: "FTS5 routed", align: "right" },
    ],
    localeRows,
  );

  // ---------------------------------------------------------------- hybrid on a real Chroma
  const embedder = new HashingEmbedder();
  const lcEmbeddings = new EmbedderAsLangChain(embedder);
  const dataDir = mkdtempSync(path.join(tmpdir(), "retrace-bench-chroma-"));
  let server: Awaited<ReturnType<typeof startLocalChroma>> | undefined;
  const hybridResults: SystemResult[] = [];
  const setup: string[] = [];
  try {
    let t = performance.now();
    server = await startLocalChroma({ dataDir });
    const client = await connectChroma({ url: server.url });
    setup.push(
      `Chroma server: local, ${server.url}, started in ${fmtMs(performance.now() - t)} ms (pid ${server.pid}).`,
    );

    t = performance.now();
    const ingested = await ingest({ client, chunks, embedder, kbHash: kbHash(kb) });
    const collection = await getCollectionOrNull(client, ingested.collection);
    if (collection === null) throw new Error(`ingest reported ${ingested.collection} but it cannot be opened`);
    const dense = new ChromaDenseIndex(collection);
    setup.push(
      `ours: ingest() → ${ingested.collection} (${ingested.chunks} chunks, cosine space) in ${fmtMs(performance.now() - t)} ms.`,
    );

    t = performance.now();
    const lcStore = new Chroma(lcEmbeddings, {
      // connectChroma's client is chromadb's ChromaClient, typed as the part of it retrace uses.
      index: client as unknown as ChromaClient,
      collectionName: "bench-langchain-chunks",
      collectionMetadata: { "hnsw:space": "cosine" },
    });
    await lcStore.addDocuments(docs, { ids: chunks.map((c) => c.id) });
    setup.push(
      `LangChain: @langchain/community Chroma (works with chromadb 3.5.0 / server 1.0) on the same server, collection bench-langchain-chunks ` +
        `(hnsw:space cosine, ${docs.length} Documents via addDocuments) in ${fmtMs(performance.now() - t)} ms; passed our ChromaClient as \`index\`.`,
    );
    setup.push(
      `Embedder for both: ${embedder.id} — ${embedder.description}; wrapped as a LangChain Embeddings for LangChain.`,
    );

    const retriever = new HybridRetriever({
      chunks,
      embedder,
      dense,
      bm25: ours,
      defaults: { k: K, denseK: DEPTH, bm25K: DEPTH, weights: { dense: 0.5, bm25: 0.5 } },
    });
    const ensemble = (bm25: BaseRetriever, locale?: Locale) =>
      new EnsembleRetriever({
        retrievers: [bm25, lcStore.asRetriever({ k: DEPTH, ...(locale !== undefined ? { filter: { locale } } : {}) })],
        weights: [0.5, 0.5],
      });
    const lcEnsemble = ensemble(langchain);
    const lcEnsembleByLocale = new Map<Locale, EnsembleRetriever>();
    for (const [locale, bm25] of langchainByLocale) lcEnsembleByLocale.set(locale, ensemble(bm25, locale));

    // Our trace's retrievedIds must equal the bench's own cut of the fused list (same rule, no rerank).
    let mismatches = 0;
    const oursHybrid = async (q: EvalQuery, locale?: Locale) => {
      const trace = await retriever.retrieve(q.text, locale !== undefined ? { locale } : {});
      const parents = trace.stages.fused.map((r) => r.parentId);
      if (dedupeFirst(parents).slice(0, K).join(",") !== trace.retrievedIds.join(",")) mismatches++;
      return parents;
    };
    const lcParents = (docsOut: Document[]) => parentsOf(docsOut);
    hybridResults.push(
      await measure("ours HybridRetriever", "all", queries, (q) => oursHybrid(q), REPS.hybrid),
      await measure(
        "LangChain EnsembleRetriever",
        "all",
        queries,
        async (q) => lcParents(await lcEnsemble.invoke(q.text)),
        REPS.hybrid,
      ),
      await measure("ours HybridRetriever", "routed", queries, (q) => oursHybrid(q, q.locale), REPS.hybrid),
      await measure(
        "LangChain EnsembleRetriever",
        "routed",
        queries,
        async (q) => lcParents(await pick(lcEnsembleByLocale, q.locale).invoke(q.text)),
        REPS.hybrid,
      ),
    );
    if (mismatches > 0)
      print(
        `WARNING: ${mismatches} calls where HybridRetriever's retrievedIds differ from the bench's cut of its fused list.`,
      );
  } finally {
    if (server !== undefined) await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  print("");
  for (const line of setup) print(line);
  printTable(
    `Hybrid: dense (Chroma, top ${DEPTH}) + BM25 (top ${DEPTH}), RRF c = 60, weights 0.5 / 0.5`,
    RESULT_COLUMNS,
    resultRows(hybridResults),
  );
  print(
    "ours: HybridRetriever (BM25Index + ChromaDenseIndex, RRF keyed by chunk id, ties by id), scored on its fused chunk list.",
  );
  print(
    "LangChain: EnsembleRetriever(@langchain/classic) over BM25Retriever + Chroma.asRetriever; fuses by page text (all chunk texts here are distinct).",
  );
  print("Latency of both includes embedding the query and one HTTP round trip to the local Chroma server.");
  print("\nPaired sign-flip tests (10,000 seeded resamples), B − A per query:");
  for (const scope of ["all", "routed"] as const) {
    print(
      `  ${pairedLine(`ours − LangChain hybrid [${scope}]`, find(hybridResults, "LangChain EnsembleRetriever", scope), find(hybridResults, "ours HybridRetriever", scope))}`,
    );
  }
}
