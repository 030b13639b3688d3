/**
 * `retrace beir --tune --split` end to end (the real bin, a local Chroma it
 * starts itself): the tuning reads one part of the queries and every
 * reported figure is over the other. The toy collections are built so that
 * each query's BM25 nDCG@10 is known by construction: a "hit" query's words
 * occur only in its gold document (BM25 ranks it 1st: nDCG@10 = 1), a "miss"
 * query's words occur only in a decoy, never in its gold document (BM25 does
 * not return the gold at all: nDCG@10 = 0). The own train part holds hits
 * only, so a reported BM25 mean that took in a tuned-on query would be above
 * the expected 0.25; the seeded split must report exactly the ids it did not
 * tune on (a partition of the twelve, cross-validation over the other six).
 */
import { cp, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/chroma.js";

let tmp: { dir: string; cleanup: () => Promise<void> };
const LOCAL = { CHROMA_URL: "" };

/** Letters-only, distinct, stem-stable tokens ("bakab", "bakac", ...). */
const word = (i: number) => `zu${String.fromCharCode(97 + Math.floor(i / 26))}${String.fromCharCode(97 + (i % 26))}ko`;
let next = 0;
const words = (n: number) => Array.from({ length: n }, () => word(next++)).join(" ");

interface Q {
  id: string;
  hit: boolean;
}

/** Documents, queries and qrels for the queries `qs`: gold `g<id>` per query, decoy `x<id>` for a miss. */
function build(qs: readonly Q[]) {
  const docs: Array<{ _id: string; title: string; text: string }> = [];
  const queries: Array<{ _id: string; text: string }> = [];
  for (const q of qs) {
    const own = words(3);
    if (q.hit) {
      docs.push({ _id: `g${q.id}`, title: "", text: `${own} ${words(4)}` });
    } else {
      docs.push({ _id: `g${q.id}`, title: "", text: words(6) });
      docs.push({ _id: `x${q.id}`, title: "", text: `${own} ${words(4)}` });
    }
    queries.push({ _id: q.id, text: own });
  }
  const qrels = `query-id\tcorpus-id\tscore\n${qs.map((q) => `${q.id}\tg${q.id}\t1`).join("\n")}\n`;
  return { docs, queries, qrels };
}

const jsonl = (rows: readonly unknown[]) => `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`;

interface SplitJson {
  cv: { n: number };
  decision: { adopted: boolean };
  split: {
    kind: string;
    n: number;
    queries: { tune: string[]; report: string[] };
    mean: { bm25: number; dense: number; defaults: number; tuned: number; written: number };
  };
}

let own: string;
let seeded: string;
const SEEDED = Array.from({ length: 12 }, (_, i) => ({ id: `q${String(i + 1).padStart(2, "0")}`, hit: i % 2 === 0 })); // q01, q03, … hit

beforeAll(async () => {
  tmp = await tempDir("cli-beir-split");
  // A collection with its own train part (BEIR's SciFact layout): six train queries, all hits; four test queries, one hit.
  own = path.join(tmp.dir, "own");
  await mkdir(path.join(own, "qrels"), { recursive: true });
  const train = build(Array.from({ length: 6 }, (_, i) => ({ id: `t${i + 1}`, hit: true })));
  const test = build([
    { id: "s1", hit: true },
    { id: "s2", hit: false },
    { id: "s3", hit: false },
    { id: "s4", hit: false },
  ]);
  await writeFile(path.join(own, "corpus.jsonl"), jsonl([...train.docs, ...test.docs]));
  await writeFile(path.join(own, "queries_train.jsonl"), jsonl(train.queries));
  await writeFile(path.join(own, "qrels", "train.tsv"), train.qrels);
  await writeFile(path.join(own, "queries.jsonl"), jsonl(test.queries));
  await writeFile(path.join(own, "qrels", "test.tsv"), test.qrels);
  // A collection without one: twelve judged queries, odd-numbered ones hits, split by the seed.
  seeded = path.join(tmp.dir, "seeded");
  await mkdir(path.join(seeded, "qrels"), { recursive: true });
  const all = build(SEEDED);
  await writeFile(path.join(seeded, "corpus.jsonl"), jsonl(all.docs));
  await writeFile(path.join(seeded, "queries.jsonl"), jsonl(all.queries));
  await writeFile(path.join(seeded, "qrels", "test.tsv"), all.qrels);
});

afterAll(async () => {
  await tmp?.cleanup();
});

const tuneSplit = (dir: string, extra: string[] = []) =>
  runCli(
    [
      "beir",
      dir,
      "--tune",
      "--split",
      "--folds",
      "3",
      "--json",
      "--config",
      JSON.stringify({ retrieval: { embedder: "builtin" } }),
      "--data-dir",
      path.join(tmp.dir, "chroma"),
      ...extra,
    ],
    { env: LOCAL },
  );

describe("retrace beir --tune --split", () => {
  it("a collection with its own train part: tunes on the train queries, reports the test queries only", async () => {
    const r = await tuneSplit(own);
    expect(r.stderr).not.toMatch(/unexpected error/);
    expect(r.exitCode).toBe(0);
    const j = JSON.parse(r.stdout) as SplitJson;
    expect(j.split.kind).toBe("own");
    expect(j.cv.n).toBe(6); // cross-validated over the six train queries, nothing else
    expect(j.split.queries.tune).toEqual(["t1", "t2", "t3", "t4", "t5", "t6"]);
    expect(j.split.queries.report).toEqual(["s1", "s2", "s3", "s4"]);
    expect(j.split.n).toBe(4);
    // BM25 on the test queries: one hit of four. With any train query (all hits) in it, the mean would be above 0.25.
    expect(j.split.mean.bm25).toBeCloseTo(0.25, 10);
    // What is written is the tuned configuration only when adopted, else the defaults.
    expect(j.split.mean.written).toBe(j.decision.adopted ? j.split.mean.tuned : j.split.mean.defaults);
  }, 180_000);

  it("a collection without one: a seeded half tuned on, the other half reported, disjoint", async () => {
    const r = await tuneSplit(seeded);
    expect(r.stderr).not.toMatch(/unexpected error/);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toMatch(/--split: a seeded split of the 12 judged queries/);
    const j = JSON.parse(r.stdout) as SplitJson;
    expect(j.split.kind).toBe("seeded");
    const { tune, report } = j.split.queries;
    expect(tune).toHaveLength(6);
    expect(report).toHaveLength(6);
    expect(tune.filter((id) => report.includes(id))).toEqual([]);
    expect([...tune, ...report].sort()).toEqual(SEEDED.map((q) => q.id));
    expect(j.cv.n).toBe(6);
    expect(j.split.n).toBe(6);
    // The reported BM25 mean is the share of hits among the reported ids (hits by construction: odd numbers).
    const hits = report.filter((id) => Number(id.slice(1)) % 2 === 1).length;
    expect(j.split.mean.bm25).toBeCloseTo(hits / 6, 10);
  }, 180_000);

  it("a malformed train part exits 2 naming file, line and field", async () => {
    const bad = path.join(tmp.dir, "bad-train");
    await cp(own, bad, { recursive: true });
    await writeFile(
      path.join(bad, "qrels", "train.tsv"),
      "query-id\tcorpus-id\tscore\nt1\tgt1\t1\nt2\tgt2\thigh\nt9\tgt1\t1\n",
    );
    const r = await tuneSplit(bad);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/train\.tsv:3: field `score`/);
    expect(r.stderr).toMatch(/train\.tsv:4: field `query-id`.*queries_train\.jsonl/);
  }, 60_000);

  it("--split without --tune is a usage error (exit 2)", async () => {
    const r = await runCli(["beir", seeded, "--split"], { env: LOCAL });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/--split/);
  }, 60_000);
});
