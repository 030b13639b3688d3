import { describe, expect, it } from "vitest";
import { aggregateTurns } from "../../src/eval/report/aggregate.js";
import { allEvaluators } from "../../src/eval/measures/evaluators.js";
import type { TurnReport } from "../../src/eval/report/types.js";

function turn(caseId: string, kind: TurnReport["kind"], hit: number): TurnReport {
  return {
    caseId,
    turn: 0,
    locale: "en",
    kind,
    user: "q",
    gold: ["a"],
    expect: "answer",
    retrievedIds: hit === 1 ? ["a"] : ["b"],
    citedIds: [],
    refused: false,
    answer: "",
    results: [{ key: "retrieval_hit_at_k", score: hit }],
  };
}

describe("synthetic cases are a split of their own", () => {
  const evaluators = allEvaluators({ k: 5 });

  it("stay out of the headline and the locale split when real cases are present, and have their kind group", () => {
    // Golden: 1 of 2 hits (0.5). Synthetic: 2 of 2 (1.0). Mixed together the headline would read 0.75.
    const turns = [
      turn("g1", "golden", 1),
      turn("g2", "golden", 0),
      turn("s1", "synthetic", 1),
      turn("s2", "synthetic", 1),
    ];
    const agg = aggregateTurns(turns, { evaluators });
    expect(agg.aggregates.retrieval_hit_at_k?.mean).toBe(0.5);
    expect(agg.aggregates.retrieval_hit_at_k?.n).toBe(2);
    expect(agg.splits.locale?.en?.retrieval_hit_at_k?.mean).toBe(0.5);
    expect(agg.splits.kind?.synthetic?.retrieval_hit_at_k?.mean).toBe(1);
    expect(agg.splits.kind?.golden?.retrieval_hit_at_k?.mean).toBe(0.5);
  });

  it("are the headline of a run that has nothing else", () => {
    const agg = aggregateTurns([turn("s1", "synthetic", 1), turn("s2", "synthetic", 0)], { evaluators });
    expect(agg.aggregates.retrieval_hit_at_k?.mean).toBe(0.5);
  });
});
