/**
 * A report written before a derived section existed gets it when it is read
 * (parseAndFillReport → src/eval/report/derived-on-read.ts), from the build's own
 * functions, so the renderers only read (issue 55, item 2): the recall
 * curves, each attribution group's turns, each split delta's verdict, each
 * turn's `goldLostAt` (where a missed gold card was lost). A
 * report that has them is read back byte for byte.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
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
      turns: report.turns.map(({ goldLostAt: _lost, ...t }) => t),
    });
    expect(older.recallCurves).toBeUndefined();
    const read = parseAndFillReport(older, "older.json");
    expect(read.recallCurves).toEqual(report.recallCurves);
    // Position group 1 (#0): c1#0 and c2#0; group 2 (#1): c1#1.
    expect(read.queryAttribution!.splitTurns).toEqual(report.queryAttribution!.splitTurns);
    expect(read.queryAttribution!.splitTurns!.position).toEqual({ "1": 2, "2": 1 });
    expect(read.deltas!.map((d) => d.verdict)).toEqual(report.deltas!.map((d) => d.verdict));
    // Where each missed gold card was lost (the fixture's table, test/eval/report-fixture.ts): g1#0 (gold [a, b], top-3
    // [c, a, d]) missed b and g2#1 (gold [c], top-3 [d, e, f]) missed c, each in no list of its trace (BM25 and fused
    // lack it): not retrieved. The other turns hit every card, have no gold, or no trace (g3#0): no field.
    const notRetrieved = { at: "retrieval", text: "not retrieved (no branch listed it)" };
    const u = undefined;
    expect(read.turns.map((t) => t.goldLostAt)).toEqual([{ b: notRetrieved }, u, u, { c: notRetrieved }, u, u, u]);
    expect(read.turns.map((t) => t.goldLostAt)).toEqual(report.turns.map((t) => t.goldLostAt));
    // Nothing else changes, and the file's own data is not mutated.
    expect(older.recallCurves).toBeUndefined();
    expect((older.turns as TurnReport[]).some((t) => t.goldLostAt !== undefined)).toBe(false);
    const bare = (r: Report) => r.turns.map(({ goldLostAt: _lost, ...t }) => t);
    expect(bare(read)).toEqual(older.turns);
    expect({
      ...read,
      recallCurves: undefined,
      queryAttribution: undefined,
      deltas: undefined,
      turns: undefined,
    }).toEqual({
      ...older,
      recallCurves: undefined,
      queryAttribution: undefined,
      deltas: undefined,
      turns: undefined,
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

  it("a version 4 recorded-traces report written by the previous retrace gets each missed card's goldLostAt", async () => {
    // test/fixtures/schema/report-v4-traces.json (k = 5): conv-transfer#1's gold transfer-limits and conv-empty#1's
    // card-replace are in no list of the one scored KeywordRetriever call (["pix-keys"] and []): not retrieved.
    // Every other gold card is in its turn's top-5: no field.
    const text = await readFile(
      fileURLToPath(new URL("../fixtures/schema/report-v4-traces.json", import.meta.url)),
      "utf8",
    );
    const data = JSON.parse(text) as { turns: TurnReport[] };
    expect(data.turns.some((t) => t.goldLostAt !== undefined)).toBe(false);
    const read = parseAndFillReport(data, "report-v4-traces.json");
    const lost = Object.fromEntries(
      read.turns.filter((t) => t.goldLostAt !== undefined).map((t) => [`${t.caseId}#${t.turn}`, t.goldLostAt]),
    );
    const notRetrieved = { at: "retrieval", text: "not retrieved (no retriever call listed it)" };
    expect(lost).toEqual({
      "conv-transfer#1": { "transfer-limits": notRetrieved },
      "conv-empty#1": { "card-replace": notRetrieved },
    });
  });

  it("a report written before turnOutcomes and summaryRepeats gets them: counted, listed and worded as the build does", async () => {
    // test/fixtures/schema/report-v4-traces.json: 8 turns, each with one or two gold cards; conv-empty#1 (index 6)
    // scored hit@5 = 0; conv-error#0 (index 7) errored (no scores: an error, not a miss). One kind (golden) and one
    // locale (en), whose figures are the all column's.
    const text = await readFile(
      fileURLToPath(new URL("../fixtures/schema/report-v4-traces.json", import.meta.url)),
      "utf8",
    );
    const data = JSON.parse(text) as Record<string, unknown>;
    expect(data.turnOutcomes).toBeUndefined();
    expect(data.summaryRepeats).toBeUndefined();
    const read = parseAndFillReport(data, "report-v4-traces.json");
    expect(read.turnOutcomes).toEqual({ goldBearing: 8, missed: 1, missedTurns: [6] });
    expect(read.summaryRepeats).toEqual([
      { split: "kind", group: "golden", why: "every case is golden: its column is the all column" },
      { split: "locale", group: null, why: "one locale (en): its table is the all column" },
    ]);
    // The fixture report as built carries them; stripped and read back, it gets the same.
    const report = await fixtureReport();
    expect(report.turnOutcomes).toEqual({ goldBearing: 5, missed: 1, missedTurns: [3] });
    const { turnOutcomes: _o, summaryRepeats: _s, ...older } = report;
    const back = parseAndFillReport(roundTrip(older), "older.json");
    expect(back.turnOutcomes).toEqual(report.turnOutcomes);
    expect(back.summaryRepeats).toEqual(report.summaryRepeats);
    expect(renderTable(back, { color: false, verbose: true })).toBe(
      renderTable(report, { color: false, verbose: true }),
    );
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
