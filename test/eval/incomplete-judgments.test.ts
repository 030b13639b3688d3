/**
 * The measures for incomplete judgments in a report (docs/metrics.md,
 * "Incomplete judgments in reports"): on a labelled case set whose turns carry
 * `judged` (and graded `relevant`), unjudged@k (trec_eval 10's unj: divided
 * by k), condensed nDCG@k (the ranking without cards outside judged ∪
 * relevant ∪ gold) and bpref, per turn and per split, equal an independent
 * computation written here; turns without judgments get none of them.
 */
import { describe, expect, it } from "vitest";
import { allEvaluators, runEvaluators } from "../../src/eval/measures/evaluators.js";
import { INCOMPLETE_JUDGMENT_MEASURES, JUDGED, METRICS } from "../../src/eval/measures/metrics.js";
import type { TurnArtifacts } from "../../src/eval/measures/types.js";
import { buildReport } from "../../src/eval/report/aggregate.js";
import type { TurnReport } from "../../src/eval/report/types.js";

const K = 4;
const RUN = {
  datasetHash: "d".repeat(64),
  kbHash: "k".repeat(64),
  source: "own" as const,
  embedder: "builtin",
  k: K,
  store: "memory",
};

interface Labelled {
  caseId: string;
  locale: string;
  gold: string[];
  judged?: string[];
  relevant?: Record<string, number>;
  retrievedIds: string[];
}

/** The labelled case set: English and Spanish turns, with judged lists, graded relevance, duplicates, short lists. */
const CASES: Labelled[] = [
  { caseId: "e1", locale: "en", gold: ["a"], judged: ["b", "c"], retrievedIds: ["x", "a", "b", "y", "c"] },
  { caseId: "e2", locale: "en", gold: ["p"], judged: ["q"], retrievedIds: ["q", "q", "r", "p"] },
  { caseId: "e3", locale: "en", gold: ["m"], relevant: { m: 3, n: 1, o: 0 }, retrievedIds: ["o", "z", "n", "m", "w"] },
  { caseId: "e4", locale: "en", gold: ["a"], retrievedIds: ["a", "b"] }, // no judgments: none of the measures
  { caseId: "s1", locale: "es", gold: ["s"], judged: ["t", "u", "v"], retrievedIds: ["t", "u", "k", "s"] },
  { caseId: "s2", locale: "es", gold: ["s"], judged: ["t"], retrievedIds: ["s"] }, // one card: unj divides by k
  { caseId: "s3", locale: "es", gold: ["h"], judged: ["i", "j"], retrievedIds: ["g", "f", "e", "d"] }, // nothing judged retrieved
];

function artifacts(c: Labelled): TurnArtifacts {
  return {
    caseId: c.caseId,
    turn: 0,
    locale: c.locale,
    kind: "golden",
    gold: c.gold,
    ...(c.judged !== undefined ? { judged: c.judged } : {}),
    ...(c.relevant !== undefined ? { relevant: c.relevant } : {}),
    expect: "answer",
    retrievedIds: c.retrievedIds,
    citedIds: [],
    answer: "an answer",
    refused: false,
  };
}

// ---- the independent computation
const unique = (xs: string[]) => xs.filter((x, i) => xs.indexOf(x) === i);
const judgedOf = (c: Labelled) => new Set([...(c.judged ?? []), ...Object.keys(c.relevant ?? {}), ...c.gold]);
const carries = (c: Labelled) => c.judged !== undefined || c.relevant !== undefined;

function unjudgedAt(c: Labelled, k: number): number {
  const judged = judgedOf(c);
  return (
    unique(c.retrievedIds)
      .slice(0, k)
      .filter((id) => !judged.has(id)).length / k
  );
}

function condensedNdcgAt(c: Labelled, k: number): number | null {
  const judged = judgedOf(c);
  const ranking = unique(c.retrievedIds)
    .filter((id) => judged.has(id))
    .slice(0, k);
  const gain = (id: string) =>
    c.relevant !== undefined ? Math.max(c.relevant[id] ?? 0, 0) : c.gold.includes(id) ? 1 : 0;
  const ideal = (c.relevant !== undefined ? Object.values(c.relevant).filter((g) => g > 0) : c.gold.map(() => 1))
    .sort((x, y) => y - x)
    .slice(0, k);
  if (ideal.length === 0) return null;
  let dcg = 0;
  ranking.forEach((id, i) => (dcg += gain(id) / Math.log2(i + 2)));
  let idcg = 0;
  ideal.forEach((g, i) => (idcg += g / Math.log2(i + 2)));
  return dcg / idcg;
}

function bprefOf(c: Labelled): number {
  const relevant = new Set([
    ...c.gold,
    ...Object.entries(c.relevant ?? {})
      .filter(([, g]) => g > 0)
      .map(([id]) => id),
  ]);
  const nonrel = [...judgedOf(c)].filter((id) => !relevant.has(id));
  const R = relevant.size;
  let above = 0;
  let sum = 0;
  for (const id of unique(c.retrievedIds)) {
    if (relevant.has(id)) sum += above === 0 ? 1 : 1 - Math.min(above, R) / Math.min(nonrel.length, R);
    else if (nonrel.includes(id)) above++;
  }
  return sum / R;
}

async function report() {
  const turns: TurnReport[] = [];
  for (const c of CASES) {
    const a = artifacts(c);
    const results = await runEvaluators(allEvaluators({ k: K }), a);
    turns.push({ ...a, user: `question ${c.caseId}`, results } as TurnReport);
  }
  return buildReport({ run: RUN, turns, evaluators: allEvaluators({ k: K }), seed: 1, samples: 200 });
}

const [UNJ, CONDENSED, BPREF] = INCOMPLETE_JUDGMENT_MEASURES.map((m) => m.key) as [string, string, string];

describe("unjudged@k, condensed nDCG@k and bpref in a report of a labelled case set", () => {
  it("per turn: equal the independent computation; a turn without judgments has none of them", async () => {
    const r = await report();
    let compared = 0;
    for (const c of CASES) {
      const t = r.turns.find((x) => x.caseId === c.caseId)!;
      const got = (key: string) => t.results.find((x) => x.key === key)?.score;
      if (!carries(c)) {
        for (const key of [JUDGED.key, UNJ, CONDENSED, BPREF]) expect(got(key), `${c.caseId} ${key}`).toBeUndefined();
        continue;
      }
      expect(got(UNJ), `${c.caseId} unjudged@${K}`).toBeCloseTo(unjudgedAt(c, K), 12);
      expect(got(CONDENSED), `${c.caseId} condensed nDCG@${K}`).toBeCloseTo(condensedNdcgAt(c, K) as number, 12);
      expect(got(BPREF), `${c.caseId} bpref`).toBeCloseTo(bprefOf(c), 12);
      compared += 3;
    }
    expect(compared).toBe(18);
    // unj divides by k: s2 retrieved one (judged) card, so 0/4; s3 four unjudged cards: 4/4.
    expect(r.turns.find((t) => t.caseId === "s3")!.results.find((x) => x.key === UNJ)?.score).toBe(1);
    // Condensed nDCG differs from nDCG where unjudged cards rank above relevant ones (e1: x above a).
    const e1 = r.turns.find((t) => t.caseId === "e1")!;
    const ndcg = e1.results.find((x) => x.key === "retrieval_ndcg_at_k")?.score as number;
    expect(e1.results.find((x) => x.key === CONDENSED)?.score).toBeGreaterThan(ndcg);
  });

  it("per split and overall: the mean over the turns with judgments, with their n", async () => {
    const r = await report();
    const judgedCases = CASES.filter(carries);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    for (const [key, f] of [
      [UNJ, (c: Labelled) => unjudgedAt(c, K)],
      [CONDENSED, (c: Labelled) => condensedNdcgAt(c, K) as number],
      [BPREF, bprefOf],
    ] as const) {
      expect(r.aggregates[key]?.n).toBe(judgedCases.length);
      expect(r.aggregates[key]?.mean).toBeCloseTo(mean(judgedCases.map(f)), 12);
      for (const locale of ["en", "es"]) {
        const inSplit = judgedCases.filter((c) => c.locale === locale);
        expect(r.splits.locale[locale]?.[key]?.n, `${key} ${locale}`).toBe(inSplit.length);
        expect(r.splits.locale[locale]?.[key]?.mean).toBeCloseTo(mean(inSplit.map(f)), 12);
      }
    }
    expect(r.vacuous).not.toContain(UNJ);
  });

  it("the registry says which measures need judged-non-relevant information", () => {
    expect(METRICS.every((m) => !m.needsJudgedNonrelevant)).toBe(true);
    expect(JUDGED.needsJudgedNonrelevant).toBe(true);
    expect(INCOMPLETE_JUDGMENT_MEASURES.every((m) => m.needsJudgedNonrelevant)).toBe(true);
  });
});
