/**
 * Relevance apart from the citation contract (docs/metrics.md; issue 25 items
 * 3 and 4): a turn's graded `relevant` is nDCG@k's gains, exactly as
 * trec_eval's `ndcg_cut` reads graded qrels; hit@k and recall@k keep reading
 * `must_cite_one_of`; a relevance-only turn scores nDCG only; judged@k is the
 * share of the top-k that carries a judgment, with a warning below 0.8.
 *
 * Expected values come from trec_eval's own output (the vendored
 * test/fixtures/trec_eval-tests/out.test.aql) or are computed by hand in the
 * comments; none is produced by the code under test.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  allEvaluators,
  judgedEvaluator,
  retrievalEvaluator,
  runEvaluators,
} from "../../src/eval/measures/evaluators.js";
import type { TurnArtifacts } from "../../src/eval/measures/types.js";
import { chanceNdcgGraded } from "../../src/eval/measures/chance.js";
import { buildReport } from "../../src/eval/report/aggregate.js";
import { judgmentWarning } from "../../src/eval/report/judgments.js";
import { renderMarkdown, renderTable } from "../../src/eval/report/render.js";
import { parseReport } from "../../src/eval/report/schemas.js";
import type { TurnReport } from "../../src/eval/report/types.js";

const TREC = path.join(import.meta.dirname, "..", "fixtures", "trec_eval-tests");
const K = 3;

function artifacts(over: Partial<TurnArtifacts>): TurnArtifacts {
  return {
    caseId: "c",
    turn: 0,
    locale: "en",
    kind: "golden",
    gold: [],
    expect: "answer",
    retrievedIds: [],
    citedIds: [],
    answer: "an answer",
    refused: false,
    ...over,
  };
}

const score = (results: { key: string; score: number }[], key: string) => results.find((r) => r.key === key)?.score;

describe("graded nDCG@k equals trec_eval -m ndcg_cut on graded qrels", () => {
  it("query 301 of trec_eval's qrels.rel_level (grades 0, 1, 2, 4) and results.test: every ndcg_cut row of out.test.aql", async () => {
    // trec_eval's own files: the judgments of query 301, and its run ordered as trec_eval orders it (score descending, ties by docno descending).
    const qrels = (await readFile(path.join(TREC, "qrels.rel_level"), "utf8"))
      .split("\n")
      .filter((l) => /^301\s/.test(l));
    const relevant: Record<string, number> = {};
    for (const line of qrels) {
      const [, , doc, rel] = line.trim().split(/\s+/) as [string, string, string, string];
      relevant[doc] = Number(rel);
    }
    const rows = (await readFile(path.join(TREC, "results.test"), "utf8"))
      .split("\n")
      .filter((l) => /^301\s/.test(l))
      .map((l) => l.trim().split(/\s+/))
      .map(([, , doc, , s]) => ({ doc: doc as string, score: Number(s) }));
    rows.sort((a, b) => b.score - a.score || (a.doc < b.doc ? 1 : a.doc > b.doc ? -1 : 0));
    const ranked = rows.map((r) => r.doc);
    expect(ranked.length).toBe(500);
    // The expected values: trec_eval -m all_trec -q -l2 qrels.rel_level results.test (ndcg_cut ignores -l: its gains are the grades).
    const expected = new Map<number, string>();
    for (const line of (await readFile(path.join(TREC, "out.test.aql"), "utf8")).split("\n")) {
      const m = /^ndcg_cut_(\d+)\s+301\s+(\S+)$/.exec(line.trim());
      if (m !== null) expected.set(Number(m[1]), m[2] as string);
    }
    expect([...expected.keys()]).toEqual([5, 10, 15, 20, 30, 100, 200, 500, 1000]);
    for (const [k, value] of expected) {
      // A relevance-only turn (graded relevant, no contract): the retrieval evaluator scores its nDCG@k from the grades.
      const results = retrievalEvaluator({ k }).evaluate(
        artifacts({ relevant, relevanceOnly: true, retrievedIds: ranked }),
      ) as { key: string; score: number }[];
      expect(score(results, "retrieval_ndcg_at_k")?.toFixed(4), `ndcg_cut_${k}`).toBe(value);
      // No contract: hit, recall, MRR and P emit nothing.
      expect(results.map((r) => r.key)).toEqual(["retrieval_ndcg_at_k"]);
    }
    // The binary nDCG of the same ranking differs (out.test.aq, qrels.test: ndcg_cut_10 of 301 is 0.1518), so the grades did change the value.
    expect(expected.get(10)).toBe("0.0439");
  });

  it("a graded turn by hand: gains 3, 1, 0; ranking [b, x, a]; nDCG@3 = 2.5 / (3 + 1/log2 3) = 0.6885; hit@k and recall@k read must_cite_one_of", () => {
    // DCG@3 = 1/log2(2) (b, grade 1) + 0 (x, unjudged) + 3/log2(4) (a, grade 3) = 1 + 1.5 = 2.5
    // IDCG@3 = 3/log2(2) + 1/log2(3) = 3.630930 (c has grade 0: not relevant, not in the ideal)
    // nDCG@3 = 2.5 / 3.630930 = 0.688529
    const a = artifacts({ gold: ["a"], relevant: { a: 3, b: 1, c: 0 }, retrievedIds: ["b", "x", "a", "c"] });
    const results = retrievalEvaluator({ k: K }).evaluate(a) as { key: string; score: number; comment?: string }[];
    expect(score(results, "retrieval_ndcg_at_k")).toBeCloseTo(0.688529, 6);
    // The contract: gold [a] is in the top 3 at rank 3 → hit 1, recall 1, MRR 1/3, P 1/3 (binary nDCG would have been 1/log2(4) = 0.5).
    expect(score(results, "retrieval_hit_at_k")).toBe(1);
    expect(score(results, "retrieval_recall_at_k")).toBe(1);
    expect(score(results, "retrieval_mrr_at_k")).toBeCloseTo(1 / 3, 12);
    expect(score(results, "retrieval_precision_at_k")).toBeCloseTo(1 / 3, 12);
    expect(results[0]?.comment).toBe(
      "hit=1 recall=1 ndcg=0.69 (graded) mrr=0.33 precision=0.33 gold=[a] relevant={a:3,b:1,c:0} top3=[b,x,a]",
    );
  });

  it("a turn without relevant keeps binary nDCG over the contract, comment unchanged", () => {
    const results = retrievalEvaluator({ k: K }).evaluate(
      artifacts({ gold: ["a"], retrievedIds: ["b", "x", "a"] }),
    ) as { key: string; score: number; comment?: string }[];
    expect(score(results, "retrieval_ndcg_at_k")).toBeCloseTo(0.5, 12);
    expect(results[0]?.comment).toBe("hit=1 recall=1 ndcg=0.50 mrr=0.33 precision=0.33 gold=[a] top3=[b,x,a]");
  });

  it("graded relevant with every grade 0 gives no nDCG@k (nothing relevant), while the contract's metrics still score", () => {
    const results = retrievalEvaluator({ k: K }).evaluate(
      artifacts({ gold: ["a"], relevant: { a: 0 }, retrievedIds: ["a"] }),
    ) as { key: string }[];
    expect(results.map((r) => r.key)).toEqual([
      "retrieval_hit_at_k",
      "retrieval_recall_at_k",
      "retrieval_mrr_at_k",
      "retrieval_precision_at_k",
    ]);
  });

  it("chance level of graded nDCG: N=4, gains [3,1], k=2 → (4/4)(1 + 1/log2 3)/(3 + 1/log2 3) = 0.449177", () => {
    expect(chanceNdcgGraded(4, [3, 1, 0], 2)).toBeCloseTo(1.6309298 / 3.6309298, 6);
  });
});

describe("judged@k", () => {
  it("is the share of the top-k carrying a judgment: judged ∪ keys(relevant) ∪ must_cite_one_of, by hand", () => {
    const e = judgedEvaluator({ k: 5 });
    // top5 = [a, x, b, y, c]; judged set = {c} ∪ {b, z} ∪ {a} → a, b, c judged, x and y not: 3/5.
    const r = e.evaluate(
      artifacts({
        gold: ["a"],
        relevant: { b: 2, z: 0 },
        judged: ["c"],
        retrievedIds: ["a", "x", "a", "b", "y", "c", "q"],
      }),
    ) as { key: string; score: number; comment?: string }[];
    // Beside judged@5: unjudged@5 = 2/5 (x, y); condensed ranking [a, b, c] scored with the graded gains {b: 2}:
    // DCG = 2/log2 3, IDCG = 2 → 0.63093; bpref: R = {a, b}, N = {c, z}: a and b above every non-relevant → 1.
    expect(r).toEqual([
      { key: "judged_at_k", score: 3 / 5, comment: "judged=0.60 unjudged=[x,y] top5=[a,x,b,y,c]" },
      { key: "unjudged_at_k", score: 2 / 5, comment: "unjudged=[x,y] of top5" },
      { key: "retrieval_ndcg_condensed_at_k", score: 2 / Math.log2(3) / 2, comment: "condensed top5=[a,b,c]" },
      { key: "retrieval_bpref", score: 1, comment: "R=2 N=2 (judged non-relevant)" },
    ]);
    // A grade 0 is a judgment: z retrieved counts as judged.
    expect(
      (
        e.evaluate(artifacts({ relevant: { z: 0 }, relevanceOnly: true, retrievedIds: ["z"] })) as { score: number }[]
      )[0]?.score,
    ).toBe(1);
    // Fewer than k retrieved: divided by what was retrieved (2 of 2), not by k.
    expect(
      (e.evaluate(artifacts({ judged: ["a", "b"], retrievedIds: ["a", "b"] })) as { score: number }[])[0]?.score,
    ).toBe(1);
  });

  it("is not measured on turns without judgments, when retrieval did not run, or when nothing was retrieved", () => {
    const e = judgedEvaluator({ k: 5 });
    expect(e.evaluate(artifacts({ gold: ["a"], retrievedIds: ["a", "x"] }))).toEqual([]);
    expect(e.evaluate(artifacts({ judged: ["a"], retrievedIds: null }))).toEqual([]);
    expect(e.evaluate(artifacts({ judged: ["a"], retrievedIds: [] }))).toEqual([]);
  });
});

/** A reported turn as the sweep makes it: the default evaluators over its artifacts. */
async function turn(caseId: string, t: number, over: Partial<TurnArtifacts>, k = K): Promise<TurnReport> {
  const a = artifacts({ caseId, turn: t, ...over });
  const results = await runEvaluators(allEvaluators({ k }), a);
  const { knownIds: _known, ...rest } = a;
  return { ...rest, user: `question ${caseId}#${t}`, results } as TurnReport;
}

const RUN = {
  datasetHash: "d".repeat(64),
  kbHash: "k".repeat(64),
  source: "own" as const,
  embedder: "builtin",
  k: K,
  store: "memory",
};

describe("a run with graded, relevance-only and judged turns", () => {
  async function report() {
    const turns = [
      // A contract turn without judgments: binary nDCG, no judged@k.
      await turn("plain", 0, { gold: ["a"], retrievedIds: ["a", "b", "c"], citedIds: ["a"] }),
      // A graded turn with a contract: judged@3 = |{a, b} ∩ top3| / 3 = 2/3; hole: x.
      await turn("graded", 0, {
        gold: ["a"],
        relevant: { a: 3, b: 1 },
        retrievedIds: ["b", "x", "a"],
        citedIds: ["a"],
      }),
      // A relevance-only turn: nDCG@3 only (and judged@3 = 1: b, a both judged).
      await turn("relonly", 0, {
        relevant: { a: 2, b: 0 },
        relevanceOnly: true,
        retrievedIds: ["b", "a"],
        citedIds: ["b"],
      }),
      // A contract turn with judged: judged@3 = 1/3 ({a} ∪ {d}: only d retrieved judged); holes: y, z.
      await turn("judged", 0, { gold: ["a"], judged: ["d"], retrievedIds: ["y", "d", "z"] }),
    ];
    return buildReport({ run: RUN, turns, evaluators: allEvaluators({ k: K }), seed: 1, samples: 200 });
  }

  it("scores the relevance-only turn for nDCG only: hit, recall and the answer side exclude it from their n", async () => {
    const r = await report();
    const relOnly = r.turns.find((t) => t.caseId === "relonly")!;
    expect(relOnly.results.map((x) => x.key)).toEqual([
      "retrieval_ndcg_at_k",
      "judged_at_k",
      "unjudged_at_k",
      "retrieval_ndcg_condensed_at_k",
      "retrieval_bpref",
    ]);
    // nDCG@3 by hand: ranking [b (0), a (2)]: DCG = 2/log2 3 = 1.261860; IDCG = 2 → 0.630930.
    expect(score(relOnly.results, "retrieval_ndcg_at_k")).toBeCloseTo(0.63093, 5);
    expect(r.aggregates.retrieval_hit_at_k?.n).toBe(3);
    expect(r.aggregates.retrieval_recall_at_k?.n).toBe(3);
    expect(r.aggregates.retrieval_ndcg_at_k?.n).toBe(4);
    expect(r.aggregates.refusal_correctness?.n).toBe(3);
    expect(r.aggregates.citation_correctness?.n).toBe(2); // plain and graded cited; relonly's citation is not scored
  });

  it("gives judged@k its n and mean over the turns with judgments, in the splits too, and lists the holes", async () => {
    const r = await report();
    // (2/3 + 1 + 1/3) / 3 = 2/3
    expect(r.aggregates.judged_at_k).toMatchObject({ n: 3, nCases: 3 });
    expect(r.aggregates.judged_at_k?.mean).toBeCloseTo(2 / 3, 12);
    expect(r.splits.locale.en?.judged_at_k?.n).toBe(3);
    expect(r.splits.kind.golden?.judged_at_k?.n).toBe(3);
    expect(r.vacuous).not.toContain("judged_at_k");
    expect(r.judgments).toEqual({
      gradedTurns: 2,
      relevanceOnlyTurns: 1,
      judgedTurns: 3,
      warnBelow: 0.8,
      holes: [
        { caseId: "graded", turn: 0, judged: 2 / 3, unjudged: ["x"] },
        { caseId: "judged", turn: 0, judged: 1 / 3, unjudged: ["y", "z"] },
      ],
    });
    // The report reads back with its new fields.
    expect(parseReport(JSON.parse(JSON.stringify(r)), "r.json").judgments).toEqual(r.judgments);
  });

  it("warns below 0.8 naming the turns with holes and their unjudged cards; says nothing at or above it", async () => {
    const r = await report();
    const w = judgmentWarning(r);
    expect(w).toContain("judged@3 is 0.667 (n=3), below 0.8");
    expect(w).toContain("2 turns with unjudged cards in the top-3: graded#0 [x]; judged#0 [y, z]");
    expect(judgmentWarning({ ...r, aggregates: { ...r.aggregates, judged_at_k: { mean: 0.8, n: 3 } } })).toBeNull();
  });

  it("the table and markdown say which nDCG the run used and show judged@k with its n", async () => {
    const r = await report();
    const table = renderTable(r, { color: false });
    expect(table).toContain(
      "nDCG@3: graded gains (the turn's relevant) on 2 turns of 4 scored turns (1 relevance-only: scored for nDCG only); binary over must_cite_one_of on the others",
    );
    expect(table).toContain(
      "judged@3: 0.667 n=3 of 3 turns with judgments (warning level 0.8, BELOW); 2 turns with unjudged cards in the top-3",
    );
    expect(table).toContain("judged#0 judged 0.333 unjudged [y, z]");
    expect(table).toMatch(/judged@3 +0\.667/);
    const md = renderMarkdown(r);
    expect(md).toContain("## Judgments");
    expect(md).toContain("graded#0 judged 0.667 unjudged [x]");
  });

  it("a run without judgments has no judged@k (not even as vacuous) and no judgments section", async () => {
    const turns = [await turn("plain", 0, { gold: ["a"], retrievedIds: ["a", "b", "c"] })];
    const r = buildReport({ run: RUN, turns, evaluators: allEvaluators({ k: K }), seed: 1, samples: 200 });
    expect(r.aggregates.judged_at_k).toBeUndefined();
    expect(r.vacuous).not.toContain("judged_at_k");
    expect(r.judgments).toBeUndefined();
    expect(judgmentWarning(r)).toBeNull();
    expect(renderTable(r, { color: false })).not.toContain("judged@");
  });
});
