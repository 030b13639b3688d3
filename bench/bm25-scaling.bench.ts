/**
 * How the cost of our BM25 grows with the corpus: build time, index memory
 * (heap delta after a full GC) and query latency (median, p95) at 1k, 10k and
 * 100k synthetic chunks (bench/lib/synthetic.ts: seeded, Zipfian vocabulary,
 * ~60 words a chunk, English). LangChain's BM25Retriever at 1k and 10k for
 * contrast; at 100k only when the run would stay under ~60 s.
 */
import { BM25Retriever } from "@langchain/community/retrievers/bm25";
import { analyzerFor } from "../src/retrieval/analyzer.js";
import { BM25Index } from "../src/retrieval/bm25.js";
import { chunksToDocuments } from "./lib/langchain.js";
import { getCollector, memoryDelta } from "./lib/memory.js";
import { fmtBytes, fmtInt, fmtMs, print, printTable, summarizeLatency, timeEach } from "./lib/report.js";
import { ZipfCorpus, type SyntheticChunk } from "./lib/synthetic.js";
import { log } from "../src/log.js";

const SIZES = [1_000, 10_000, 100_000] as const;
const VOCABULARY_SEED = 20240401;
const CHUNK_SEED = 7;
const QUERY_SEED = 11;
const QUERIES = 200;
const TOP_N = 20;
/** Timed passes over the queries and builds timed, per size (fewer at the large sizes). */
const OURS_REPS: Record<number, { queryReps: number; builds: number }> = {
  1_000: { queryReps: 20, builds: 5 },
  10_000: { queryReps: 10, builds: 3 },
  100_000: { queryReps: 5, builds: 2 },
};
const LANGCHAIN_REPS: Record<number, number> = { 1_000: 3, 10_000: 1, 100_000: 1 };
/** Skip a LangChain size whose projected run (warm-up + timed passes) exceeds this. */
const LANGCHAIN_BUDGET_S = 60;
/** Queries run at a skipped size as a spot check of the projection. */
const SPOT_CHECK_QUERIES = 3;

interface Row {
  system: string;
  chunks: number;
  buildMs: string;
  builds: string;
  heap: string;
  buffers: string;
  total: string;
  approx: string;
  median: string;
  p95: string;
  calls: string;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

export async function run(): Promise<void> {
  const gc = getCollector();
  const corpus = new ZipfCorpus({ seed: VOCABULARY_SEED });
  const queries = corpus.queries(QUERIES, QUERY_SEED);
  const largest = SIZES[SIZES.length - 1] as number;
  log.info(`bm25-scaling bench: generating ${fmtInt(largest)} synthetic chunks`);
  const all = corpus.chunks(largest, CHUNK_SEED);
  const avgWords =
    all.slice(0, 10_000).reduce((s, c) => s + c.text.split(" ").length, 0) / Math.min(10_000, all.length);
  // Warm the English analyzer's token memo on the whole vocabulary and the
  // build/search code paths (JIT), so that no size's memory delta includes
  // the shared memo or compiled code.
  analyzerFor("en").analyze(corpus.words.join(" "));
  BM25Index.build(all.slice(0, 1_000)).search(queries[0] ?? "", { topN: TOP_N });

  print(
    `Synthetic corpus: vocabulary ${fmtInt(corpus.words.length)} words (40 English stop words at the top ranks, then pseudo-words), ` +
      `Zipf s = 1, ${avgWords.toFixed(1)} words a chunk on average, locale en; seeds vocabulary ${VOCABULARY_SEED}, chunks ${CHUNK_SEED}, queries ${QUERY_SEED}.`,
  );
  print(
    `Queries: ${QUERIES} of 2–6 Zipf-drawn words (stop words included); top ${TOP_N}. Each size's chunks are a prefix of the next size's.`,
  );
  print(
    `Memory: GC via ${gc.method}; Δ across one build, full GC before and after: JS heap (heapUsed) + ArrayBuffer backing stores ` +
      "(typed arrays live outside the JS heap) = total. Chunk texts are allocated beforehand (not counted); one untimed warm-up build first (JIT, analyzer memo).",
  );

  const rows: Row[] = [];
  const notes: string[] = [];
  let langchainMedianAt10k: number | undefined;

  for (const size of SIZES) {
    const chunks: SyntheticChunk[] = all.slice(0, size);
    const plan = OURS_REPS[size] ?? { queryReps: 3, builds: 1 };

    // Ours: memory on the first build, build time as the median of `builds` builds.
    log.info(`bm25-scaling bench: ours at ${fmtInt(size)} chunks`);
    const before = gc.usage();
    let t = performance.now();
    let index: BM25Index | undefined = BM25Index.build(chunks);
    const buildTimes = [performance.now() - t];
    const mem = memoryDelta(before, gc.usage());
    for (let i = 1; i < plan.builds; i++) {
      t = performance.now();
      BM25Index.build(chunks);
      buildTimes.push(performance.now() - t);
    }
    const idx = index;
    const stats = idx.stats();
    const { samplesMs } = await timeEach(queries, (q) => idx.search(q, { topN: TOP_N, locale: "en" }), {
      warmup: 1,
      reps: plan.queryReps,
    });
    const lat = summarizeLatency(samplesMs);
    const part = stats.partitions.en;
    rows.push({
      system: "ours BM25Index",
      chunks: size,
      buildMs: fmtMs(median(buildTimes)),
      builds: String(buildTimes.length),
      heap: fmtBytes(mem.heapUsed),
      buffers: fmtBytes(mem.arrayBuffers),
      total: fmtBytes(mem.total),
      approx: fmtBytes(stats.approxBytes),
      median: fmtMs(lat.medianMs),
      p95: fmtMs(lat.p95Ms),
      calls: fmtInt(lat.calls),
    });
    if (part !== undefined) {
      notes.push(
        `ours at ${fmtInt(size)}: ${fmtInt(part.terms)} terms, ${fmtInt(part.postings)} postings, ${fmtInt(part.tokens)} analysed tokens.`,
      );
    }
    // Dropped so that the next system's heap measurement does not hold it.
    // eslint-disable-next-line no-useless-assignment
    index = undefined;

    // LangChain: no index; fromDocuments keeps the Documents and every query scans them.
    const reps = LANGCHAIN_REPS[size] ?? 1;
    if (size > 10_000 && langchainMedianAt10k !== undefined) {
      const projectedS = (langchainMedianAt10k * (size / 10_000) * QUERIES * (1 + reps)) / 1000;
      if (projectedS > LANGCHAIN_BUDGET_S) {
        const retriever = BM25Retriever.fromDocuments(chunksToDocuments(chunks), { k: TOP_N });
        const spot: number[] = [];
        for (const q of queries.slice(0, SPOT_CHECK_QUERIES)) {
          t = performance.now();
          await retriever.invoke(q);
          spot.push(performance.now() - t);
        }
        rows.push({
          system: "LangChain BM25Retriever",
          chunks: size,
          buildMs: "-",
          builds: "-",
          heap: "-",
          buffers: "-",
          total: "-",
          approx: "-",
          median: "skipped",
          p95: "skipped",
          calls: "-",
        });
        notes.push(
          `LangChain at ${fmtInt(size)} skipped: projected ${projectedS.toFixed(0)} s for ${QUERIES} queries × ${1 + reps} passes ` +
            `(10k median × ${size / 10_000}; it scans every document on every query), over the ${LANGCHAIN_BUDGET_S} s budget. ` +
            `Spot check, ${SPOT_CHECK_QUERIES} single queries: ${spot.map((x) => fmtMs(x)).join(", ")} ms.`,
        );
        continue;
      }
    }
    log.info(`bm25-scaling bench: LangChain at ${fmtInt(size)} chunks`);
    const lcBefore = gc.usage();
    t = performance.now();
    let retriever: BM25Retriever | undefined = BM25Retriever.fromDocuments(chunksToDocuments(chunks), { k: TOP_N });
    const lcBuild = performance.now() - t;
    const lcMem = memoryDelta(lcBefore, gc.usage());
    const r = retriever;
    const lc = await timeEach(queries, (q) => r.invoke(q), { warmup: 1, reps });
    const lcLat = summarizeLatency(lc.samplesMs);
    if (size === 10_000) langchainMedianAt10k = lcLat.medianMs;
    rows.push({
      system: "LangChain BM25Retriever",
      chunks: size,
      buildMs: fmtMs(lcBuild),
      builds: "1",
      heap: fmtBytes(lcMem.heapUsed),
      buffers: fmtBytes(lcMem.arrayBuffers),
      total: fmtBytes(lcMem.total),
      approx: "-",
      median: fmtMs(lcLat.medianMs),
      p95: fmtMs(lcLat.p95Ms),
      calls: fmtInt(lcLat.calls),
    });
    // Dropped so that the next size's heap measurement does not hold it.
    // eslint-disable-next-line no-useless-assignment
    retriever = undefined;
  }

  printTable(
    "BM25 cost by corpus size",
    [
      { header: "system" },
      { header: "chunks", align: "right" },
      { header: "build ms", align: "right" },
      { header: "builds", align: "right" },
      { header: "Δ JS heap", align: "right" },
      { header: "Δ buffers", align: "right" },
      { header: "Δ total", align: "right" },
      { header: "approxBytes", align: "right" },
      { header: "median ms", align: "right" },
      { header: "p95 ms", align: "right" },
      { header: "timed calls", align: "right" },
    ],
    rows.map((r) => [
      r.system,
      fmtInt(r.chunks),
      r.buildMs,
      r.builds,
      r.heap,
      r.buffers,
      r.total,
      r.approx,
      r.median,
      r.p95,
      r.calls,
    ]),
  );
  for (const n of notes) print(n);
  print(
    "build ms: median over `builds` builds. approxBytes: BM25Index.stats().approxBytes (typed arrays exact, maps and strings estimated).",
  );
  print(
    "LangChain builds no index (fromDocuments keeps the Documents): its build is wrapping the chunks as Documents, its heap delta those wrappers (texts shared).",
  );
}
