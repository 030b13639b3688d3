import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BaselineMismatchError, DataValidationError } from "../../src/errors.js";
import {
  assertComparable,
  baselineFromReport,
  parseBaseline,
  readBaseline,
  writeBaseline,
} from "../../src/eval/gate/baseline.js";
import { migrateBaselineV1 } from "../../src/eval/report/schemas.js";
import { fixtureReport } from "./report-fixture.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "retrace-baseline-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const CREATED = new Date("2025-02-03T04:05:06.000Z");

async function expectDataError(p: Promise<unknown>, field: string | undefined, message: RegExp): Promise<void> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(DataValidationError);
  const issue = (e as DataValidationError).issues[0];
  expect(issue?.file).toContain("baseline.json");
  expect(issue?.field).toBe(field);
  expect(issue?.message).toMatch(message);
}

describe("baselineFromReport", () => {
  it("holds version, hashes, k, retrieval config, aggregates and per-turn scores keyed caseId#turn", async () => {
    const report = await fixtureReport();
    const b = baselineFromReport(report, CREATED);
    expect(b).toMatchObject({
      schemaVersion: 4,
      created: "2025-02-03T04:05:06.000Z",
      datasetHash: "ds-1111",
      kbHash: "kb-2222",
      k: 3,
      source: { kind: "own" },
      config: { embedder: "builtin-hash-ngram-384", mode: "hybrid", rerank: null },
    });
    expect(b.aggregates.retrieval_hit_at_k?.mean).toBe(0.75);
    // g1#0: hit 1, recall 0.5; g2#0 (no-match) carries only refusal; g3#0 (not retrieved) no hit key.
    expect(b.perTurn["g1#0"]).toMatchObject({
      retrieval_hit_at_k: 1,
      retrieval_recall_at_k: 0.5,
      refusal_correctness: 1,
    });
    expect(b.perTurn["g2#0"]).toEqual({ refusal_correctness: 1 });
    expect(b.perTurn["g3#0"]?.retrieval_hit_at_k).toBeUndefined();
    expect(Object.keys(b.perTurn)).toHaveLength(7);
  });

  it("does not alias the report: editing the baseline leaves the report unchanged", async () => {
    const report = await fixtureReport();
    const b = baselineFromReport(report);
    delete b.aggregates.retrieval_hit_at_k;
    expect(report.aggregates.retrieval_hit_at_k?.mean).toBe(0.75);
  });
});

describe("writeBaseline / readBaseline", () => {
  it("round-trips, and leaves no temporary file behind", async () => {
    const report = await fixtureReport();
    const path = join(dir, "baseline.json");
    const written = await writeBaseline(path, report, CREATED);
    expect(await readdir(dir)).toEqual(["baseline.json"]);
    expect(await readBaseline(path)).toEqual(written);
    expect(written).toEqual(baselineFromReport(report, CREATED));
    expect(await readFile(path, "utf8")).toMatch(/^\{\n {2}"schemaVersion": 4,/);
  });

  it("replaces an existing baseline atomically and creates missing directories", async () => {
    const report = await fixtureReport();
    const path = join(dir, "nested", "ci", "baseline.json");
    await writeBaseline(path, report, new Date("2024-01-01T00:00:00Z"));
    await writeBaseline(path, report, CREATED);
    expect((await readBaseline(path)).created).toBe(CREATED.toISOString());
    expect(await readdir(join(dir, "nested", "ci"))).toEqual(["baseline.json"]);
  });

  it("cleans up its temporary file when the rename fails", async () => {
    const report = await fixtureReport();
    // A non-empty directory where the file should go: rename() fails (EISDIR / ENOTEMPTY).
    const path = join(dir, "baseline.json");
    await mkdir(path);
    await writeFile(join(path, "keep"), "x");
    await expect(writeBaseline(path, report)).rejects.toThrow();
    expect(await readdir(dir)).toEqual(["baseline.json"]);
  });

  it("rejects a missing file, bad JSON, a wrong version and a bad field, naming file and field", async () => {
    const path = join(dir, "baseline.json");
    await expectDataError(readBaseline(path), undefined, /not found.*--update-baseline/);
    await writeFile(path, "{ nope");
    await expectDataError(
      readBaseline(path),
      undefined,
      /^malformed JSON \(expected a property name in double quotes, got 'n'\)/,
    );
    await expect(readBaseline(path)).rejects.toMatchObject({ issues: [{ line: 1, column: 3 }] });

    const good = baselineFromReport(await fixtureReport(), CREATED);
    await writeFile(path, JSON.stringify({ ...good, schemaVersion: 5 }));
    await expectDataError(
      readBaseline(path),
      "schemaVersion",
      /expected baseline schemaVersion 4 \(or 1, 2 or 3, migrated on read\), got 5; it was written by a newer retrace/,
    );
    const { schemaVersion: _v, ...unversioned } = good;
    await writeFile(path, JSON.stringify(unversioned));
    await expectDataError(readBaseline(path), "schemaVersion", /expected baseline schemaVersion 4 .*got none/);

    await writeFile(path, JSON.stringify({ ...good, k: "5" }));
    await expectDataError(readBaseline(path), "k", /expected a number, got "5"/);

    const { datasetHash: _omit, ...missing } = good;
    await writeFile(path, JSON.stringify(missing));
    await expectDataError(readBaseline(path), "datasetHash", /missing required field; expected a string/);

    await writeFile(path, JSON.stringify({ ...good, perTurn: { "g1#0": { retrieval_hit_at_k: "1" } } }));
    await expectDataError(readBaseline(path), "perTurn.g1#0.retrieval_hit_at_k", /number/i);

    await writeFile(path, JSON.stringify({ ...good, extra: true }));
    await expectDataError(readBaseline(path), "extra", /unknown field/);
  });
});

describe("schemaVersion migration", () => {
  // A baseline as 0.1.0 wrote it (`"version": 1`, no schemaVersion): a copy of the committed kb/eval/baseline.json of that release.
  const V1_FIXTURE = fileURLToPath(new URL("../fixtures/schema/baseline-v1.json", import.meta.url));

  it("migrates a version 2 baseline's named retrieval settings to the opaque shape on read, nothing else changed", async () => {
    // test/fixtures/schema/baseline-v2-retrieval.json: written by `retrace eval --kb test/fixtures/kb-mini --store memory
    // --config '{"retrieval":{"embedder":"builtin"},"run":{"concurrency":1}}' --update-baseline` at 505f1e2.
    const file = fileURLToPath(new URL("../fixtures/schema/baseline-v2-retrieval.json", import.meta.url));
    const raw = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
    expect(raw.schemaVersion).toBe(2);
    const b = await readBaseline(file);
    expect(b.schemaVersion).toBe(4);
    const opaque = {
      denseK: 20,
      bm25K: 20,
      fusion: { method: "rrf", params: { k: 60 } },
      settings: { weights: { dense: 1, bm25: 1 }, bm25: { k1: 1.2, b: 0.75 } },
    };
    expect(b.retrieval).toStrictEqual({ en: opaque, "es-419": opaque, "pt-BR": opaque });
    const { retrieval: _r1, schemaVersion: _s1, ...restOld } = raw;
    // Version 4's `source`: retrace's own graph (its embedder id was a real one).
    const { retrieval: _r2, schemaVersion: _s2, source, ...restNew } = b as unknown as Record<string, unknown>;
    expect(source).toEqual({ kind: "own" });
    expect(restNew).toEqual(restOld);
  });

  it("migrates a version 1 baseline on read: schemaVersion 4, source own, every other field unchanged", async () => {
    const raw = JSON.parse(await readFile(V1_FIXTURE, "utf8")) as Record<string, unknown>;
    expect(raw.version).toBe(1);
    expect(raw).not.toHaveProperty("schemaVersion");
    const b = await readBaseline(V1_FIXTURE);
    expect(b.schemaVersion).toBe(4);
    expect(b).not.toHaveProperty("version");
    const { version: _v, ...rest } = raw;
    expect({ ...b, schemaVersion: undefined }).toEqual({ ...rest, source: { kind: "own" }, schemaVersion: undefined });
    expect(b.config).toEqual({ embedder: "builtin-hashed-ngrams-384-v1", mode: "hybrid", rerank: null });
  });

  it("migrateBaselineV1 is pure and puts schemaVersion first", () => {
    const v1 = {
      version: 1 as const,
      created: "c",
      datasetHash: "d",
      kbHash: "h",
      k: 5,
      config: { embedder: null, mode: null, rerank: null },
      aggregates: {},
      perTurn: {},
    };
    const v2 = migrateBaselineV1(v1);
    expect(Object.keys(v2)[0]).toBe("schemaVersion");
    expect(v2).toEqual({
      schemaVersion: 3,
      created: "c",
      datasetHash: "d",
      kbHash: "h",
      k: 5,
      config: { embedder: null, mode: null, rerank: null },
      aggregates: {},
      perTurn: {},
    });
    expect(v1.version).toBe(1);
  });

  it("still validates a version 1 file field by field", () => {
    expect(() => parseBaseline({ version: 1, created: "c" }, "old.json")).toThrow(
      /old\.json: field `datasetHash` missing required field/,
    );
  });
});

describe("assertComparable", () => {
  it("accepts the baseline of the same dataset, k and config (another KB hash is allowed)", async () => {
    const report = await fixtureReport();
    expect(assertComparable(baselineFromReport(report), report)).toEqual([]);
    expect(assertComparable({ ...baselineFromReport(report), kbHash: "kb-old" }, report)).toEqual([
      "the baseline was made with another knowledge base (kbHash kb-old, now kb-2222); comparing anyway",
    ]);
  });

  it("records the run's retrieval settings and notes a change of them (grouping locales with the same change), comparing anyway", async () => {
    const signals = {
      denseK: 20,
      bm25K: 50,
      fusion: { method: "signals", params: { shift: 0.4 } },
      settings: { weights: { dense: 0.43, bm25: 0.57 }, bm25: { k1: 0.9, b: 0.4 } },
    };
    const base = await fixtureReport();
    const report = {
      ...base,
      run: { ...base.run, retrieval: { en: signals, "es-419": signals, "pt-BR": { ...signals, denseK: 30 } } },
    };
    const b = baselineFromReport(report, CREATED);
    expect(b.retrieval).toEqual(report.run.retrieval);
    expect(parseBaseline(JSON.parse(JSON.stringify(b)) as unknown, "baseline.json")).toEqual(b);
    expect(assertComparable(b, report)).toEqual([]);
    const minmax = { ...signals, fusion: { method: "minmax", params: {} } };
    const now = {
      ...report,
      run: { ...report.run, retrieval: { en: minmax, "es-419": minmax, "pt-BR": { ...signals, denseK: 30 } } },
    };
    expect(assertComparable(b, now)).toEqual([
      "retrieval settings differ from the baseline's (en, es-419: fusion=signals(shift=0.4) denseK=20 bm25K=50 bm25.b=0.4 bm25.k1=0.9 weights.bm25=0.57 weights.dense=0.43 in the baseline, " +
        "fusion=minmax() denseK=20 bm25K=50 bm25.b=0.4 bm25.k1=0.9 weights.bm25=0.57 weights.dense=0.43 now [fusion.method, fusion.params.shift]); comparing anyway — the deltas measure the change",
    ]);
    // a locale only one side ran is named as not run
    const fewer = { ...report, run: { ...report.run, retrieval: { en: signals, "es-419": signals } } };
    expect(assertComparable(b, fewer)[0]).toContain(
      "pt-BR: fusion=signals(shift=0.4) denseK=30 bm25K=50 bm25.b=0.4 bm25.k1=0.9 weights.bm25=0.57 weights.dense=0.43 in the baseline, (not run) now",
    );
    // a baseline written before settings were recorded: no note
    const { retrieval: _r, ...older } = b;
    expect(assertComparable(older, now)).toEqual([]);
  });

  it.each([
    ["datasetHash", { datasetHash: "ds-other" }],
    ["k", { k: 5 }],
    ["config.embedder", { config: { embedder: "Xenova/bge-small-en-v1.5", mode: "hybrid", rerank: null } }],
    ["config.mode", { config: { embedder: "builtin-hash-ngram-384", mode: "dense", rerank: null } }],
    ["config.rerank", { config: { embedder: "builtin-hash-ngram-384", mode: "hybrid", rerank: "bge-reranker" } }],
  ] as const)("throws BaselineMismatchError naming %s", async (field, over) => {
    const report = await fixtureReport();
    const baseline = { ...baselineFromReport(report), ...over };
    let error: unknown;
    try {
      assertComparable(baseline, report);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BaselineMismatchError);
    expect((error as BaselineMismatchError).field).toBe(field);
    expect((error as Error).message).toContain(`\`${field}\``);
  });
});
