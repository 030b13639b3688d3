/**
 * The report's `turnOutcomes` and `summaryRepeats` (src/eval/report/turn-outcomes.ts): hand-checked on the fixture
 * run, and `summaryRepeats` decided again when `--repeat N` replaces the overall intervals (attachRepeats).
 */
import { describe, expect, it } from "vitest";
import { summaryRepeatsOf, turnOutcomesOf } from "../../src/eval/report/turn-outcomes.js";
import type { Report, TurnReport } from "../../src/eval/report/types.js";
import { attachRepeats } from "../../src/eval/sweep/repeats.js";
import { fixtureReport } from "./report-fixture.js";

describe("turnOutcomes", () => {
  it("counts gold-bearing turns and lists hit@k = 0 turns; an errored turn is no miss, a turn without hit@k neither", async () => {
    const r = await fixtureReport();
    // Fixture: g1#0 hit, g1#1 hit, g2#0 no gold, g2#1 hit 0, adv1#0 hit, adv1#1 no gold, g3#0 gold but no hit@k.
    expect(turnOutcomesOf(r.turns)).toEqual({ goldBearing: 5, missed: 1, missedTurns: [3] });
    const errored: TurnReport = { ...r.turns[3]!, error: "boom" };
    const turns = [...r.turns.slice(0, 3), errored, ...r.turns.slice(4)];
    expect(turnOutcomesOf(turns)).toEqual({ goldBearing: 5, missed: 0, missedTurns: [] });
  });
});

describe("summaryRepeats", () => {
  it("a kind column equal to the all column repeats it, until --repeat N replaces the overall intervals", async () => {
    const base = await fixtureReport();
    const report: Report = {
      ...base,
      splits: { kind: { golden: structuredClone(base.aggregates) }, locale: { en: structuredClone(base.aggregates) } },
    };
    expect(summaryRepeatsOf(report)).toEqual([
      { split: "kind", group: "golden", why: "every case is golden: its column is the all column" },
      { split: "locale", group: null, why: "one locale (en): its table is the all column" },
    ]);
    report.summaryRepeats = summaryRepeatsOf(report);
    const hit = report.aggregates.retrieval_hit_at_k!;
    attachRepeats(report, {
      n: 2,
      identical: false,
      flaky: [],
      errorTurns: 0,
      metrics: {
        retrieval_hit_at_k: { mean: hit.mean, n: hit.n, ci95: [0.125, 0.875], withinShare: 0.5, betweenShare: 0.5 },
      },
    });
    // The overall hit@k interval is now the two-stage one: no group equals the all column any more.
    expect(report.summaryRepeats).toEqual([]);
  });
});
