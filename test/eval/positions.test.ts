/**
 * Turn-position groups (src/eval/report/positions.ts, docs/metrics.md#turn-positions): short
 * conversations keep the groups reports always had (#0, #1, #2, #3+); once a turn is past #3
 * the later turns go into buckets #3–4, #5–9, #10+, each with its own n and interval, in the
 * aggregates, the funnel, the query attribution and the text and markdown renderers.
 */
import { describe, expect, it } from "vitest";
import { buildReport } from "../../src/eval/report/aggregate.js";
import { allEvaluators } from "../../src/eval/measures/evaluators.js";
import { hasLongPositions, positionLabel, positionNote, turnPosition } from "../../src/eval/report/positions.js";
import { renderMarkdown, renderTable } from "../../src/eval/report/render.js";
import type { TurnReport } from "../../src/eval/report/types.js";
import { runInfo } from "./report-fixture.js";

describe("turnPosition", () => {
  it("keeps #0, #1, #2 and #3+ for short conversations, and buckets later turns of long ones", () => {
    expect([0, 1, 2, 3, 4, 9].map((t) => turnPosition(t))).toEqual(["1", "2", "3", "4+", "4+", "4+"]);
    expect([0, 1, 2, 3, 4, 5, 9, 10, 199].map((t) => turnPosition(t, true))).toEqual([
      "1",
      "2",
      "3",
      "4-5",
      "4-5",
      "6-10",
      "6-10",
      "11+",
      "11+",
    ]);
    expect(["1", "3", "4+", "4-5", "6-10", "11+"].map(positionLabel)).toEqual([
      "turn #0",
      "turn #2",
      "turn #3+",
      "turn #3\u20134",
      "turn #5\u20139",
      "turn #10+",
    ]);
    expect(hasLongPositions([{ turn: 0 }, { turn: 3 }])).toBe(false);
    expect(hasLongPositions([{ turn: 4 }])).toBe(true);
    expect(positionNote(["1", "4+"])).toContain("turn #3+ = turns #3 and later");
    expect(positionNote(["1", "11+"])).toContain("buckets #3\u20134, #5\u20139, #10+");
  });
});

/** `cases` cases of `length` gold-bearing turns each; turn t hits when (t + case) % 3 != 0. */
function conversation(cases: number, length: number): TurnReport[] {
  const out: TurnReport[] = [];
  for (let c = 0; c < cases; c++)
    for (let turn = 0; turn < length; turn++) {
      const hit = (turn + c) % 3 !== 0;
      out.push({
        caseId: `c${c}`,
        turn,
        locale: "en",
        kind: "golden",
        user: `q${turn}`,
        gold: ["g"],
        expect: "answer",
        retrievedIds: hit ? ["g"] : ["x"],
        citedIds: [],
        refused: false,
        answer: "",
        results: [{ key: "retrieval_hit_at_k", score: hit ? 1 : 0 }],
        trace: { query: "q", k: 5, retrievedIds: hit ? ["g"] : ["x"], goldPositions: { g: { dense: hit ? 1 : null } } },
      });
    }
  return out;
}

describe("reports of long conversations", () => {
  const evaluators = allEvaluators({ k: 5 });

  it("4-turn data: the groups reports always had", () => {
    const r = buildReport({ run: runInfo(), turns: conversation(3, 4), evaluators });
    expect(Object.keys(r.splits.position!)).toEqual(["1", "2", "3", "4+"]);
    expect(Object.keys(r.funnel!.splits.position!)).toEqual(["1", "2", "3", "4+"]);
  });

  it("200-turn conversations: six buckets, each with its n and an interval, in every view", () => {
    const turns = conversation(4, 200);
    const r = buildReport({ run: runInfo(), turns, evaluators });
    const pos = r.splits.position!;
    expect(Object.keys(pos)).toEqual(["1", "2", "3", "4-5", "6-10", "11+"]);
    // n: 4 cases × the bucket's width (2, 5, 190 turns).
    expect(pos["4-5"]!.retrieval_hit_at_k!.n).toBe(8);
    expect(pos["6-10"]!.retrieval_hit_at_k!.n).toBe(20);
    expect(pos["11+"]!.retrieval_hit_at_k!.n).toBe(760);
    expect(pos["11+"]!.retrieval_hit_at_k!.ci95).not.toBeNull();
    // hits of #10…#199 over 4 cases: (turn + c) % 3 != 0.
    let hits = 0;
    for (let c = 0; c < 4; c++) for (let t = 10; t < 200; t++) if ((t + c) % 3 !== 0) hits++;
    expect(pos["11+"]!.retrieval_hit_at_k!.mean).toBeCloseTo(hits / 760, 12);
    expect(Object.keys(r.funnel!.splits.position!)).toEqual(["1", "2", "3", "4-5", "6-10", "11+"]);

    const text = renderTable(r, { color: false });
    const header = text.split("\n").find((l) => l.startsWith("metric (position)"))!;
    expect(header).toMatch(/turn #0 .*turn #1 .*turn #2 .*turn #3–4 .*turn #5–9 .*turn #10\+/);
    expect(text).toMatch(/n=760 \(4 cases\)/);
    expect(text).not.toMatch(/turn #199/);
    const md = renderMarkdown(r);
    expect(md).toContain("turn #10+");
    expect(md).toContain("turn #3–4");
  });
});
