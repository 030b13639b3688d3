/**
 * The report's one definition (src/eval/report/schemas.ts): `Report` is
 * inferred from `ReportSchema`, so the schema must declare every field
 * retrace writes, and a report read back must be the report that was
 * written — same fields, same key order (`retrace report`, `retrace compare`,
 * `retrace merge` render it again).
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DataValidationError } from "../../src/errors.js";
import { baselineFromReport } from "../../src/eval/gate/baseline.js";
import { gate } from "../../src/eval/gate/gate.js";
import { reportToJSON } from "../../src/eval/report/render.js";
import { parseReport, REPORT_VERSION, ReportSchema } from "../../src/eval/report/schemas.js";
import { RetrievalRunConfigSchema } from "../../src/eval/report/schemas/run.js";
import type { Report } from "../../src/eval/report/types.js";
import { fixtureReport, ROWS } from "./report-fixture.js";

/** The fixture report with every optional section and field retrace can write filled in. */
async function fullReport(): Promise<Report> {
  const before = await fixtureReport();
  const report = await fixtureReport(
    {
      storeKind: "local",
      genericLocales: ["pt-BR"],
      answerer: "rule-based, offline",
      split: "kb/eval/split.json",
      retrieval: {
        en: {
          denseK: 20,
          bm25K: 50,
          fusion: { method: "minmax", params: {} },
          settings: { weights: { dense: 0.9, bm25: 0.1 }, bm25: { k1: 0.9, b: 0.4 } },
        },
      },
      graph: {
        file: "agent.ts",
        exportName: "graph",
        retrievers: ["kb"],
        idKey: "id",
        retrievalCall: "last",
        errors: 1,
        noRetrieval: 1,
        catalog: "catalog.json",
      },
    },
    // g1#0 now misses: a hit@k flip against `before`.
    ROWS.map((r) => (r.caseId === "g1" && r.turn === 0 ? { ...r, retrievedIds: ["c", "d", "f"] } : r)),
  );
  report.gate = gate(report, { minHit: 0.5, maxFlips: 0 }, baselineFromReport(before));
  const [t0, t1, t2] = report.turns;
  t0!.part = "tune";
  t0!.trace!.stages = { fused: [["a#0", 0.5]], parents: [["a", 0.5]] };
  t0!.trace!.stageSizes = { fused: 12, parents: 4 };
  t1!.captured = {
    source: "callbacks",
    retrievers: ["kb"],
    topLevelRuns: 1,
    stages: [{ key: "kb", role: "final", ids: ["b"], error: null }],
    noChildRuns: ["kb"],
    documents: [{ rank: 1, id: "b", text: "B's page", truncated: true }],
  };
  t2!.error = "graph threw";
  t2!.noRetrieval = true;
  t1!.relevant = { b: 2, c: 0 };
  t1!.judged = ["b"];
  t1!.relevanceOnly = true;
  report.judgments = {
    gradedTurns: 1,
    relevanceOnlyTurns: 1,
    judgedTurns: 1,
    warnBelow: 0.8,
    holes: [{ caseId: t1!.caseId, turn: t1!.turn, judged: 0.5, unjudged: ["x"] }],
  };
  report.splits.extra = { x: report.aggregates };
  report.chance = { cardsPerLocale: { en: 3, "es-419": 3, "pt-BR": 3 }, warnings: [] };
  report.judge = { model: "m", prompt: "v1", unparsable: 0 };
  report.shard = {
    index: 1,
    count: 2,
    rule: "rule",
    caseIds: ["g1"],
    turns: 2,
    dataset: { datasetHash: "ds", caseIds: ["g1", "g2"], turns: 4 },
  };
  report.timings = {
    ...report.timings!,
    phases: { graph: 1, evaluate: 2, report: 3 },
    judge: { calls: 2, cached: 1, inputTokens: null, outputTokens: 7 },
  };
  return report;
}

describe("ReportSchema", () => {
  it("declares every field retrace writes: parsing a full report through zod (which drops undeclared keys) gives the same report", async () => {
    const report = await fullReport();
    expect(report.gate!.checks!.length).toBeGreaterThan(0);
    expect(report.gate!.flips!.length).toBeGreaterThan(0);
    expect(report.gate!.tolerance).toBeDefined();
    const json: unknown = JSON.parse(reportToJSON(report));
    expect(ReportSchema.parse(json)).toStrictEqual(json);
  });

  it("refuses a malformed section it used to let through, naming the field", async () => {
    const json = JSON.parse(reportToJSON(await fullReport())) as Record<string, Record<string, unknown>>;
    json.judge!.unparsable = "two";
    expect(() => parseReport(json, "run.json")).toThrow(DataValidationError);
    expect(() => parseReport(json, "run.json")).toThrow(
      /run\.json: field `judge\.unparsable` expected a number, got "two"/,
    );
    const usage = JSON.parse(reportToJSON(await fullReport())) as { timings: { judge: Record<string, unknown> } };
    usage.timings.judge.calls = -1;
    expect(() => parseReport(usage, "run.json")).toThrow(/run\.json: field `timings\.judge\.calls`/);
  });
});

describe("parseReport", () => {
  it("returns the report as written: key order and unknown fields kept, so it renders to the same bytes", async () => {
    const report = await fullReport();
    const text = reportToJSON(report);
    expect(reportToJSON(parseReport(JSON.parse(text), "run.json"))).toBe(text);
    // A section and a turn field the schema does not know, in the middle: kept where they were.
    const { turns, ...rest } = JSON.parse(text) as Record<string, unknown>;
    const odd = {
      ...rest,
      customSection: { a: 1 },
      turns: (turns as Record<string, unknown>[]).map((t) => ({ note: "x", ...t })),
    };
    const oddText = JSON.stringify(odd, null, 2) + "\n";
    expect(reportToJSON(parseReport(JSON.parse(oddText), "odd.json"))).toBe(oddText);
  });

  it("migrates a version 2 report written by retrace 0.2.0 with --judge: the judge's counters move into timings, everything else is kept", async () => {
    // test/fixtures/schema/report-v2-judge.json: `retrace eval --kb test/fixtures/kb-mini --store memory --embedder builtin --concurrency 1
    // --judge test/fixtures/judge/scripted-judge.mjs --report-json …` as schemaVersion 2 wrote it (the judge section after timings, with its counters).
    const text = await readFile(
      fileURLToPath(new URL("../fixtures/schema/report-v2-judge.json", import.meta.url)),
      "utf8",
    );
    const v2 = JSON.parse(text) as Record<string, Record<string, unknown>>;
    expect(v2.schemaVersion).toBe(2);
    expect(v2.judge).toEqual({
      model: "FakeListChatModel",
      prompt: "groundedness-v1",
      calls: 2,
      cached: 0,
      inputTokens: null,
      outputTokens: null,
      unparsable: 0,
    });
    const r = parseReport(v2, "v2.json");
    expect(r.schemaVersion).toBe(REPORT_VERSION);
    expect(Object.keys(r)[0]).toBe("schemaVersion");
    expect(r.judge).toEqual({ model: "FakeListChatModel", prompt: "groundedness-v1", unparsable: 0 });
    expect(r.timings!.judge).toEqual({ calls: 2, cached: 0, inputTokens: null, outputTokens: null });
    expect(r.timings!.started).toBe(v2.timings!.started);
    // Nothing else changed: the turns, aggregates and run header are the file's (its retrieval settings made opaque, 3 → 4).
    const { judge: _j1, timings: _t1, schemaVersion: _s1, run: run1, ...restOld } = v2;
    const {
      judge: _j2,
      timings: _t2,
      schemaVersion: _s2,
      run: run2,
      ...restNew
    } = r as unknown as Record<string, Record<string, unknown>>;
    expect(restNew).toStrictEqual(restOld);
    const { retrieval: _r1, ...runOld } = run1!;
    const { retrieval: _r2, source, ...runNew } = run2!;
    expect(source).toBe("own");
    expect(runNew).toStrictEqual(runOld);
    expect((run2!.retrieval as Record<string, unknown>).en).toStrictEqual({
      denseK: 20,
      bm25K: 20,
      fusion: { method: "rrf", params: { k: 60 } },
      settings: { weights: { dense: 1, bm25: 1 }, bm25: { k1: 1.2, b: 0.75 } },
    });
    expect(v2.judge!.calls).toBe(2); // the input is not mutated
  });

  it("refuses a report of a version it does not know, naming both versions", () => {
    expect(() => parseReport({ schemaVersion: 6, turns: [] }, "new.json")).toThrow(
      /new\.json: field `schemaVersion` expected report schemaVersion 5 \(or 1, 2, 3 or 4, migrated on read\), got 6; it was written by a newer retrace/,
    );
  });

  it("migrates a version 3 report's named retrieval settings to the opaque shape, nothing else changed", async () => {
    // test/fixtures/schema/report-v3-retrieval.json: `retrace eval --kb test/fixtures/kb-mini --store memory
    // --config '{"retrieval":{"embedder":"builtin"},"run":{"concurrency":1}}' --out json:…` at 505f1e2 (schemaVersion 3).
    const file = fileURLToPath(new URL("../fixtures/schema/report-v3-retrieval.json", import.meta.url));
    const v3 = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown> & {
      run: Record<string, unknown>;
    };
    expect(v3.schemaVersion).toBe(3);
    const r = parseReport(v3, file);
    expect(r.schemaVersion).toBe(5);
    const opaque = {
      denseK: 20,
      bm25K: 20,
      fusion: { method: "rrf", params: { k: 60 } },
      settings: { weights: { dense: 1, bm25: 1 }, bm25: { k1: 1.2, b: 0.75 } },
    };
    expect(r.run.retrieval).toStrictEqual({ en: opaque, "es-419": opaque, "pt-BR": opaque });
    const { retrieval: _r1, ...runOld } = v3.run;
    // Version 5's `run.source`: retrace's own graph (its embedder id was a real one).
    const { retrieval: _r2, source, ...runNew } = r.run as unknown as Record<string, unknown>;
    expect(source).toBe("own");
    expect(runNew).toStrictEqual(runOld);
    const { run: _a, schemaVersion: _b, ...restOld } = v3;
    const { run: _c, schemaVersion: _d, ...restNew } = r as unknown as Record<string, unknown>;
    expect(restNew).toStrictEqual(restOld);
    expect(typeof (v3.run.retrieval as Record<string, { fusion: unknown }>).en!.fusion).toBe("string"); // input not mutated
  });

  it("checks the opaque settings' shape only: a method name and JSON parameters", () => {
    const shape = RetrievalRunConfigSchema.safeParse;
    expect(
      shape({ denseK: 1, bm25K: 1, fusion: { method: "any-future-method", params: { a: { b: [1, "x", null] } } } })
        .success,
    ).toBe(true);
    expect(shape({ denseK: 1, bm25K: 1, fusion: { method: "", params: {} } }).success).toBe(false);
    expect(shape({ denseK: 1, bm25K: 1, fusion: { method: "m", params: [] } }).success).toBe(false);
    expect(shape({ denseK: 1, bm25K: 1, fusion: { method: "m", params: { f: () => 1 } } }).success).toBe(false);
    expect(shape({ denseK: 1, bm25K: 1, fusion: "m" }).success).toBe(false);
  });

  it("migrates a version 1 report to the current schemaVersion, first key", async () => {
    const { schemaVersion: _v, ...rest } = JSON.parse(reportToJSON(await fixtureReport())) as Record<string, unknown>;
    const r = parseReport({ version: 1, ...rest }, "v1.json");
    expect(r.schemaVersion).toBe(REPORT_VERSION);
    expect(Object.keys(r)[0]).toBe("schemaVersion");
  });
});
