/**
 * A report written before a derived section existed gets it when it is read
 * (parseAndFillReport → src/eval/report/derived-on-read.ts), from the build's own
 * functions, so the renderers only read (issue 55, item 2): the recall
 * curves, each attribution group's turns, each split delta's verdict. A
 * report that has them is read back byte for byte.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readReport } from "../../src/app/report.js";
import { readRunSide } from "../../src/eval/gate/compare.js";
import { queryAttributionOf } from "../../src/eval/report/query-attribution.js";
import { renderMarkdown, renderTable } from "../../src/eval/report/render.js";
import { parseAndFillReport } from "../../src/eval/report/derived-on-read.js";
import type { Report, TurnReport } from "../../src/eval/report/types.js";
import { fixtureReport } from "./report-fixture.js";

/** The fixture run with a query-attribution section over three attributed turns (c1#0 ok, c1#1 rewrite lost it, c2#0 retriever lost it). */
async function withAttribution(): Promise<Report> {
  const report = await fixtureReport();
  const base = report.turns[0]!;
  const o = { query: "q", rank: 1, scores: { retrieval_hit_at_k: 1 } };
  const turn = (caseId: string, t: number, attribution: string) =>
    ({ ...base, caseId, turn: t, gold: ["a"], queries: { attribution, graph: o, raw: o } }) as TurnReport;
  const turns = [turn("c1", 0, "ok"), turn("c1", 1, "rewrite_lost_it"), turn("c2", 0, "retriever_lost_it")];
  return { ...report, queryAttribution: queryAttributionOf(turns, { enabled: true, samples: 50 }) };
}

/** The report as JSON text and parsed back, as a file would be. */
const roundTrip = (r: unknown): Record<string, unknown> => JSON.parse(JSON.stringify(r)) as Record<string, unknown>;

describe("derived sections filled on read", () => {
  it("a report that has them is read back unchanged: the same object, the same bytes", async () => {
    const report = await withAttribution();
    expect(report.recallCurves).toBeDefined();
    expect(report.deltas!.length).toBeGreaterThan(0);
    const data = roundTrip(report);
    const read = parseAndFillReport(data, "now.json");
    expect(read).toBe(data);
    expect(JSON.stringify(read)).toBe(JSON.stringify(report));
  });

  it("a report written before them gets the curves, the group totals and the verdicts the build writes", async () => {
    const report = await withAttribution();
    const { recallCurves: _curves, ...rest } = report;
    const { splitTurns: _totals, ...qa } = report.queryAttribution!;
    const older = roundTrip({
      ...rest,
      queryAttribution: qa,
      deltas: report.deltas!.map(({ verdict: _verdict, ...d }) => d),
    });
    expect(older.recallCurves).toBeUndefined();
    const read = parseAndFillReport(older, "older.json");
    expect(read.recallCurves).toEqual(report.recallCurves);
    // Position group 1 (#0): c1#0 and c2#0; group 2 (#1): c1#1.
    expect(read.queryAttribution!.splitTurns).toEqual(report.queryAttribution!.splitTurns);
    expect(read.queryAttribution!.splitTurns!.position).toEqual({ "1": 2, "2": 1 });
    expect(read.deltas!.map((d) => d.verdict)).toEqual(report.deltas!.map((d) => d.verdict));
    // Nothing else changes, and the file's own data is not mutated.
    expect(older.recallCurves).toBeUndefined();
    expect({ ...read, recallCurves: undefined, queryAttribution: undefined, deltas: undefined }).toEqual({
      ...older,
      recallCurves: undefined,
      queryAttribution: undefined,
      deltas: undefined,
    });
  });

  it("readReport (retrace report, the library) and retrace compare read a report file through it", async () => {
    const report = await fixtureReport();
    const { recallCurves: _curves, ...older } = report;
    const dir = await mkdtemp(path.join(os.tmpdir(), "retrace-derived-"));
    try {
      const file = path.join(dir, "older.json");
      await writeFile(file, JSON.stringify(older));
      expect((await readReport(file)).recallCurves).toEqual(report.recallCurves);
      const side = await readRunSide(file);
      expect((side.data as Report).recallCurves).toEqual(report.recallCurves);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("an older schemaVersion is migrated and filled too", async () => {
    const report = await fixtureReport();
    const { recallCurves: _curves, ...rest } = report;
    const v3 = roundTrip({ ...rest, schemaVersion: 3 });
    expect(parseAndFillReport(v3, "v3.json").recallCurves).toEqual(report.recallCurves);
  });

  it("the renderers word no verdict: a delta without one prints the report's nothing, not a rule's words", async () => {
    const report = await fixtureReport();
    const d = report.deltas![0]!;
    const { verdict, ...bare } = d;
    expect(verdict).toMatch(/significant/);
    const stripped: Report = { ...report, deltas: [bare, ...report.deltas!.slice(1)] };
    const line = (r: Report) =>
      renderTable(r, { color: false, verbose: true })
        .split("\n")
        .find((l) => l.includes(` ${d.split} ${d.group} `) && l.includes(" vs "))!;
    expect(line(report).endsWith(` ${verdict}`)).toBe(true);
    expect(line(stripped).endsWith(" —")).toBe(true);
    expect(renderMarkdown(stripped)).not.toBe(renderMarkdown(report));
  });
});
