/**
 * Recall curves are computed once, when the report is built (the report's
 * `recallCurves`), and the HTML page only draws them (issue 55, item 2).
 */
import { describe, expect, it } from "vitest";
import { runPageData } from "../../src/eval/report/html/report-page.js";
import { parseAndFillReport } from "../../src/eval/report/derived-on-read.js";
import { ReportSchema } from "../../src/eval/report/schemas.js";
import { fixtureReport } from "./report-fixture.js";
import { MAX_CURVE_K, recallCurves } from "../../src/eval/report/recall-curves.js";
import { TRACE_STAGES } from "../../src/eval/report/stages.js";
import type { TurnReport } from "../../src/eval/report/types.js";
import { mulberry32 } from "../../src/random.js";

/** recall@k at one stage as the definition reads, counted afresh for every k: Σ over turns of |gold ranked ≤ k| / |gold|, over the turns. */
function naiveCurve(turns: readonly TurnReport[], stage: string, maxK: number): number[] {
  const values: number[] = [];
  for (let k = 1; k <= maxK; k++) {
    let sum = 0;
    for (const t of turns) {
      const ranks = t.gold.map((g) =>
        stage === "final"
          ? t.trace!.retrievedIds.indexOf(g) + 1 || null
          : ((t.trace!.goldPositions[g] as Record<string, number | null> | undefined)?.[stage] ?? null),
      );
      sum += ranks.filter((r) => r !== null && r <= k).length / t.gold.length;
    }
    values.push(sum / turns.length);
  }
  return values;
}

describe("the report's recall curves", () => {
  it("are in the report: recall@k of the final top-k per k, overall and per locale, ending at the report's recall@k", async () => {
    const report = await fixtureReport();
    const c = report.recallCurves!;
    // Gold-bearing traced turns (k = 3; g3 made no retrieval trace):
    //   g1#0 gold [a,b], top [c,a,d]: recall at k=1,2,3 = 0, 0.5, 0.5
    //   g1#1 gold [b],   top [b,e,f]: 1, 1, 1
    //   g2#1 gold [c],   top [d,e,f]: 0, 0, 0
    //   adv1#0 gold [e], top [a,e,g]: 0, 1, 1
    // mean: 0.25, 0.625, 0.625.
    expect(c.all.maxK).toBe(3);
    expect(c.all.curves.find((x) => x.stage === "final")!.values).toEqual([0.25, 0.625, 0.625]);
    expect(c.all.curves.find((x) => x.stage === "final")!.values[2]).toBe(
      report.aggregates["retrieval_recall_at_k"]!.mean,
    );
    // en: g1#0 and g1#1 only: (0 + 1) / 2, (0.5 + 1) / 2, (0.5 + 1) / 2.
    expect(c.locale["en"]!.curves.find((x) => x.stage === "final")!.values).toEqual([0.5, 0.75, 0.75]);
    expect(Object.keys(c.locale)).toEqual(["en", "es-419", "pt-BR"]);
    // The schema knows the section: it parses back whole.
    expect(ReportSchema.parse(JSON.parse(JSON.stringify(report))).recallCurves).toEqual(c);
  });

  it("the HTML page draws the report's curves, computing none itself, and embeds them once", async () => {
    const report = await fixtureReport();
    const planted = { all: { maxK: 1, curves: [{ stage: "final", values: [0.123] }] }, locale: {} };
    const page = runPageData({ ...report, recallCurves: planted }, "r");
    expect(page.report.recallCurves).toBe(planted);
    // One copy: the page's view carries no curves of its own (the browser script reads the report's).
    expect(Object.keys(page.view)).not.toContain("curves");
    expect(JSON.stringify(page).split('"values":[0.123]').length - 1).toBe(1);
    // A report without the section: the page draws none (it computes nothing).
    const { recallCurves, ...older } = report;
    expect(runPageData(older, "r").report.recallCurves).toBeUndefined();
    // A report written before the section gets the same curves when it is read (parseAndFillReport), from the same function.
    const read = parseAndFillReport(JSON.parse(JSON.stringify(older)), "older.json");
    expect(read.recallCurves).toEqual(recallCurves);
    expect(runPageData(read, "r").report.recallCurves).toEqual(recallCurves);
  });

  it("equal the definition counted afresh for every k, to the last bit (seeded random turns: ties, absent stages, uneven gold)", () => {
    const rand = mulberry32(51);
    const pick = (n: number) => Math.floor(rand() * n);
    const stages = TRACE_STAGES.slice(0, 3);
    const turns = Array.from({ length: 500 }, (_, i) => {
      const gold = Array.from({ length: 1 + pick(4) }, (_, j) => `g${i}-${j}`);
      const goldPositions: Record<string, Record<string, number | null>> = {};
      for (const g of gold) {
        const at: Record<string, number | null> = {};
        for (const s of stages) if (rand() < 0.8) at[s] = rand() < 0.2 ? null : 1 + pick(40);
        goldPositions[g] = at;
      }
      const retrievedIds = Array.from({ length: 5 }, (_, j) =>
        rand() < 0.3 ? gold[pick(gold.length)]! : `x${i}-${j}`,
      );
      return {
        gold,
        locale: "en",
        trace: { retrievedIds: [...new Set(retrievedIds)], goldPositions, stageSizes: { [stages[0]!]: 45 } },
      } as unknown as TurnReport;
    });
    const got = recallCurves(turns, 5);
    expect(got.maxK).toBe(Math.min(45, MAX_CURVE_K));
    expect(got.curves.map((c) => c.stage)).toEqual([...stages, "final"]);
    for (const c of got.curves) expect(c.values, c.stage).toEqual(naiveCurve(turns, c.stage, got.maxK));
  });
});
