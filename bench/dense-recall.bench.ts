/**
 * Dense-stage determinism and recall at scale (docs/determinism.md).
 *
 * For each size N (default 10,000 and 100,000 chunks; override with
 * RETRACE_BENCH_DENSE_SIZES=10000,20000): a seeded Zipf corpus (locales
 * assigned round-robin en / es-419 / pt-BR), embedded with the built-in
 * embedder and ingested with retrace's own `ingest` into a fresh local
 * Chroma. Q queries (default 300) are asked at depth 20, routed to a locale:
 *
 * - truth: exact brute-force cosine in process over the embedder's vectors
 *   (float64, ids as tie-break);
 * - `chroma hnsw + where`: Chroma's query with `where: {locale}` (what
 *   retrace did before), twice on the same server and once after a restart;
 * - `chroma hnsw, no filter`: unfiltered Chroma query, locale applied after;
 * - `retrace dense (exact)`: what retrace now does, `ExactDenseIndex` read
 *   back from the collection.
 *
 * Printed: recall@20 against the truth (|top20 ∩ truth20| / 20, averaged
 * over queries), how many queries' top-20 lists (ids in order) differ
 * between two passes, after a server restart, and on a second independent
 * ingest of the same chunks; and the mean latency per query.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { LOCALES, type Chunk, type Locale } from "../src/kb/types.js";
import { connectChroma, startLocalChroma, type LocalChroma } from "../src/retrieval/chroma-server.js";
import { ChromaDenseIndex, getCollectionOrNull } from "../src/retrieval/chroma-store.js";
import { InMemoryDenseIndex } from "../src/retrieval/dense.js";
import { HashingEmbedder } from "../src/retrieval/embedders/builtin.js";
import { loadExactDenseIndex } from "../src/retrieval/exact-dense.js";
import { ingest } from "../src/retrieval/ingest.js";
import { ZipfCorpus } from "./lib/synthetic.js";
import { fmtMs, print, printTable } from "./lib/report.js";

const DEPTH = 20;
/** Chroma request deadline of the bench: a 500-vector add into a 100,000-vector collection on a loaded 2-core machine can exceed the 10 s default. */
const BENCH_REQUEST_TIMEOUT_MS = 120_000;

function sizes(): number[] {
  const raw = process.env.RETRACE_BENCH_DENSE_SIZES;
  return raw === undefined || raw === "" ? [10_000, 100_000] : raw.split(",").map((s) => Number(s.trim()));
}

function recall(truth: readonly string[], got: readonly string[]): number {
  const t = new Set(truth);
  return got.filter((id) => t.has(id)).length / Math.max(1, truth.length);
}

type Search = (vector: number[], locale: Locale) => Promise<string[]>;

async function pass(
  queries: { vector: number[]; locale: Locale }[],
  search: Search,
): Promise<{ lists: string[][]; msPerQuery: number }> {
  const t = performance.now();
  const lists: string[][] = [];
  for (const q of queries) lists.push(await search(q.vector, q.locale));
  return { lists, msPerQuery: (performance.now() - t) / queries.length };
}

const differing = (a: string[][], b: string[][]) => a.filter((l, i) => l.join(" ") !== (b[i] ?? []).join(" ")).length;

export async function run(): Promise<void> {
  const queriesPerSize = Number(process.env.RETRACE_BENCH_DENSE_QUERIES ?? 300);
  const rows: string[][] = [];
  for (const n of sizes()) {
    const corpus = new ZipfCorpus({ seed: 7 });
    const chunks: Chunk[] = corpus.chunks(n, 11).map((c, i) => ({
      ...c,
      locale: LOCALES[i % LOCALES.length] as Locale,
      title: c.parentId,
      section: "",
    }));
    const embedder = new HashingEmbedder();
    const dir = mkdtempSync(path.join(tmpdir(), "retrace-dense-bench-"));
    let server: LocalChroma | undefined;
    try {
      server = await startLocalChroma({ dataDir: dir });
      let client = await connectChroma({ url: server.url, requestTimeoutMs: BENCH_REQUEST_TIMEOUT_MS });
      const t0 = performance.now();
      const res = await ingest({ client, chunks, embedder, kbHash: "a".repeat(64), batchSize: 500 });
      const ingestMs = performance.now() - t0;
      const vectors = await embedder.embedDocuments(chunks.map((c) => c.text));
      const truthIndex = new InMemoryDenseIndex(
        chunks.map((c, i) => ({ id: c.id, parentId: c.parentId, locale: c.locale, vector: vectors[i] as number[] })),
        { dimension: embedder.dimension },
      );
      const texts = corpus.queries(queriesPerSize, 13);
      const queries = await Promise.all(
        texts.map(async (t, i) => ({
          vector: await embedder.embedQuery(t),
          locale: LOCALES[i % LOCALES.length] as Locale,
        })),
      );
      const truth = (
        await pass(queries, async (v, locale) => truthIndex.searchSync(v, { topN: DEPTH, locale }).map((r) => r.id))
      ).lists;

      const open = async () => new ChromaDenseIndex((await getCollectionOrNull(client, res.collection))!);
      let hnsw = await open();
      const filtered: Search = async (v, locale) => (await hnsw.search(v, { topN: DEPTH, locale })).map((r) => r.id);
      const byLocale = new Map(chunks.map((c) => [c.id, c.locale]));
      const unfiltered: Search = async (v, locale) =>
        (await hnsw.search(v, { topN: DEPTH * 3 }))
          .filter((r) => byLocale.get(r.id) === locale)
          .slice(0, DEPTH)
          .map((r) => r.id);

      const f1 = await pass(queries, filtered);
      const f2 = await pass(queries, filtered);
      const u1 = await pass(queries, unfiltered);
      const u2 = await pass(queries, unfiltered);
      const tLoad = performance.now();
      const exact = await loadExactDenseIndex((await getCollectionOrNull(client, res.collection))!, {
        dimension: embedder.dimension,
        expectedCount: n,
      });
      const loadMs = performance.now() - tLoad;
      const e1 = await pass(queries, async (v, locale) =>
        exact.searchSync(v, { topN: DEPTH, locale }).map((r) => r.id),
      );

      // A second, independent ingest of the same chunks (another collection): is its HNSW graph answered alike?
      const again = await ingest({ client, chunks, embedder, kbHash: "b".repeat(64), batchSize: 500 });
      const hnswB = new ChromaDenseIndex((await getCollectionOrNull(client, again.collection))!);
      const fB = await pass(queries, async (v, locale) =>
        (await hnswB.search(v, { topN: DEPTH, locale })).map((r) => r.id),
      );
      const uB = await pass(queries, async (v, locale) =>
        (await hnswB.search(v, { topN: DEPTH * 3 }))
          .filter((r) => byLocale.get(r.id) === locale)
          .slice(0, DEPTH)
          .map((r) => r.id),
      );
      const exactB = await loadExactDenseIndex((await getCollectionOrNull(client, again.collection))!, {
        dimension: embedder.dimension,
        expectedCount: n,
      });
      const eB = await pass(queries, async (v, locale) =>
        exactB.searchSync(v, { topN: DEPTH, locale }).map((r) => r.id),
      );

      // Restart the server on the same data dir: is the HNSW answer the same?
      await server.stop();
      server = await startLocalChroma({ dataDir: dir });
      client = await connectChroma({ url: server.url, requestTimeoutMs: BENCH_REQUEST_TIMEOUT_MS });
      hnsw = await open();
      const f3 = await pass(queries, filtered);
      const u3 = await pass(queries, unfiltered);

      const meanRecall = (lists: string[][]) =>
        lists.reduce((s, l, i) => s + recall(truth[i] ?? [], l), 0) / lists.length;
      const exactSame = e1.lists.filter((l, i) => l.join(" ") === (truth[i] ?? []).join(" ")).length;
      print(
        `N=${n}: ingest ${fmtMs(ingestMs)}, exact index read back in ${fmtMs(loadMs)}, ${queries.length} queries, depth ${DEPTH}`,
      );
      rows.push([
        String(n),
        "chroma hnsw + where",
        meanRecall(f1.lists).toFixed(4),
        `${differing(f1.lists, f2.lists)}`,
        `${differing(f1.lists, f3.lists)}`,
        `${differing(f1.lists, fB.lists)}`,
        fmtMs(f1.msPerQuery),
      ]);
      rows.push([
        String(n),
        "chroma hnsw, no filter",
        meanRecall(u1.lists).toFixed(4),
        `${differing(u1.lists, u2.lists)}`,
        `${differing(u1.lists, u3.lists)}`,
        `${differing(u1.lists, uB.lists)}`,
        fmtMs(u1.msPerQuery),
      ]);
      rows.push([
        String(n),
        `retrace dense (exact; ${exactSame}/${queries.length} lists = truth)`,
        meanRecall(e1.lists).toFixed(4),
        `${differing(e1.lists, e1.lists)}`,
        "0 (pure)",
        `${differing(e1.lists, eB.lists)}`,
        fmtMs(e1.msPerQuery),
      ]);
    } finally {
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  printTable(
    "Dense stage vs exact brute force (built-in embedder, locale-routed queries)",
    [
      { header: "chunks", align: "right" },
      { header: "dense search" },
      { header: "recall@20 vs exact", align: "right" },
      { header: "lists differing, 2nd pass", align: "right" },
      { header: "after restart", align: "right" },
      { header: "2nd ingest", align: "right" },
      { header: "ms/query", align: "right" },
    ],
    rows,
  );
}
