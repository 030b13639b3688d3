import { describe, expect, it } from "vitest";
import { aggregateTurns } from "../../src/eval/report/aggregate.js";
import { allEvaluators, runEvaluators, type EvaluatorSpec } from "../../src/eval/measures/evaluators.js";
import { NO_STORE_ANSWER, RETRIEVAL_DEPENDENT_KEYS, storelessEvaluators } from "../../src/eval/measures/storeless.js";
import { ROWS, turnReports } from "./report-fixture.js";

describe("storelessEvaluators", () => {
  it("scores nothing that depends on retrieval, with the reason, and keeps other evaluators", async () => {
    const own: EvaluatorSpec = {
      name: "answer_length",
      keys: ["answer_length"],
      evaluate: (a) => [{ key: "answer_length", score: a.answer.length > 0 ? 1 : 0 }],
      whenEmpty: "no turns",
    };
    const specs = storelessEvaluators([...allEvaluators({ k: 3 }), own]);
    const turns = await turnReports(
      ROWS.map((r) => ({ ...r, retrievedIds: null })),
      specs,
    );
    for (const t of turns) expect(t.results.map((r) => r.key)).toEqual(["answer_length"]);
    const agg = aggregateTurns(turns, { evaluators: specs });
    expect(Object.keys(agg.aggregates)).toEqual(["answer_length"]);
    // judged@k concerns turns with judgments only: none here, so it is absent rather than vacuous.
    // judged@k and the measures for incomplete judgments concern turns with judgments only: none here, so absent.
    const judgedKeys = ["judged_at_k", "unjudged_at_k", "retrieval_ndcg_condensed_at_k", "retrieval_bpref"];
    expect([...agg.vacuous].sort()).toEqual(RETRIEVAL_DEPENDENT_KEYS.filter((k) => !judgedKeys.includes(k)).sort());
    expect(agg.vacuousReasons.retrieval_hit_at_k).toBe("no store");
    for (const key of ["citation_coverage", "citation_correctness", "refusal_correctness", "groundedness"])
      expect(agg.vacuousReasons[key]).toBe(NO_STORE_ANSWER);
  });

  it("a store-less run whose turns carry judgments lists judged@k as not measured (no store)", async () => {
    const specs = storelessEvaluators(allEvaluators({ k: 3 }));
    const turns = (
      await turnReports(
        ROWS.map((r) => ({ ...r, retrievedIds: null })),
        specs,
      )
    ).map((t, i) => (i === 0 ? { ...t, judged: ["card-freeze"] } : t));
    const agg = aggregateTurns(turns, { evaluators: specs });
    expect(agg.vacuous).toContain("judged_at_k");
    expect(agg.vacuousReasons.judged_at_k).toBe("no store");
    expect(agg.vacuousReasons.unjudged_at_k).toBe("no store");
  });

  it("the same artifacts through the plain evaluators would have produced refusal and coverage numbers", async () => {
    // What the wrapper prevents: store-less artifacts still yield answer-side scores from the plain evaluators.
    const results = await runEvaluators(allEvaluators({ k: 3 }), { ...ROWS[0]!, retrievedIds: null, answer: "x" });
    expect(results.map((r) => r.key)).toEqual(["citation_coverage", "refusal_correctness"]);
  });
});
