import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { RRF_K, reciprocalRankFusion, renumber, type FusionInput } from "../../src/retrieval/fusion.js";
import type { Ranked } from "../../src/retrieval/types.js";

/** A ranked list from ids in order (ranks 1..n, parent = the part before `#`). */
const list = (...ids: string[]): Ranked[] =>
  ids.map((id, i) => ({ id, parentId: id.split("#")[0]!, score: 100 - i, rank: i + 1 }));

function deepFreeze<T>(x: T): T {
  if (typeof x === "object" && x !== null) {
    for (const v of Object.values(x)) deepFreeze(v);
    Object.freeze(x);
  }
  return x;
}

describe("reciprocalRankFusion: hand-checked", () => {
  it("sums weight / (k + rank) per chunk id", () => {
    // a: 1/61 + 1/62 = 0.032522 ; b: 1/62 + 1/61 = the same → tie, id ascending: a before b
    // c: 1/63 = 0.015873 ; d: 1/63 → tie, c before d
    const fused = reciprocalRankFusion([
      { name: "dense", ranked: list("a#1", "b#1", "c#1") },
      { name: "bm25", ranked: list("b#1", "a#1", "d#1") },
    ]);
    expect(fused.map((r) => [r.id, r.rank])).toEqual([
      ["a#1", 1],
      ["b#1", 2],
      ["c#1", 3],
      ["d#1", 4],
    ]);
    expect(fused[0]!.score).toBeCloseTo(1 / 61 + 1 / 62, 15);
    expect(fused[1]!.score).toBe(fused[0]!.score);
    expect(fused[2]!.score).toBeCloseTo(1 / 63, 15);
    expect(fused[0]!.parentId).toBe("a");
    expect(RRF_K).toBe(60);
  });

  it("uses the rank field, not the array position", () => {
    const sparse: Ranked[] = [{ id: "x#1", parentId: "x", score: 1, rank: 5 }];
    expect(reciprocalRankFusion([{ name: "a", ranked: sparse }])[0]!.score).toBeCloseTo(1 / 65, 15);
  });

  it("respects weights and k, including explicit zeros", () => {
    // k = 0, weights 2 and 0: a = 2/1, b = 2/2; bm25's c gets 0/1 = 0 and still appears, last.
    const fused = reciprocalRankFusion(
      [
        { name: "dense", ranked: list("a#1", "b#1"), weight: 2 },
        { name: "bm25", ranked: list("c#1"), weight: 0 },
      ],
      { k: 0 },
    );
    expect(fused.map((r) => [r.id, r.score])).toEqual([
      ["a#1", 2],
      ["b#1", 1],
      ["c#1", 0],
    ]);
    // k = 10: 1/11 and 1/12.
    expect(reciprocalRankFusion([{ name: "d", ranked: list("a#1", "b#1") }], { k: 10 }).map((r) => r.score)).toEqual([
      1 / 11,
      1 / 12,
    ]);
  });

  it("counts an id listed twice in one list once, at its best rank", () => {
    const dup: Ranked[] = [...list("a#1", "b#1"), { id: "a#1", parentId: "a", score: 0, rank: 3 }];
    const fused = reciprocalRankFusion([{ name: "d", ranked: dup }]);
    expect(fused.map((r) => r.id)).toEqual(["a#1", "b#1"]);
    expect(fused[0]!.score).toBe(1 / 61);
  });

  it("handles no lists and empty lists", () => {
    expect(reciprocalRankFusion([])).toEqual([]);
    expect(
      reciprocalRankFusion([
        { name: "d", ranked: [] },
        { name: "b", ranked: [] },
      ]),
    ).toEqual([]);
  });

  it("rejects negative or non-finite weight and k, and bad ranks", () => {
    const ranked = list("a#1");
    expect(() => reciprocalRankFusion([{ name: "dense", ranked, weight: -1 }])).toThrow(
      "Expected `weight of dense` to be a finite non-negative number, got -1",
    );
    expect(() => reciprocalRankFusion([{ name: "dense", ranked, weight: Number.POSITIVE_INFINITY }])).toThrow(
      InvalidArgumentError,
    );
    expect(() => reciprocalRankFusion([{ name: "dense", ranked }], { k: -60 })).toThrow(
      "Expected `k` to be a finite non-negative number, got -60",
    );
    expect(() => reciprocalRankFusion([{ name: "dense", ranked }], { k: Number.NaN })).toThrow(InvalidArgumentError);
    const bad: Ranked[] = [{ id: "a#1", parentId: "a", score: 1, rank: 0 }];
    expect(() => reciprocalRankFusion([{ name: "bm25", ranked: bad }])).toThrow(InvalidArgumentError);
  });

  it("renumber copies with ranks 1..n", () => {
    const src = deepFreeze([
      { id: "b#1", parentId: "b", score: 3, rank: 7 },
      { id: "a#1", parentId: "a", score: 2, rank: 9 },
    ]);
    expect(renumber(src)).toEqual([
      { id: "b#1", parentId: "b", score: 3, rank: 1 },
      { id: "a#1", parentId: "a", score: 2, rank: 2 },
    ]);
  });
});

/** Arbitrary fusion inputs: up to 4 lists over a small id space (so ids collide across lists). */
const idArb = fc.constantFrom(...["a", "b", "c", "d", "e", "f", "g", "h"].flatMap((c) => [`${c}#1`, `${c}#2`]));
const listArb = fc.uniqueArray(idArb, { maxLength: 10 }).map((ids) => list(...ids));
const inputsArb = fc.array(
  fc.record({
    name: fc.constantFrom("dense", "bm25", "x"),
    ranked: listArb,
    weight: fc.option(fc.constantFrom(0, 0.5, 1, 2), { nil: undefined }),
  }),
  { maxLength: 4 },
);
const kArb = fc.option(fc.constantFrom(0, 1, 60), { nil: undefined });
const RUNS = { seed: 42, numRuns: 200 };

const withOptionalWeight = (l: { name: string; ranked: Ranked[]; weight: number | undefined }): FusionInput =>
  l.weight === undefined ? { name: l.name, ranked: l.ranked } : { name: l.name, ranked: l.ranked, weight: l.weight };

describe("reciprocalRankFusion: properties", () => {
  it("does not depend on the order of the input lists", () => {
    fc.assert(
      fc.property(inputsArb, kArb, fc.infiniteStream(fc.nat()), (raw, k, rnd) => {
        const lists = raw.map(withOptionalWeight);
        const shuffled = [...lists].reverse();
        // A second, random permutation as well.
        const perm = lists
          .map((l) => ({ l, key: rnd.next().value as number }))
          .sort((x, y) => x.key - y.key)
          .map((x) => x.l);
        const opts = k === undefined ? undefined : { k };
        const base = reciprocalRankFusion(lists, opts);
        expect(reciprocalRankFusion(shuffled, opts)).toEqual(base);
        expect(reciprocalRankFusion(perm, opts)).toEqual(base);
      }),
      RUNS,
    );
  });

  it("breaks ties by id: permuting array order of entries (same ranks) changes nothing, tied scores are in id order", () => {
    fc.assert(
      fc.property(inputsArb, kArb, (raw, k) => {
        const lists = raw.map(withOptionalWeight);
        const opts = k === undefined ? undefined : { k };
        const base = reciprocalRankFusion(lists, opts);
        const reversedEntries = lists.map((l) => ({ ...l, ranked: [...l.ranked].reverse() }));
        expect(reciprocalRankFusion(reversedEntries, opts)).toEqual(base);
        for (let i = 1; i < base.length; i++) {
          const prev = base[i - 1]!;
          const cur = base[i]!;
          expect(prev.score).toBeGreaterThanOrEqual(cur.score);
          if (prev.score === cur.score) expect(prev.id < cur.id).toBe(true);
          expect(cur.rank).toBe(i + 1);
        }
        // Keyed by id: each id of the inputs appears exactly once.
        const ids = new Set(lists.flatMap((l) => l.ranked.map((r) => r.id)));
        expect(base.map((r) => r.id).sort()).toEqual([...ids].sort());
      }),
      RUNS,
    );
  });

  it("never mutates its inputs", () => {
    fc.assert(
      fc.property(inputsArb, kArb, (raw, k) => {
        const lists = raw.map(withOptionalWeight);
        const before = structuredClone(lists);
        deepFreeze(lists); // a write would throw in strict mode
        reciprocalRankFusion(lists, k === undefined ? undefined : { k });
        expect(lists).toEqual(before);
      }),
      RUNS,
    );
  });

  it("puts an item ranked first in every list first", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.uniqueArray(idArb, { maxLength: 8 }), fc.constantFrom(0.5, 1, 3)), {
          minLength: 1,
          maxLength: 4,
        }),
        fc.constantFrom(0, 1, 60, 1000),
        (raw, k) => {
          const lists = raw.map(([ids, weight], i) => ({
            name: `l${i}`,
            ranked: list("star#1", ...ids.filter((id) => id !== "star#1")),
            weight,
          }));
          expect(reciprocalRankFusion(lists, { k })[0]!.id).toBe("star#1");
        },
      ),
      RUNS,
    );
  });
});
