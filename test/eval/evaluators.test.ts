import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import {
  allEvaluators,
  citationCorrectnessEvaluator,
  citationCoverageEvaluator,
  defaultEvaluators,
  groundednessEvaluator,
  NO_JUDGE,
  NO_STORE,
  refusalEvaluator,
  retrievalEvaluator,
  runEvaluators,
  type EvaluatorSpec,
  type Judge,
} from "../../src/eval/measures/evaluators.js";
import type { EvalResult, TurnArtifacts } from "../../src/eval/measures/types.js";

const L2_3 = Math.log2(3);

function turn(over: Partial<TurnArtifacts> = {}): TurnArtifacts {
  return {
    caseId: "c1",
    turn: 0,
    locale: "en",
    kind: "golden",
    gold: ["a", "b"],
    expect: "answer",
    retrievedIds: ["c", "a", "d"],
    citedIds: ["a"],
    answer: "See a.",
    refused: false,
    ...over,
  };
}

function sync(spec: EvaluatorSpec, a: TurnArtifacts): EvalResult[] {
  const r = spec.evaluate(a);
  if (r instanceof Promise) throw new Error("expected a synchronous evaluator");
  return r;
}

function byKey(results: EvalResult[]): Record<string, number> {
  return Object.fromEntries(results.map((r) => [r.key, r.score]));
}

describe("retrievalEvaluator", () => {
  const spec = retrievalEvaluator({ k: 3 });

  it("emits the triad plus MRR and P over the retrieved ids, with a comment stating the numbers", () => {
    const results = sync(spec, turn());
    // gold {a,b}, top3 [c,a,d]: hit 1; recall 1/2; nDCG (1/log2 3)/(1 + 1/log2 3) ≈ 0.387; MRR 1/2; P 1/3.
    const s = byKey(results);
    expect(Object.keys(s)).toEqual([
      "retrieval_hit_at_k",
      "retrieval_recall_at_k",
      "retrieval_ndcg_at_k",
      "retrieval_mrr_at_k",
      "retrieval_precision_at_k",
    ]);
    expect(s.retrieval_hit_at_k).toBe(1);
    expect(s.retrieval_recall_at_k).toBe(0.5);
    expect(s.retrieval_ndcg_at_k).toBeCloseTo(1 / L2_3 / (1 + 1 / L2_3), 12);
    expect(s.retrieval_mrr_at_k).toBe(0.5);
    expect(s.retrieval_precision_at_k).toBeCloseTo(1 / 3, 12);
    expect(results[0]?.comment).toBe("hit=1 recall=0.50 ndcg=0.39 mrr=0.50 precision=0.33 gold=[a,b] top3=[c,a,d]");
  });

  it("scores retrieved ids, never cited ids", () => {
    // The answer cites both gold cards but retrieval found neither.
    const s = byKey(sync(spec, turn({ retrievedIds: ["x", "y", "z"], citedIds: ["a", "b"] })));
    expect(s.retrieval_hit_at_k).toBe(0);
    expect(s.retrieval_recall_at_k).toBe(0);
    // And the reverse: nothing cited, gold retrieved first.
    expect(byKey(sync(spec, turn({ retrievedIds: ["a", "b"], citedIds: [] }))).retrieval_recall_at_k).toBe(1);
  });

  it("cuts at k after dedup: a duplicate neither counts twice nor hides a later card", () => {
    // [c,c,a,...] → distinct [c,a,d]: a is rank 2, inside the top-3.
    const s = byKey(sync(spec, turn({ retrievedIds: ["c", "c", "a", "d", "b"] })));
    expect(s.retrieval_hit_at_k).toBe(1);
    expect(s.retrieval_recall_at_k).toBe(0.5); // b is rank 4 after dedup: outside
  });

  it("returns [] for empty gold (no key at all, never a vacuous 1.0) and is not 'not measured'", () => {
    const a = turn({ gold: [] });
    expect(sync(spec, a)).toEqual([]);
    expect(spec.notMeasured?.(a)).toBeNull();
  });

  it("returns [] with a 'no store' marker when the retrieval node did not run", () => {
    const a = turn({ retrievedIds: null });
    expect(sync(spec, a)).toEqual([]);
    expect(spec.notMeasured?.(a)).toBe(NO_STORE);
    expect(spec.notMeasured?.(turn())).toBeNull();
  });

  it("an empty retrieved list is measured: every score is 0", () => {
    const s = byKey(sync(spec, turn({ retrievedIds: [] })));
    expect(Object.values(s)).toEqual([0, 0, 0, 0, 0]);
  });

  it("rejects a bad k with a typed error", () => {
    expect(() => retrievalEvaluator({ k: 0 })).toThrow(InvalidArgumentError);
    expect(() => retrievalEvaluator({ k: 0 })).toThrow("Expected `k` to be a positive integer, got 0");
  });
});

describe("citationCoverageEvaluator", () => {
  const spec = citationCoverageEvaluator();
  it("is 1 when at least one gold card is cited, else 0", () => {
    expect(sync(spec, turn({ citedIds: ["z", "b"] }))).toEqual([
      { key: "citation_coverage", score: 1, comment: "coverage=1 cited=[z,b] gold=[a,b] matched=[b]" },
    ]);
    expect(sync(spec, turn({ citedIds: ["z"] }))[0]?.score).toBe(0);
    expect(sync(spec, turn({ citedIds: [] }))[0]?.score).toBe(0);
  });
  it("emits no key for empty gold or a turn that expects a refusal", () => {
    expect(sync(spec, turn({ gold: [] }))).toEqual([]);
    expect(sync(spec, turn({ expect: "refuse" }))).toEqual([]);
  });
  it("does not depend on retrieval (store-less turns are measured)", () => {
    expect(sync(spec, turn({ retrievedIds: null }))[0]?.score).toBe(1);
  });
});

describe("citationCorrectnessEvaluator (all-or-nothing)", () => {
  const spec = citationCorrectnessEvaluator();
  const known = new Set(["a", "b", "c", "d", "e"]);
  it("is 1 when every cited id exists and was retrieved", () => {
    expect(sync(spec, turn({ citedIds: ["a", "c"], knownIds: known }))).toEqual([
      { key: "citation_correctness", score: 1, comment: "correct=2/2 cited=[a,c]" },
    ]);
  });
  it("is 0 when any cited id was not retrieved or does not exist, listing the bad ids", () => {
    expect(sync(spec, turn({ citedIds: ["a", "b", "zz"], knownIds: known }))).toEqual([
      { key: "citation_correctness", score: 0, comment: "correct=1/3 cited=[a,b,zz] unknown=[zz] not_retrieved=[b]" },
    ]);
  });
  it("without knownIds only checks 'retrieved this turn'", () => {
    expect(sync(spec, turn({ citedIds: ["zz"] }))[0]?.comment).toBe("correct=0/1 cited=[zz] not_retrieved=[zz]");
  });
  it("counts duplicate citations once", () => {
    expect(sync(spec, turn({ citedIds: ["a", "a"] }))[0]?.comment).toBe("correct=1/1 cited=[a]");
  });
  it("emits no key when nothing was cited, and is not measured without a store", () => {
    expect(sync(spec, turn({ citedIds: [] }))).toEqual([]);
    expect(spec.notMeasured?.(turn({ citedIds: [] }))).toBeNull();
    const storeless = turn({ retrievedIds: null });
    expect(sync(spec, storeless)).toEqual([]);
    expect(spec.notMeasured?.(storeless)).toBe(NO_STORE);
  });
});

describe("refusalEvaluator", () => {
  const spec = refusalEvaluator();
  it.each([
    ["answer", false, 1],
    ["answer", true, 0],
    ["refuse", true, 1],
    ["refuse", false, 0],
  ] as const)("expect=%s refused=%s → %d, always emitted", (expectValue, refused, score) => {
    // Emitted on no-match turns and store-less turns too.
    const results = sync(spec, turn({ expect: expectValue, refused, gold: [], retrievedIds: null }));
    expect(results).toEqual([
      { key: "refusal_correctness", score, comment: `expected=${expectValue} refused=${refused}` },
    ]);
  });
});

describe("groundednessEvaluator", () => {
  it("without a judge never scores and is 'not run'", async () => {
    const spec = groundednessEvaluator();
    expect(await spec.evaluate(turn())).toEqual([]);
    expect(spec.notMeasured?.(turn())).toBe(NO_JUDGE);
    expect(NO_JUDGE).toBe("not run: no judge configured");
  });

  it("with a judge (a fake: no model is reachable here) emits its score and comment", async () => {
    const calls: string[] = [];
    const fakeJudge: Judge = async (a) => {
      calls.push(`${a.caseId}#${a.turn}`);
      return { score: 0.75, comment: "3 of 4 claims supported" };
    };
    const spec = groundednessEvaluator({ judge: fakeJudge });
    expect(spec.notMeasured).toBeUndefined();
    expect(await spec.evaluate(turn())).toEqual([
      { key: "groundedness", score: 0.75, comment: "3 of 4 claims supported" },
    ]);
    // Refused or empty answers have nothing to ground: the judge is not called.
    expect(await spec.evaluate(turn({ refused: true }))).toEqual([]);
    expect(await spec.evaluate(turn({ answer: "  " }))).toEqual([]);
    expect(calls).toEqual(["c1#0"]);
  });

  it("a judge returning null contributes no key; a score outside [0, 1] is a configuration error", async () => {
    expect(await groundednessEvaluator({ judge: () => null }).evaluate(turn())).toEqual([]);
    await expect(
      Promise.resolve(groundednessEvaluator({ judge: () => ({ score: 1.5 }) }).evaluate(turn())),
    ).rejects.toThrow(InvalidArgumentError);
  });
});

describe("defaultEvaluators / allEvaluators / runEvaluators", () => {
  it("defaultEvaluators are the deterministic ones; allEvaluators adds the groundedness slot", () => {
    expect(defaultEvaluators({ k: 5 }).map((s) => s.name)).toEqual([
      "retrieval",
      "judged",
      "citation_coverage",
      "citation_correctness",
      "refusal_correctness",
    ]);
    expect(allEvaluators({ k: 5 }).map((s) => s.name)).toContain("groundedness");
  });

  it("runs every evaluator and concatenates results in order", async () => {
    const results = await runEvaluators(defaultEvaluators({ k: 3 }), turn({ knownIds: new Set(["a", "b", "c", "d"]) }));
    expect(results.map((r) => r.key)).toEqual([
      "retrieval_hit_at_k",
      "retrieval_recall_at_k",
      "retrieval_ndcg_at_k",
      "retrieval_mrr_at_k",
      "retrieval_precision_at_k",
      "citation_coverage",
      "citation_correctness",
      "refusal_correctness",
    ]);
  });

  it("rejects duplicate keys across evaluators and undeclared keys", async () => {
    await expect(runEvaluators([refusalEvaluator(), refusalEvaluator()], turn())).rejects.toThrow(InvalidArgumentError);
    const rogue: EvaluatorSpec = {
      name: "rogue",
      keys: ["x"],
      evaluate: () => [{ key: "y", score: 1 }],
      whenEmpty: "",
    };
    await expect(runEvaluators([rogue], turn())).rejects.toThrow(/one of x/);
  });

  it("evaluators are pure: the artifacts are not mutated", async () => {
    const a = turn({ retrievedIds: ["c", "c", "a"], citedIds: ["a", "a"] });
    const copy = structuredClone(a);
    await runEvaluators(allEvaluators({ k: 3 }), a);
    expect(a).toEqual(copy);
  });
});
