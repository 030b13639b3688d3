/**
 * Our BM25 (English analyzer) on the Cranfield collection, scored with our
 * metric functions and compared with the reference numbers of the dataset's
 * README (trec_eval on the same copy).
 *
 * Dataset: `../shared/datasets/cranfield` from the repository root, BEIR
 * layout. Body indexed = title + " " + text (as the README's references).
 * nDCG@10 uses the graded qrels as gains (linear gain, trec_eval's ndcg_cut /
 * BEIR's pytrec_eval); recall and success count a document relevant when its
 * grade is > 0. Averages are over every query with a positive judgment (all
 * 225); a query with no result scores 0 (trec_eval -c).
 *
 * Two peers are re-run here as a check of the harness itself: SQLite FTS5
 * (porter unicode61, terms OR-ed) and LangChain's BM25Retriever (raw query);
 * our numbers for them should sit on the README's.
 */
import { readFileSync, existsSync } from "node:fs";
import path from "node:path";
import { BM25Retriever } from "@langchain/community/retrievers/bm25";
import { Document } from "@langchain/core/documents";
import { hitAtK, ndcgAtK, recallAtK } from "../src/eval/measures/metrics.js";
import { log } from "../src/log.js";
import { BM25Index } from "../src/retrieval/bm25.js";
import { BEIR_FILES, loadBeirDataset, type BeirQuery } from "../src/research/beir.js";
import { REPO_ROOT } from "./lib/eval-set.js";
import { Fts5Index } from "./lib/fts5.js";
import { comparePaired } from "./lib/quality.js";
import { fmtMs, fmtNum, print, printTable, summarizeLatency, timeEach, type LatencySummary } from "./lib/report.js";

export const CRANFIELD_DIR = path.resolve(REPO_ROOT, "..", "shared", "datasets", "cranfield");
const DEPTH = 100;
const REPS = { ours: 20, fts5: 20, langchain: 1 } as const;

interface Scores {
  ndcg10: number;
  r10: number;
  s10: number;
  r100: number;
}

interface Measured {
  system: string;
  n: number;
  mean: Scores;
  perQuery: { ndcg10: Map<string, number>; r100: Map<string, number> };
  latency: LatencySummary;
}

interface Reference {
  system: string;
  values: Partial<Scores>;
}

/** The README's reference table: `| system | nDCG@10 | R@10 | Success@10 | R@100 |` rows. */
function readReferences(readme: string): Reference[] {
  if (!existsSync(readme)) return [];
  const lines = readFileSync(readme, "utf8")
    .split(/\r?\n/)
    .filter((l) => l.trim().startsWith("|"));
  const cells = (l: string) =>
    l
      .trim()
      .replace(/^\||\|$/g, "")
      .split("|")
      .map((c) => c.trim());
  const header = lines.map(cells).find((c) => c[0] === "system" && c.includes("nDCG@10"));
  if (header === undefined) return [];
  const column: Record<string, keyof Scores> = {
    "nDCG@10": "ndcg10",
    "R@10": "r10",
    "Success@10": "s10",
    "R@100": "r100",
  };
  const out: Reference[] = [];
  for (const l of lines) {
    const c = cells(l);
    if (c[0] === "system" || /^-+:?$/.test(c[1] ?? "")) continue;
    const values: Partial<Scores> = {};
    header.forEach((h, i) => {
      const key = column[h];
      const v = Number(c[i]);
      if (key !== undefined && Number.isFinite(v)) values[key] = v;
    });
    if (Object.keys(values).length > 0) out.push({ system: c[0] ?? "?", values });
  }
  return out;
}

async function evaluate(
  system: string,
  queries: readonly BeirQuery[],
  qrels: ReadonlyMap<string, ReadonlyMap<string, number>>,
  search: (q: BeirQuery) => string[] | Promise<string[]>,
  reps: number,
): Promise<Measured> {
  log.info(`cranfield bench: ${system}, ${reps} timed pass(es) over ${queries.length} queries`);
  const { results, samplesMs } = await timeEach(queries, search, { warmup: 1, reps });
  const sums: Scores = { ndcg10: 0, r10: 0, s10: 0, r100: 0 };
  const ndcg10 = new Map<string, number>();
  const r100 = new Map<string, number>();
  let n = 0;
  queries.forEach((q, i) => {
    const gold = qrels.get(q.id);
    const ranked = results[i] ?? [];
    if (gold === undefined) return;
    const s = {
      ndcg10: ndcgAtK(ranked, gold, 10),
      r10: recallAtK(ranked, gold, 10),
      s10: hitAtK(ranked, gold, 10),
      r100: recallAtK(ranked, gold, DEPTH),
    };
    if (s.ndcg10 === null || s.r10 === null || s.s10 === null || s.r100 === null) return; // no positive judgment
    n++;
    sums.ndcg10 += s.ndcg10;
    sums.r10 += s.r10;
    sums.s10 += s.s10;
    sums.r100 += s.r100;
    ndcg10.set(q.id, s.ndcg10);
    r100.set(q.id, s.r100);
  });
  const mean = { ndcg10: sums.ndcg10 / n, r10: sums.r10 / n, s10: sums.s10 / n, r100: sums.r100 / n };
  return { system, n, mean, perQuery: { ndcg10, r100 }, latency: summarizeLatency(samplesMs) };
}

export async function run(): Promise<void> {
  const missing = Object.values(BEIR_FILES).filter((f) => !existsSync(path.join(CRANFIELD_DIR, f)));
  if (missing.length > 0) {
    print(`Cranfield not found at ${CRANFIELD_DIR} (missing ${missing.join(", ")}); skipping this benchmark.`);
    print(
      "Put the BEIR-layout copy (corpus.jsonl, queries.jsonl, qrels/test.tsv) at ../shared/datasets/cranfield relative to the repository.",
    );
    return;
  }
  // The same reader as `retrace beir` (src/research/beir.ts): its queries are the judged ones, in file order.
  const data = await loadBeirDataset(CRANFIELD_DIR);
  const judged = data.queries.filter((q) => [...(data.qrels.get(q.id)?.values() ?? [])].some((g) => g > 0));
  const bodies = data.corpus.map((d) => ({
    id: d.id,
    parentId: d.id,
    locale: "en" as const,
    text: `${d.title} ${d.text}`,
  }));
  print(
    `Cranfield (${path.relative(REPO_ROOT, CRANFIELD_DIR)}): ${data.corpus.length} documents, ${data.queries.length} queries ` +
      `(${judged.length} with a positive judgment, all evaluated), ${[...data.qrels.values()].reduce((s, m) => s + m.size, 0)} judgments.`,
  );
  print(
    `Body = title + " " + text; top ${DEPTH} per query; metrics from src/eval/measures/metrics.ts (nDCG with graded gains; a query with no hit scores 0).`,
  );

  let t = performance.now();
  const ours = BM25Index.build(bodies);
  const oursBuildMs = performance.now() - t;
  t = performance.now();
  const fts = new Fts5Index(bodies, "porter unicode61");
  const ftsBuildMs = performance.now() - t;
  t = performance.now();
  const langchain = BM25Retriever.fromDocuments(
    bodies.map((b) => new Document({ id: b.id, pageContent: b.text, metadata: { parentId: b.id } })),
    { k: DEPTH },
  );
  const lcBuildMs = performance.now() - t;

  const measured: Measured[] = [];
  try {
    measured.push(
      await evaluate(
        "ours BM25Index (en analyzer)",
        judged,
        data.qrels,
        (q) => ours.search(q.text, { topN: DEPTH, locale: "en" }).map((r) => r.id),
        REPS.ours,
      ),
      await evaluate(
        "SQLite FTS5 bm25() (porter unicode61)",
        judged,
        data.qrels,
        (q) => fts.search(q.text, DEPTH).map((h) => h.id),
        REPS.fts5,
      ),
      await evaluate(
        "LangChain BM25Retriever (raw query)",
        judged,
        data.qrels,
        async (q) => (await langchain.invoke(q.text)).map((d) => (d.metadata as { parentId: string }).parentId),
        REPS.langchain,
      ),
    );
  } finally {
    fts.close();
  }
  const buildMs: Record<string, number> = {
    [measured[0]?.system ?? ""]: oursBuildMs,
    [measured[1]?.system ?? ""]: ftsBuildMs,
    [measured[2]?.system ?? ""]: lcBuildMs,
  };

  const references = readReferences(path.join(CRANFIELD_DIR, "..", "README.md"));
  const rows: string[][] = [];
  for (const m of measured) {
    rows.push([
      m.system,
      "measured here",
      String(m.n),
      fmtNum(m.mean.ndcg10),
      fmtNum(m.mean.r10),
      fmtNum(m.mean.s10),
      fmtNum(m.mean.r100),
      fmtMs(buildMs[m.system] ?? Number.NaN),
      fmtMs(m.latency.medianMs),
      fmtMs(m.latency.p95Ms),
    ]);
  }
  for (const r of references) {
    rows.push([
      r.system,
      "README (trec_eval)",
      String(judged.length),
      fmtNum(r.values.ndcg10),
      fmtNum(r.values.r10),
      fmtNum(r.values.s10),
      fmtNum(r.values.r100),
      "",
      "",
      "",
    ]);
  }
  printTable(
    "Cranfield BM25",
    [
      { header: "system" },
      { header: "source" },
      { header: "n", align: "right" },
      { header: "nDCG@10", align: "right" },
      { header: "R@10", align: "right" },
      { header: "Success@10", align: "right" },
      { header: "R@100", align: "right" },
      { header: "build ms", align: "right" },
      { header: "median ms", align: "right" },
      { header: "p95 ms", align: "right" },
    ],
    rows,
  );
  if (references.length === 0)
    print("No reference table found in the dataset README; only measured numbers are shown.");

  const oursM = measured[0];
  const refFts = references.find((r) => /fts5/i.test(r.system));
  const refLc = references.find((r) => /langchain/i.test(r.system));
  if (oursM !== undefined) {
    const d = (ref: Reference | undefined, key: keyof Scores) => {
      const v = ref?.values[key];
      return v === undefined ? "-" : `${oursM.mean[key] - v >= 0 ? "+" : ""}${(oursM.mean[key] - v).toFixed(4)}`;
    };
    print(`ours vs README FTS5:      ΔnDCG@10 ${d(refFts, "ndcg10")}, ΔR@100 ${d(refFts, "r100")}`);
    print(`ours vs README LangChain: ΔnDCG@10 ${d(refLc, "ndcg10")}, ΔR@100 ${d(refLc, "r100")}`);
    for (const peer of measured.slice(1)) {
      const nd = comparePaired(peer.perQuery.ndcg10, oursM.perQuery.ndcg10);
      const rc = comparePaired(peer.perQuery.r100, oursM.perQuery.r100);
      if (nd === null || rc === null) continue;
      const sign = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(4)}`;
      print(
        `ours − ${peer.system} (paired sign-flip, 10,000 seeded resamples, n=${nd.n}): ` +
          `ΔnDCG@10 ${sign(nd.diff)} p=${nd.pValue.toFixed(4)}; ΔR@100 ${sign(rc.diff)} p=${rc.pValue.toFixed(4)}`,
      );
    }
  }
  print(
    "FTS5 query: tokens (runs of letters/marks/digits) double-quoted and OR-ed; LangChain: the raw query text (its own lowercase + whitespace split).",
  );
  print(
    `Timed passes: ours ${REPS.ours}, FTS5 ${REPS.fts5}, LangChain ${REPS.langchain}, each after one untimed warm-up pass.`,
  );
}
