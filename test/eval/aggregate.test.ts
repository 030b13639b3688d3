import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { aggregateTurns, artifactsOf, buildReport, summarize } from "../../src/eval/report/aggregate.js";
import { allEvaluators, defaultEvaluators } from "../../src/eval/measures/evaluators.js";
import { clusterMean } from "../../src/eval/stats/bootstrap.js";
import { REPORT_VERSION } from "../../src/eval/report/types.js";
import { fixtureReport, K, LOG2_3, ROWS, runInfo, storelessReport, turnReports } from "./report-fixture.js";

// See report-fixture.ts for the per-turn scores. Scored turns per key:
//   hit       g1#0 1, g1#1 1, g2#1 0, adv1#0 1            → 3/4 = 0.75, n=4
//             (g2#0 and adv1#1 have empty gold: no key; g3#0 did not retrieve: no key, not a 0)
//   recall    0.5, 1, 0, 1                                 → 2.5/4 = 0.625
//   nDCG      0.386853, 1, 0, 0.630930                     → 2.017783/4 ≈ 0.504446
//   MRR       0.5, 1, 0, 0.5                               → 0.5
//   P@3       1/3, 1/3, 0, 1/3                             → 0.25
//   coverage  g1#0 1, g1#1 1, g2#1 0, g3#0 1               → 0.75, n=4 (adv1#0 expects refusal: no key)
//   correct.  g1#0 1, g1#1 0, g2#1 1, adv1#0 1             → 0.75, n=4 (g3#0 store-less, others cite nothing)
//   refusal   all 7: 1,1,1,1,0,1,1                         → 6/7, n=7
const NDCG_G10 = 1 / LOG2_3 / (1 + 1 / LOG2_3);
const NDCG_ADV = 1 / LOG2_3;

describe("aggregateTurns on the hand-checked fixture", () => {
  it("averages each key over the turns where it is present, with n", async () => {
    const r = await fixtureReport();
    const mn = (key: string) => [r.aggregates[key]?.mean, r.aggregates[key]?.n];
    expect(mn("retrieval_hit_at_k")).toEqual([0.75, 4]);
    expect(mn("retrieval_recall_at_k")).toEqual([0.625, 4]);
    expect(r.aggregates.retrieval_ndcg_at_k?.mean).toBeCloseTo((NDCG_G10 + 1 + 0 + NDCG_ADV) / 4, 12);
    expect(r.aggregates.retrieval_ndcg_at_k?.n).toBe(4);
    expect(mn("retrieval_mrr_at_k")).toEqual([0.5, 4]);
    expect(r.aggregates.retrieval_precision_at_k?.mean).toBeCloseTo(0.25, 12);
    expect(mn("citation_coverage")).toEqual([0.75, 4]);
    expect(mn("citation_correctness")).toEqual([0.75, 4]);
    expect(r.aggregates.refusal_correctness?.mean).toBeCloseTo(6 / 7, 12);
    expect(r.aggregates.refusal_correctness?.n).toBe(7);
  });

  it("lists groundedness (no judge) as vacuous and gives it no aggregate", async () => {
    const r = await fixtureReport();
    expect(r.vacuous).toEqual(["groundedness"]);
    expect(r.vacuousReasons).toEqual({ groundedness: "not run: no judge configured" });
    expect(r.aggregates.groundedness).toBeUndefined();
    // Keys follow the evaluators' order.
    expect(Object.keys(r.aggregates)).toEqual([
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

  it("splits by kind: the adversarial turn that carries gold is scored", async () => {
    const r = await fixtureReport();
    const golden = r.splits.kind.golden ?? {};
    const adv = r.splits.kind.adversarial ?? {};
    expect(Object.keys(r.splits.kind)).toEqual(["golden", "adversarial"]);
    // golden hit: g1#0 1, g1#1 1, g2#1 0 → 2/3, n=3
    expect(golden.retrieval_hit_at_k?.mean).toBeCloseTo(2 / 3, 12);
    expect(golden.retrieval_hit_at_k?.n).toBe(3);
    // adversarial hit: adv1#0 1 → 1, n=1, and no interval from one value
    expect(adv.retrieval_hit_at_k).toEqual({ mean: 1, n: 1, nCases: 1 });
    // refusal: golden 5/5 (g1#0, g1#1, g2#0, g2#1, g3#0), adversarial 1/2
    expect(golden.refusal_correctness).toMatchObject({ mean: 1, n: 5 });
    expect(adv.refusal_correctness).toMatchObject({ mean: 0.5, n: 2 });
    // coverage: golden 3/4 (g1#0, g1#1, g2#1, g3#0); adversarial: no key at all (refusal expected)
    expect(golden.citation_coverage).toMatchObject({ mean: 0.75, n: 4 });
    expect(adv.citation_coverage).toBeUndefined();
  });

  it("splits by locale, each with its own n", async () => {
    const r = await fixtureReport();
    expect(Object.keys(r.splits.locale)).toEqual(["en", "es-419", "pt-BR"]);
    // en hit: g1#0 1, g1#1 1 (g3#0 not measured) → 1, n=2; es-419: g2#1 0 → 0, n=1; pt-BR: adv1#0 1 → 1, n=1
    expect(r.splits.locale.en?.retrieval_hit_at_k).toMatchObject({ mean: 1, n: 2 });
    expect(r.splits.locale["es-419"]?.retrieval_hit_at_k).toEqual({ mean: 0, n: 1, nCases: 1 });
    expect(r.splits.locale["pt-BR"]?.retrieval_hit_at_k).toEqual({ mean: 1, n: 1, nCases: 1 });
    // en coverage: g1#0 1, g1#1 1, g3#0 1 → 1, n=3
    expect(r.splits.locale.en?.citation_coverage).toMatchObject({ mean: 1, n: 3 });
    // The n of the groups of a split add up to the overall n.
    for (const key of Object.keys(r.aggregates)) {
      const sum = Object.values(r.splits.locale).reduce((s, g) => s + (g[key]?.n ?? 0), 0);
      expect(sum).toBe(r.aggregates[key]?.n);
    }
  });

  it("attaches a seeded, reproducible case-level bootstrap interval, with the number of cases beside n", async () => {
    const a = await fixtureReport();
    const b = await fixtureReport();
    expect(a.aggregates).toEqual(b.aggregates);
    // refusal: g1 [1, 1], g2 [1, 1], g3 [1], adv1 [1, 0] → 4 cases, 7 turns; resampled as 4 units.
    const refusal = [
      ...[1, 1].map((value) => ({ cluster: "g1", value })),
      ...[1, 1].map((value) => ({ cluster: "g2", value })),
      { cluster: "g3", value: 1 },
      ...[1, 0].map((value) => ({ cluster: "adv1", value })),
    ];
    expect(a.aggregates.refusal_correctness?.ci95).toEqual(
      clusterMean(refusal, { seed: 42, samples: 2000, unit: "case" })?.ci95,
    );
    expect(a.aggregates.refusal_correctness).toMatchObject({ n: 7, nCases: 4 });
    // The hit turns: g1#0, g1#1, g2#1, adv1#0 → 4 turns in 3 cases.
    expect(a.aggregates.retrieval_hit_at_k).toMatchObject({ n: 4, nCases: 3 });
    const ci = a.aggregates.retrieval_recall_at_k?.ci95 as [number, number];
    expect(ci[0]).toBeLessThanOrEqual(0.625);
    expect(ci[1]).toBeGreaterThanOrEqual(0.625);
    expect(a.bootstrap).toMatchObject({ seed: 42, samples: 2000, unit: "case" });
  });

  it("another seed changes the intervals but never the means or n", async () => {
    const evaluators = allEvaluators({ k: K });
    const turns = await turnReports(ROWS, evaluators);
    // Turn-level resampling: with the fixture's 3–4 cases, case-level intervals sit on the extremes whatever the seed.
    const a = aggregateTurns(turns, { evaluators, seed: 1, resample: "turn" });
    const b = aggregateTurns(turns, { evaluators, seed: 99, resample: "turn" });
    for (const key of Object.keys(a.aggregates)) {
      expect(b.aggregates[key]?.mean).toBe(a.aggregates[key]?.mean);
      expect(b.aggregates[key]?.n).toBe(a.aggregates[key]?.n);
    }
    expect(b.aggregates.retrieval_ndcg_at_k?.ci95).not.toEqual(a.aggregates.retrieval_ndcg_at_k?.ci95);
  });

  it("tests each kind against golden and each locale against en (triad keys); one Holm family per key", async () => {
    const r = await fixtureReport();
    const d = r.deltas ?? [];
    // per triad key: adversarial vs golden, then 2 non-reference locales
    expect(d.map((x) => `${x.key}:${x.split}:${x.group}`)).toEqual([
      "retrieval_hit_at_k:kind:adversarial",
      "retrieval_hit_at_k:locale:es-419",
      "retrieval_hit_at_k:locale:pt-BR",
      "retrieval_recall_at_k:kind:adversarial",
      "retrieval_recall_at_k:locale:es-419",
      "retrieval_recall_at_k:locale:pt-BR",
      "retrieval_ndcg_at_k:kind:adversarial",
      "retrieval_ndcg_at_k:locale:es-419",
      "retrieval_ndcg_at_k:locale:pt-BR",
    ]);
    const hitEs = d[1];
    // es-419 hit 0 (1 turn, 1 case) vs en 1 (2 turns, both of case g1): one case per side cannot be resampled → no CI, p = 1.
    expect(hitEs).toMatchObject({
      split: "locale",
      reference: "en",
      nGroup: 1,
      nReference: 2,
      nCasesGroup: 1,
      nCasesReference: 1,
      meanGroup: 0,
      meanReference: 1,
      diff: -1,
    });
    expect(hitEs?.ci95).toBeUndefined();
    expect(hitEs?.pValue).toBe(1);
    for (const x of d) {
      expect(x.familySize).toBe(3);
      expect(x.pAdjusted).toBeGreaterThanOrEqual(x.pValue);
      expect(x.significant).toBe((x.pAdjusted as number) < 0.05);
    }
  });
});

describe("the store-less run", () => {
  it("marks every retrieval key and citation correctness as 'no store'; nothing gets a 0 or 1", async () => {
    const r = await storelessReport();
    const retrievalKeys = [
      "retrieval_hit_at_k",
      "retrieval_recall_at_k",
      "retrieval_ndcg_at_k",
      "retrieval_mrr_at_k",
      "retrieval_precision_at_k",
    ];
    expect(r.vacuous).toEqual([...retrievalKeys, "citation_correctness", "groundedness"]);
    for (const key of [...retrievalKeys, "citation_correctness"]) {
      expect(r.vacuousReasons[key]).toBe("no store");
      expect(r.aggregates[key]).toBeUndefined();
      for (const g of Object.values(r.splits.kind)) expect(g[key]).toBeUndefined();
    }
    // Measured keys do not depend on retrieval: coverage 0.75 n=4, refusal 6/7 n=7 as in the store-backed run.
    expect(r.aggregates.citation_coverage).toMatchObject({ mean: 0.75, n: 4 });
    expect(r.aggregates.refusal_correctness?.n).toBe(7);
    expect(r.deltas).toEqual([]);
  });

  it("a run whose turns have no gold at all reports the retrieval keys as vacuous with the evaluator's own reason", async () => {
    const evaluators = defaultEvaluators({ k: K });
    const turns = await turnReports(
      ROWS.filter((t) => t.gold.length === 0),
      evaluators,
    );
    const a = aggregateTurns(turns, { evaluators });
    expect(a.vacuousReasons.retrieval_hit_at_k).toBe("no gold-bearing turns");
    expect(a.vacuousReasons.citation_correctness).toBe("nothing was cited");
    expect(a.aggregates.refusal_correctness).toMatchObject({ mean: 1, n: 2 });
  });
});

describe("summarize / artifactsOf / buildReport", () => {
  it("summarize refuses an empty list: n = 0 has no mean", () => {
    expect(() => summarize([])).toThrow(InvalidArgumentError);
    expect(summarize([0.5])).toEqual({ mean: 0.5, n: 1, nCases: 1 });
  });

  it("artifactsOf gives back what the evaluator saw", async () => {
    const [t] = await turnReports(ROWS.slice(0, 1), defaultEvaluators({ k: K }));
    const a = artifactsOf(t as NonNullable<typeof t>, new Set(["a"]));
    expect(a).toMatchObject({
      caseId: "g1",
      turn: 0,
      gold: ["a", "b"],
      retrievedIds: ["c", "a", "d"],
      citedIds: ["a"],
    });
    expect(a.knownIds?.has("a")).toBe(true);
  });

  it("buildReport assembles a versioned report and does not mutate the turns", async () => {
    const evaluators = defaultEvaluators({ k: K });
    const turns = await turnReports(ROWS, evaluators);
    const copy = structuredClone(turns);
    const r = buildReport({ run: runInfo(), turns, evaluators });
    expect(r.schemaVersion).toBe(REPORT_VERSION);
    expect(r.gate).toBeNull();
    expect(r.turns).toBe(turns);
    expect(turns).toEqual(copy);
  });
});

describe("extra splits (e.g. tune / holdout)", () => {
  const part = new Map([
    ["g1", "tune"],
    ["adv1", "tune"],
    ["g2", "holdout"],
    ["g3", "holdout"],
  ]);
  const extraSplits = [
    { name: "part", groupOf: (id: string) => part.get(id), order: ["tune", "holdout"], reference: "tune" },
  ];

  it("aggregates each group, and adds its deltas to each key's Holm family", async () => {
    const evaluators = allEvaluators({ k: K });
    const turns = await turnReports(ROWS, evaluators);
    const a = aggregateTurns(turns, { evaluators, extraSplits });
    expect(Object.keys(a.splits)).toEqual(["kind", "locale", "part", "position"]);
    expect(Object.keys(a.splits.part ?? {})).toEqual(["tune", "holdout"]);
    // hit: tune g1#0 1, g1#1 1, adv1#0 1 → 1 (3 turns, 2 cases); holdout g2#1 0 → 0 (g3#0 not measured)
    expect(a.splits.part?.tune?.retrieval_hit_at_k).toMatchObject({ mean: 1, n: 3, nCases: 2 });
    expect(a.splits.part?.holdout?.retrieval_hit_at_k).toMatchObject({ mean: 0, n: 1, nCases: 1 });
    const hit = a.deltas.filter((d) => d.key === "retrieval_hit_at_k");
    expect(hit.map((d) => `${d.split}:${d.group}`)).toEqual([
      "kind:adversarial",
      "locale:es-419",
      "locale:pt-BR",
      "part:holdout",
    ]);
    for (const d of hit) expect(d.familySize).toBe(4);
    expect(hit[3]).toMatchObject({ reference: "tune", diff: -1 });
  });

  it("is rendered as its own table in stdout and markdown; a clashing name is refused", async () => {
    const evaluators = allEvaluators({ k: K });
    const turns = await turnReports(ROWS, evaluators);
    const r = buildReport({ run: runInfo(), turns, evaluators, extraSplits });
    const { renderMarkdown, renderTable } = await import("../../src/eval/report/render.js");
    // "part" is the tune/holdout split: its table labels the fitted part (docs/holdout.md); any other name is generic.
    expect(renderTable(r, { color: false })).toMatch(/^metric +tune \(fitted on\) +holdout$/m);
    expect(renderMarkdown(r)).toContain("## By part (tune / holdout)");
    const cohorts = buildReport({
      run: runInfo(),
      turns,
      evaluators,
      extraSplits: [{ ...extraSplits[0]!, name: "cohort" }],
    });
    expect(renderTable(cohorts, { color: false })).toMatch(/^metric \(cohort\) +tune +holdout$/m);
    expect(renderMarkdown(cohorts)).toContain("## By cohort");
    expect(() => aggregateTurns(turns, { evaluators, extraSplits: [{ name: "locale", groupOf: () => "x" }] })).toThrow(
      InvalidArgumentError,
    );
  });
});
