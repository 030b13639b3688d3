import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DataValidationError } from "../../src/errors.js";
import {
  beirChunks,
  cutRun,
  formatTrecRun,
  loadBeirDataset,
  marginOverBestStage,
  scoreBeirRun,
  toRun,
  type BeirScores,
} from "../../src/research/beir.js";
import { configFor, parseConfig } from "../../src/research/tune-config.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function beirDir(files: { corpus?: string; queries?: string; qrels?: string }): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "beir-"));
  dirs.push(dir);
  await mkdir(path.join(dir, "qrels"));
  if (files.corpus !== undefined) await writeFile(path.join(dir, "corpus.jsonl"), files.corpus);
  if (files.queries !== undefined) await writeFile(path.join(dir, "queries.jsonl"), files.queries);
  if (files.qrels !== undefined) await writeFile(path.join(dir, "qrels", "test.tsv"), files.qrels);
  return dir;
}

const CORPUS = [
  '{"_id":"d1","title":"Wings","text":"lift of wings"}',
  '{"_id":"d2","text":"drag"}',
  '{"_id":3,"title":"","text":"heat"}',
].join("\n");
const QUERIES = ['{"_id":"q1","text":"wing lift"}', '{"_id":"q2","text":"unjudged"}'].join("\n");
const QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t1\n";

async function issuesOf(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(DataValidationError);
  return (e as DataValidationError).message;
}

describe("loadBeirDataset", () => {
  it("reads the three files; only judged queries are kept; numeric ids become strings", async () => {
    const data = await loadBeirDataset(await beirDir({ corpus: CORPUS, queries: QUERIES, qrels: QRELS }));
    expect(data.corpus.map((d) => d.id)).toEqual(["d1", "d2", "3"]);
    expect(data.queries).toEqual([{ id: "q1", text: "wing lift" }]);
    expect([...data.qrels.get("q1")!]).toEqual([
      ["d1", 2],
      ["d2", 1],
    ]);
    expect(beirChunks(data.corpus)[0]).toMatchObject({
      id: "d1",
      parentId: "d1",
      locale: "en",
      text: "Wings lift of wings",
    });
    expect(beirChunks(data.corpus)[1]!.text).toBe("drag");
    expect(data.corpusHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("names the file, line and field of each problem", async () => {
    const missing = await issuesOf(loadBeirDataset(await beirDir({ corpus: CORPUS, qrels: QRELS })));
    expect(missing).toMatch(/queries\.jsonl: missing/);
    const bad = await issuesOf(
      loadBeirDataset(
        await beirDir({
          corpus: `${CORPUS}\n{"_id":"d4"}\nnot json`,
          queries: QUERIES,
          qrels: "q1\td1\t2\nq1\td9\t1\nq1\td2\thigh\nq7\td1\t1\nq1\td1\n",
        }),
      ),
    );
    expect(bad).toMatch(/corpus\.jsonl:4: field `text` expected a string, got nothing/);
    expect(bad).toMatch(
      /corpus\.jsonl:5:2: malformed JSON \(expected 'null', got 'o'\); expected one JSON object a line/,
    );
    expect(bad).toMatch(/test\.tsv:2: field `corpus-id` no document with id "d9"/);
    expect(bad).toMatch(/test\.tsv:3: field `score` expected an integer grade, got "high"/);
    expect(bad).toMatch(/test\.tsv:4: field `query-id` no query with id "q7"/);
    expect(bad).toMatch(/test\.tsv:5: expected 3 tab-separated fields/);
    const dup = await issuesOf(
      loadBeirDataset(
        await beirDir({ corpus: `${CORPUS}\n{"_id":"d1","text":"again"}`, queries: QUERIES, qrels: QRELS }),
      ),
    );
    expect(dup).toMatch(/corpus\.jsonl:4: field `_id` duplicate document id "d1"/);
  });
});

describe("scoreBeirRun", () => {
  it("matches hand-computed trec_eval values with graded gains", () => {
    // q1 judged d1 = 2, d2 = 1; run [d3, d1].
    // nDCG@10 = (2/log2 3) / (2/1 + 1/log2 3) = 1.2618595 / 2.6309298 = 0.4796249
    // R@100 = 1/2 ; MRR@10 = 1/2 ; success@10 = 1
    // q2 judged d2 = 1, no results → 0 everywhere (trec_eval -c).
    const qrels = new Map([
      [
        "q1",
        new Map([
          ["d1", 2],
          ["d2", 1],
        ]),
      ],
      ["q2", new Map([["d2", 1]])],
    ]);
    const run = toRun(new Map([["q1", ["d3", "d1"]]]), "t");
    const s = scoreBeirRun(qrels, run, { seed: 1, samples: 200 });
    expect(s.n).toBe(2);
    expect(s.perQuery["ndcg@10"].get("q1")).toBeCloseTo(0.4796249, 6);
    expect(s.perQuery["recall@100"].get("q1")).toBe(0.5);
    expect(s.perQuery["mrr@10"].get("q1")).toBe(0.5);
    expect(s.perQuery["success@10"].get("q2")).toBe(0);
    expect(s.mean["recall@100"]).toBe(0.25);
  });

  it("MRR@10 is cut at 10: a first relevant document at rank 11 gives 0", () => {
    const ids = Array.from({ length: 11 }, (_, i) => `x${i + 1}`);
    const qrels = new Map([["q", new Map([["x11", 1]])]]);
    const s = scoreBeirRun(qrels, toRun(new Map([["q", ids]]), "t"), { seed: 1, samples: 100 });
    expect(s.perQuery["mrr@10"].get("q")).toBe(0);
    expect(s.perQuery["recall@100"].get("q")).toBe(1);
    expect(cutRun(toRun(new Map([["q", ids]]), "t"), 10).queries.get("q")!.docnos).toHaveLength(10);
  });

  it("writes runs whose scores reproduce the rank order", () => {
    expect(formatTrecRun(toRun(new Map([["1", ["b", "a"]]]), "r"))).toBe("1 Q0 b 1 2 r\n1 Q0 a 2 1 r\n");
  });
});

describe("config file", () => {
  it("accepts the documented keys and merges a locale over the base", () => {
    const c = parseConfig({
      version: 1,
      retrieval: { fusion: "minmax", weights: { dense: 0.3, bm25: 0.7 }, bm25: { k1: 0.9, b: 0.4 } },
      locales: { en: { weights: { dense: 0.5 } } },
    });
    expect(configFor(c, "en")).toEqual({
      fusion: "minmax",
      weights: { dense: 0.5, bm25: 0.7 },
      bm25: { k1: 0.9, b: 0.4 },
    });
    expect(configFor(c, "pt-BR").weights).toEqual({ dense: 0.3, bm25: 0.7 });
  });

  it("names an unknown key or an out-of-range value", () => {
    expect(() => parseConfig({ version: 1, retrieval: { fusoin: "rrf" } }, "c.json")).toThrow(
      /c\.json: field `retrieval\.fusoin` unknown key/,
    );
    expect(() => parseConfig({ version: 1, retrieval: { bm25: { b: 1.5 } } }, "c.json")).toThrow(
      /field `retrieval\.bm25\.b`/,
    );
    expect(() => parseConfig({ version: 1, retrieval: { weights: { dense: -1 } } }, "c.json")).toThrow(
      /field `retrieval\.weights\.dense`/,
    );
    expect(() => parseConfig({ version: 2 }, "c.json")).toThrow(/field `version`/);
  });
});

describe("marginOverBestStage", () => {
  /** Scores with the given per-query nDCG@10 and R@100 (the other measures unused). */
  function scores(ndcg: number[], recall: number[]): BeirScores {
    const m = (xs: number[]) => new Map(xs.map((x, i) => [`q${i}`, x]));
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    return {
      n: ndcg.length,
      mean: { "ndcg@10": mean(ndcg), "recall@100": mean(recall), "mrr@10": 0, "success@10": 0 },
      ci95: { "ndcg@10": null, "recall@100": null, "mrr@10": null, "success@10": null },
      perQuery: { "ndcg@10": m(ndcg), "recall@100": m(recall), "mrr@10": new Map(), "success@10": new Map() },
    };
  }

  it("picks the better stage per measure and pairs the fused mode with it", () => {
    // nDCG@10: bm25 mean 0.5, dense 0.3 → bm25 best; hybrid − bm25 = (0.6−0.4 + 0.6−0.6)/2 = +0.1.
    // R@100: bm25 mean 0.5, dense 0.8 → dense best; hybrid − dense = (0.7−0.8 + 0.7−0.8)/2 = −0.1.
    const bm25 = scores([0.4, 0.6], [0.5, 0.5]);
    const dense = scores([0.2, 0.4], [0.8, 0.8]);
    const hybrid = scores([0.6, 0.6], [0.7, 0.7]);
    const r = marginOverBestStage({ bm25, dense }, hybrid, 1);
    expect(r["ndcg@10"]?.bestStage).toBe("bm25");
    expect(r["ndcg@10"]?.comparison.diff).toBeCloseTo(0.1, 12);
    expect(r["ndcg@10"]?.comparison.meanA).toBeCloseTo(0.5, 12);
    expect(r["recall@100"]?.bestStage).toBe("dense");
    expect(r["recall@100"]?.comparison.diff).toBeCloseTo(-0.1, 12);
    // Two queries, both differences −0.1: the exact sign-flip test has 4 sign vectors, 2 as extreme → p = 0.5.
    expect(r["recall@100"]?.comparison.pValue).toBeCloseTo(0.5, 12);
  });

  it("a tie between the stages goes to bm25; a missing stage is not measured", () => {
    const s = scores([0.5, 0.5], [0.5, 0.5]);
    expect(marginOverBestStage({ bm25: s, dense: s }, s, 1)["ndcg@10"]?.bestStage).toBe("bm25");
    expect(marginOverBestStage({ bm25: s }, s, 1)).toEqual({ "ndcg@10": null, "recall@100": null });
  });
});
