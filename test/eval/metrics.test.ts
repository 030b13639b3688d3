import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import {
  dedupeFirst,
  HIT_KEY,
  hitAtK,
  metricKey,
  METRICS,
  metricSpec,
  ndcgAtK,
  precisionAtK,
  recallAtK,
  reciprocalRankAtK,
  TRIAD_KEYS,
  type Gold,
} from "../../src/eval/measures/metrics.js";

const L2_3 = Math.log2(3); // discount of rank 2
const L2_5 = Math.log2(5); // discount of rank 4

describe("dedupeFirst", () => {
  it("keeps the first occurrence of each id, in order", () => {
    expect(dedupeFirst(["a", "b", "a", "c", "b"])).toEqual(["a", "b", "c"]);
    expect(dedupeFirst([])).toEqual([]);
  });
  it("returns a new array and leaves the input untouched", () => {
    const input = Object.freeze(["x", "x", "y"]);
    const out = dedupeFirst(input);
    expect(out).toEqual(["x", "y"]);
    expect(out).not.toBe(input);
    expect(input).toEqual(["x", "x", "y"]);
  });
});

describe("hand-checked fixtures", () => {
  // gold {a,b}; ranked [c,a,a,d,b]; dedup → [c,a,d,b]
  const ranked = ["c", "a", "a", "d", "b"] as const;
  const gold = ["a", "b"] as const;

  it("k=3: top3 = [c,a,d]", () => {
    expect(hitAtK(ranked, gold, 3)).toBe(1); // a is in the top 3
    expect(recallAtK(ranked, gold, 3)).toBe(0.5); // 1 of 2 gold
    // DCG = 1/log2(2+1) (a at rank 2); IDCG = 1/log2(2) + 1/log2(3) (two gold, k=3 ≥ 2)
    expect(ndcgAtK(ranked, gold, 3)).toBeCloseTo(1 / L2_3 / (1 + 1 / L2_3), 12); // ≈ 0.38685
    expect(ndcgAtK(ranked, gold, 3)).toBeCloseTo(0.38685, 5);
    expect(precisionAtK(ranked, gold, 3)).toBeCloseTo(1 / 3, 12); // 1 hit / k
    expect(reciprocalRankAtK(ranked, gold, 3)).toBe(0.5); // first gold at rank 2
  });

  it("k=4: the duplicate a does not hide b (b is 4th after dedup)", () => {
    // Without dedup the top 4 would be [c,a,a,d]: recall 0.5 and a counted twice.
    expect(recallAtK(ranked, gold, 4)).toBe(1);
    // DCG = 1/log2 3 + 1/log2 5 ≈ 0.63093 + 0.43068 = 1.06161; IDCG = 1 + 1/log2 3 ≈ 1.63093
    expect(ndcgAtK(ranked, gold, 4)).toBeCloseTo((1 / L2_3 + 1 / L2_5) / (1 + 1 / L2_3), 12); // ≈ 0.65093
    expect(precisionAtK(ranked, gold, 4)).toBe(0.5); // 2 hits / 4
  });

  it("k=1: top1 = [c] misses", () => {
    expect(hitAtK(ranked, gold, 1)).toBe(0);
    expect(recallAtK(ranked, gold, 1)).toBe(0);
    expect(ndcgAtK(ranked, gold, 1)).toBe(0);
    expect(precisionAtK(ranked, gold, 1)).toBe(0);
    expect(reciprocalRankAtK(ranked, gold, 1)).toBe(0); // first gold (rank 2) is beyond k
  });

  it("k larger than the list: the whole deduplicated list, P still divides by k", () => {
    // ranked [a], gold {a,b}, k=10
    expect(hitAtK(["a"], ["a", "b"], 10)).toBe(1);
    expect(recallAtK(["a"], ["a", "b"], 10)).toBe(0.5);
    // DCG = 1; IDCG = 1 + 1/log2 3 → 1/1.63093 ≈ 0.61315
    expect(ndcgAtK(["a"], ["a", "b"], 10)).toBeCloseTo(1 / (1 + 1 / L2_3), 12);
    expect(precisionAtK(["a"], ["a", "b"], 10)).toBe(0.1); // 1 / 10, as trec_eval's P.k
    expect(reciprocalRankAtK(["a"], ["a", "b"], 10)).toBe(1);
  });

  it("an empty ranking scores 0, not null, when there is gold", () => {
    for (const m of METRICS) expect(m.fn([], ["a"], 5)).toBe(0);
  });

  it("ideal DCG holds min(|gold|, k) hits, so nDCG of a perfect head is 1 even when |gold| > k", () => {
    // gold {a,b,c}, ranked [a,b], k=2: DCG = 1 + 1/log2 3 = IDCG (ideal cut at k=2)
    expect(ndcgAtK(["a", "b"], ["a", "b", "c"], 2)).toBe(1);
    expect(recallAtK(["a", "b"], ["a", "b", "c"], 2)).toBeCloseTo(2 / 3, 12); // capped at k/|gold|
  });

  it("gold given as a list with duplicates, or as a Set, counts each id once", () => {
    expect(recallAtK(["a"], ["a", "a", "b"], 5)).toBe(0.5);
    expect(recallAtK(["a"], new Set(["a", "b"]), 5)).toBe(0.5);
  });

  it("graded gains (Map): nDCG uses the gains, the ideal sorts them", () => {
    // gold {a:3, b:1}, ranked [b,a], k=2
    // DCG = 1/log2 2 + 3/log2 3 = 1 + 1.89279 = 2.89279; IDCG = 3/log2 2 + 1/log2 3 = 3.63093 → 0.79671
    const gold = new Map([
      ["a", 3],
      ["b", 1],
    ]);
    expect(ndcgAtK(["b", "a"], gold, 2)).toBeCloseTo((1 + 3 / L2_3) / (3 + 1 / L2_3), 12);
    expect(ndcgAtK(["b", "a"], gold, 2)).toBeCloseTo(0.79671, 5);
    expect(ndcgAtK(["a", "b"], gold, 2)).toBe(1);
    // Other metrics treat every gain > 0 as relevant.
    expect(recallAtK(["b"], gold, 1)).toBe(0.5);
    expect(hitAtK(["b"], gold, 1)).toBe(1);
  });

  it("Map entries with gain ≤ 0 are not relevant", () => {
    const gold = new Map([
      ["a", 0],
      ["b", 1],
      ["z", -1],
    ]);
    expect(recallAtK(["a", "b"], gold, 2)).toBe(1); // |relevant| = 1
    expect(ndcgAtK(["a", "b"], gold, 2)).toBeCloseTo(1 / L2_3, 12); // b at rank 2; IDCG = 1
    expect(reciprocalRankAtK(["a", "z", "b"], gold, 3)).toBeCloseTo(1 / 3, 12);
  });
});

describe("nothing to measure → null, never 0 or 1", () => {
  const empties: Gold[] = [[], new Set<string>(), new Map<string, number>(), new Map([["a", 0]])];
  for (const m of METRICS) {
    it(`${m.name} returns null for empty gold`, () => {
      for (const g of empties) {
        expect(m.fn(["a", "b"], g, 3)).toBeNull();
        expect(m.fn([], g, 3)).toBeNull();
      }
    });
  }
});

describe("invalid k", () => {
  for (const m of METRICS) {
    it(`${m.name} throws InvalidArgumentError for k = 0, -1, 1.5, NaN, Infinity`, () => {
      for (const k of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        expect(() => m.fn(["a"], ["a"], k)).toThrow(InvalidArgumentError);
      }
      expect(() => m.fn(["a"], ["a"], 0)).toThrow("Expected `k` to be a positive integer, got 0");
    });
  }
  it("a non-finite graded gain is rejected", () => {
    expect(() => ndcgAtK(["a"], new Map([["a", Number.NaN]]), 1)).toThrow(InvalidArgumentError);
  });
});

describe("inputs are never mutated", () => {
  it("frozen ranked list, frozen gold", () => {
    const ranked = Object.freeze(["b", "a", "b", "c"]);
    const goldList = Object.freeze(["c", "a"]);
    const goldMap = new Map([
      ["a", 2],
      ["c", 1],
    ]);
    for (const m of METRICS) {
      m.fn(ranked, goldList, 2);
      m.fn(ranked, goldMap, 3);
    }
    expect(ranked).toEqual(["b", "a", "b", "c"]);
    expect(goldList).toEqual(["c", "a"]);
    expect([...goldMap]).toEqual([
      ["a", 2],
      ["c", 1],
    ]);
  });
});

describe("registry", () => {
  it("names the ADR keys, the triad first, with trec_eval's names", () => {
    expect(METRICS.map((m) => m.key)).toEqual([
      "retrieval_hit_at_k",
      "retrieval_recall_at_k",
      "retrieval_ndcg_at_k",
      "retrieval_mrr_at_k",
      "retrieval_precision_at_k",
    ]);
    expect(TRIAD_KEYS).toEqual(["retrieval_hit_at_k", "retrieval_recall_at_k", "retrieval_ndcg_at_k"]);
    expect(METRICS.map((m) => m.trecName(5))).toEqual(["success_5", "recall_5", "ndcg_cut_5", "recip_rank", "P_5"]);
    expect(METRICS.map((m) => m.trecName(10))).toEqual([
      "success_10",
      "recall_10",
      "ndcg_cut_10",
      "recip_rank",
      "P_10",
    ]);
    expect(METRICS.find((m) => m.name === "hit")?.fn).toBe(hitAtK);
    for (const m of METRICS) {
      expect(m.description.length).toBeGreaterThan(10);
      expect(m.label).toMatch(/@k$/);
    }
  });

  it("declares each metric once: its trec_eval measure, floor option and drop check follow from the entry", () => {
    for (const m of METRICS) {
      expect(m.key).toBe(`retrieval_${m.name}_at_k`);
      expect(m.kDependent).toBe(true);
      expect(m.direction).toBe("higher");
      expect(m.trecName(7)).toBe(m.trec.cut ? `${m.trec.name}_7` : m.trec.name);
      // Commander derives the option name from the flag: --min-hit → minHit.
      if (m.floor !== undefined)
        expect(m.floor.option).toBe(m.floor.flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()));
      if (m.triad) expect(m.drop).toBe("always");
    }
    expect(METRICS.flatMap((m) => (m.floor === undefined ? [] : [m.floor.flag]))).toEqual([
      "--min-hit",
      "--min-recall",
      "--min-ndcg",
      "--min-mrr",
    ]);
    expect(new Set(METRICS.map((m) => m.trec.printOrder)).size).toBe(METRICS.length);
    expect(METRICS.filter((m) => m.trec.graded).map((m) => m.trec.name)).toEqual(["ndcg_cut"]);
    expect(HIT_KEY).toBe("retrieval_hit_at_k");
    expect(metricKey("ndcg")).toBe("retrieval_ndcg_at_k");
    expect(metricSpec("retrieval_mrr_at_k")?.trecName(5)).toBe("recip_rank");
    expect(metricSpec("refusal_correctness")).toBeUndefined();
  });
});

// ---------------------------------------------------------------- properties
const ID: fc.Arbitrary<string> = fc.constantFrom("a", "b", "c", "d", "e", "f", "g", "h", "i", "j");
const ranked = fc.array(ID, { maxLength: 16 });
const uniqueRanked = fc.uniqueArray(ID, { maxLength: 10 });
const gold = fc.uniqueArray(ID, { minLength: 1, maxLength: 5 });
const gradedGold = fc
  .uniqueArray(fc.tuple(ID, fc.oneof(fc.integer({ min: -1, max: 4 }), fc.double({ min: 0, max: 5, noNaN: true }))), {
    minLength: 1,
    maxLength: 6,
    selector: (t) => t[0],
  })
  .map((entries) => new Map(entries));
const k = fc.integer({ min: 1, max: 20 });
const RUN = { seed: 42, numRuns: 200 } as const;

function hasRelevant(g: ReadonlyMap<string, number>): boolean {
  return [...g.values()].some((v) => v > 0);
}

describe("properties (fast-check, seed 42)", () => {
  it("every score is in [0,1] and non-null when gold is non-empty", () => {
    fc.assert(
      fc.property(ranked, gold, k, (r, g, kk) => {
        for (const m of METRICS) {
          const s = m.fn(r, g, kk);
          expect(s).not.toBeNull();
          expect(s).toBeGreaterThanOrEqual(0);
          expect(s).toBeLessThanOrEqual(1);
        }
      }),
      RUN,
    );
  });

  it("nDCG ≤ 1 (and ≥ 0) with graded gains too; null exactly when no gain > 0", () => {
    fc.assert(
      fc.property(ranked, gradedGold, k, (r, g, kk) => {
        const s = ndcgAtK(r, g, kk);
        if (!hasRelevant(g)) {
          expect(s).toBeNull();
          return;
        }
        expect(s).not.toBeNull();
        expect(s as number).toBeGreaterThanOrEqual(0);
        expect(s as number).toBeLessThanOrEqual(1 + 1e-12);
      }),
      RUN,
    );
  });

  it("a perfect ranking scores 1 (hit, nDCG, RR at any k; recall when k ≥ |gold|)", () => {
    fc.assert(
      fc.property(gold, fc.array(ID, { maxLength: 6 }), k, (g, tail, kk) => {
        const r = [...g, ...tail];
        expect(hitAtK(r, g, kk)).toBe(1);
        expect(ndcgAtK(r, g, kk)).toBeCloseTo(1, 12);
        expect(reciprocalRankAtK(r, g, kk)).toBe(1);
        if (kk >= g.length) expect(recallAtK(r, g, kk)).toBe(1);
        expect(precisionAtK(r, g, kk)).toBeCloseTo(Math.min(g.length, kk) / kk, 12);
      }),
      RUN,
    );
  });

  it("a perfect graded ranking (gains descending) has nDCG 1", () => {
    fc.assert(
      fc.property(gradedGold, k, (g, kk) => {
        fc.pre(hasRelevant(g));
        const r = [...g.entries()].sort((x, y) => y[1] - x[1]).map(([id]) => id);
        expect(ndcgAtK(r, g, kk)).toBeCloseTo(1, 12);
      }),
      RUN,
    );
  });

  it("reordering below k leaves every @k score unchanged", () => {
    fc.assert(
      fc.property(uniqueRanked, gold, k, fc.array(fc.nat(), { maxLength: 10 }), (r, g, kk, keys) => {
        const head = r.slice(0, kk);
        const tail = r
          .slice(kk)
          .map((id, i) => ({ id, key: keys[i] ?? i }))
          .sort((x, y) => x.key - y.key)
          .map((x) => x.id);
        const reordered = [...head, ...tail];
        for (const m of METRICS) expect(m.fn(reordered, g, kk)).toBe(m.fn(r, g, kk));
      }),
      RUN,
    );
  });

  it("adding duplicates (repeats after the first occurrence) never raises a score", () => {
    fc.assert(
      fc.property(ranked, gold, k, fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 8 }), (r, g, kk, inserts) => {
        fc.pre(r.length > 0);
        const withDupes = [...r];
        for (const [which, where] of inserts) {
          const id = r[which % r.length] as string;
          const first = withDupes.indexOf(id);
          const pos = first + 1 + (where % (withDupes.length - first));
          withDupes.splice(pos, 0, id);
        }
        for (const m of METRICS) {
          const before = m.fn(r, g, kk) as number;
          const after = m.fn(withDupes, g, kk) as number;
          expect(after).toBeLessThanOrEqual(before);
          expect(after).toBe(before); // first-occurrence dedup makes repeats inert
        }
      }),
      RUN,
    );
  });

  it("recall ≤ hit; nDCG > 0 and RR > 0 exactly when hit = 1; P·k = recall·|gold| = hits", () => {
    fc.assert(
      fc.property(ranked, gold, k, (r, g, kk) => {
        const hit = hitAtK(r, g, kk) as number;
        const rec = recallAtK(r, g, kk) as number;
        expect(rec).toBeLessThanOrEqual(hit);
        expect((ndcgAtK(r, g, kk) as number) > 0).toBe(hit === 1);
        expect((reciprocalRankAtK(r, g, kk) as number) > 0).toBe(hit === 1);
        const hits = dedupeFirst(r)
          .slice(0, kk)
          .filter((id) => g.includes(id)).length;
        expect((precisionAtK(r, g, kk) as number) * kk).toBeCloseTo(hits, 9);
        expect(rec * g.length).toBeCloseTo(hits, 9);
      }),
      RUN,
    );
  });

  it("scores are monotone in k for hit and recall", () => {
    fc.assert(
      fc.property(ranked, gold, k, (r, g, kk) => {
        expect(hitAtK(r, g, kk + 1) as number).toBeGreaterThanOrEqual(hitAtK(r, g, kk) as number);
        expect(recallAtK(r, g, kk + 1) as number).toBeGreaterThanOrEqual(recallAtK(r, g, kk) as number);
      }),
      RUN,
    );
  });
});
