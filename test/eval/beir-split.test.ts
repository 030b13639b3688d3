/**
 * The parts of `retrace beir --tune --split` (src/app/beir.ts), without a
 * store: the seeded split is a reproducible partition of the judged query
 * ids, and a collection's own train part never shares a query with the
 * reported part.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { splitBeirQueries, splitQueryIds } from "../../src/app/beir.js";
import { loadBeirDataset } from "../../src/research/beir.js";
import { tempDir } from "../helpers/chroma.js";

let tmp: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  tmp = await tempDir("beir-split");
});
afterAll(async () => {
  await tmp?.cleanup();
});

describe("splitQueryIds", () => {
  const ids = Array.from({ length: 11 }, (_, i) => `q${i}`);

  it("partitions the ids: ⌈n/2⌉ tuned on, the rest reported, each part sorted", () => {
    const { tune, report } = splitQueryIds(ids, 42);
    expect(tune).toHaveLength(6);
    expect(report).toHaveLength(5);
    expect(tune.filter((id) => report.includes(id))).toEqual([]);
    expect([...tune, ...report].sort()).toEqual([...ids].sort());
    expect(tune).toEqual([...tune].sort());
  });

  it("depends on the seed and the ids only, not on their order", () => {
    const a = splitQueryIds(ids, 42);
    expect(splitQueryIds([...ids].reverse(), 42)).toEqual(a);
    // Another seed deals another half (for these 11 ids and seeds 42 and 7).
    expect(splitQueryIds(ids, 7).tune).not.toEqual(a.tune);
  });
});

describe("splitBeirQueries", () => {
  it("a train part's query that is also a test query is left out of the tune part", async () => {
    const dir = path.join(tmp.dir, "overlap");
    await mkdir(path.join(dir, "qrels"), { recursive: true });
    await writeFile(path.join(dir, "corpus.jsonl"), ['{"_id":"d1","text":"a"}', '{"_id":"d2","text":"b"}'].join("\n"));
    await writeFile(
      path.join(dir, "queries.jsonl"),
      ['{"_id":"s1","text":"a"}', '{"_id":"both","text":"b"}'].join("\n"),
    );
    await writeFile(path.join(dir, "qrels", "test.tsv"), "s1\td1\t1\nboth\td2\t1\n");
    await writeFile(
      path.join(dir, "queries_train.jsonl"),
      ['{"_id":"t1","text":"a"}', '{"_id":"both","text":"b"}'].join("\n"),
    );
    await writeFile(path.join(dir, "qrels", "train.tsv"), "t1\td1\t1\nboth\td2\t1\n");
    const split = await splitBeirQueries(await loadBeirDataset(dir), 42);
    expect(split.kind).toBe("own");
    expect(split.tune.queries.map((q) => q.id)).toEqual(["t1"]);
    expect([...split.tune.qrels.keys()]).toEqual(["t1"]);
    expect(split.report.queries.map((q) => q.id)).toEqual(["s1", "both"]);
  });

  it("without a train part: the seeded halves, qrels cut to each part", async () => {
    const dir = path.join(tmp.dir, "seeded");
    await mkdir(path.join(dir, "qrels"), { recursive: true });
    await writeFile(path.join(dir, "corpus.jsonl"), '{"_id":"d1","text":"a"}\n');
    await writeFile(
      path.join(dir, "queries.jsonl"),
      ["1", "2", "3", "4"].map((id) => `{"_id":"${id}","text":"a"}`).join("\n"),
    );
    await writeFile(path.join(dir, "qrels", "test.tsv"), ["1", "2", "3", "4"].map((id) => `${id}\td1\t1`).join("\n"));
    const split = await splitBeirQueries(await loadBeirDataset(dir), 42);
    expect(split.kind).toBe("seeded");
    const tune = split.tune.queries.map((q) => q.id);
    const report = split.report.queries.map((q) => q.id);
    expect(tune).toHaveLength(2);
    expect([...tune, ...report].sort()).toEqual(["1", "2", "3", "4"]);
    expect([...split.tune.qrels.keys()].sort()).toEqual([...tune].sort());
    expect([...split.report.qrels.keys()].sort()).toEqual([...report].sort());
  });
});
