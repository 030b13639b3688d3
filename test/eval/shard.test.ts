/**
 * The shard assignment (src/eval/gate/shard.ts, docs/reliability.md "Sharded
 * sweeps"): `--shard i/n` parsing, and the rule — cases sorted by (turns
 * desc, id), each to the least-loaded shard, ties to the lowest index.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isRetraceError } from "../../src/errors.js";
import { assignShards, parseShardSpec, SHARD_RULE, shardCases, shardSection } from "../../src/eval/gate/shard.js";

describe("parseShardSpec", () => {
  it("reads i/n", () => {
    expect(parseShardSpec("2/3")).toEqual({ index: 2, count: 3 });
    expect(parseShardSpec("1/1")).toEqual({ index: 1, count: 1 });
    expect(parseShardSpec(" 10 / 12 ")).toEqual({ index: 10, count: 12 });
  });

  it.each([
    ["0/3", /i must be in 1\.\.3, got "0\/3"/],
    ["4/3", /i must be in 1\.\.3, got "4\/3"/],
    ["1/0", /n must be at least 1, got "1\/0"/],
    ["-1/3", /i\/n with integers 1 ≤ i ≤ n \(e\.g\. 2\/3\), got "-1\/3"/],
    ["1.5/3", /got "1\.5\/3"/],
    ["2", /got "2"/],
    ["a/b", /got "a\/b"/],
    ["1/2/3", /got "1\/2\/3"/],
    ["", /got ""/],
  ])("refuses %j, echoing it and the valid range", (raw, message) => {
    let thrown: unknown;
    try {
      parseShardSpec(raw);
    } catch (e) {
      thrown = e;
    }
    expect(isRetraceError(thrown) && (thrown as { exitCode: number }).exitCode).toBe(2);
    expect((thrown as Error).message).toMatch(/^Expected `--shard` to be i\/n with integers 1 ≤ i ≤ n/);
    expect((thrown as Error).message).toMatch(message);
  });
});

describe("assignShards", () => {
  it("follows the rule on a hand-checked example", () => {
    // sorted (turns desc, id): a4 b3 c3 d2 e1
    // a → 1 (loads 4,0); b → 2 (4,3); c → 2 (4,6); d → 1 (6,6); e: tie 6,6 → 1 (7,6)
    const cases = [
      { id: "e", turns: 1 },
      { id: "c", turns: 3 },
      { id: "a", turns: 4 },
      { id: "d", turns: 2 },
      { id: "b", turns: 3 },
    ];
    expect(assignShards(cases, 2)).toEqual([1, 2, 1, 1, 2]);
    // n = 3: a → 1 (4,0,0); b → 2 (4,3,0); c → 3 (4,3,3); d → 2 (4,5,3); e → 3 (4,5,4)
    expect(assignShards(cases, 3)).toEqual([3, 3, 1, 2, 2]);
  });

  it("breaks equal turn counts by id, not by input order", () => {
    // all 2 turns: sorted a, b, c, d → shards 1, 2, 1 (tie 2,2 → lowest), 2
    expect(
      assignShards(
        [
          { id: "d", turns: 2 },
          { id: "c", turns: 2 },
          { id: "b", turns: 2 },
          { id: "a", turns: 2 },
        ],
        2,
      ),
    ).toEqual([2, 1, 2, 1]);
  });

  it("leaves the shards past the case count empty", () => {
    expect(
      assignShards(
        [
          { id: "x", turns: 2 },
          { id: "y", turns: 1 },
        ],
        4,
      ),
    ).toEqual([1, 2]);
  });

  it("refuses a non-positive count and duplicate ids", () => {
    expect(() => assignShards([{ id: "x", turns: 1 }], 0)).toThrow(/shard count/);
    expect(() =>
      assignShards(
        [
          { id: "x", turns: 1 },
          { id: "x", turns: 2 },
        ],
        2,
      ),
    ).toThrow(/unique ids/);
  });

  const casesArb = fc.uniqueArray(
    fc.record({ id: fc.string({ minLength: 1, maxLength: 6 }), turns: fc.integer({ min: 1, max: 4 }) }),
    {
      selector: (c) => c.id,
      minLength: 1,
      maxLength: 60,
    },
  );

  it("puts every case in exactly one shard, in 1..n, and balances loads within one case's turns", () => {
    fc.assert(
      fc.property(casesArb, fc.integer({ min: 1, max: 9 }), (cases, n) => {
        const shardOf = assignShards(cases, n);
        expect(shardOf).toHaveLength(cases.length);
        for (const s of shardOf) expect(Number.isInteger(s) && s >= 1 && s <= n).toBe(true);
        const loads = new Array<number>(n).fill(0);
        cases.forEach((c, i) => (loads[shardOf[i]! - 1]! += c.turns));
        const used = cases.length >= n ? loads : loads.slice(0, cases.length); // with fewer cases than shards, only the first shards get one
        expect(Math.max(...used) - Math.min(...used)).toBeLessThanOrEqual(Math.max(...cases.map((c) => c.turns)));
        // the union of the shards' case lists is the input, each case once
        const lists = Array.from({ length: n }, (_, s) =>
          shardCases(
            cases.map((c) => ({ id: c.id, turns: new Array(c.turns).fill(0) })),
            { index: s + 1, count: n },
          ).map((c) => c.id),
        );
        expect(lists.flat().sort()).toEqual(cases.map((c) => c.id).sort());
      }),
      { seed: 20261130, numRuns: 200 },
    );
  });

  it("is a function of the cases' ids and turn counts: input order does not change any case's shard", () => {
    fc.assert(
      fc.property(casesArb, fc.integer({ min: 1, max: 6 }), fc.nat(), (cases, n, seed) => {
        const shuffled = [...cases].sort(
          (a, b) => ((a.id.charCodeAt(0) * 31 + seed) % 7) - ((b.id.charCodeAt(0) * 31 + seed) % 7),
        );
        const before = new Map(cases.map((c, i) => [c.id, assignShards(cases, n)[i]]));
        const after = new Map(shuffled.map((c, i) => [c.id, assignShards(shuffled, n)[i]]));
        expect(after).toEqual(before);
        expect(assignShards(cases, n)).toEqual(assignShards(cases, n));
      }),
      { seed: 7, numRuns: 100 },
    );
  });
});

describe("shardCases and shardSection", () => {
  const cases = [
    { id: "c1", turns: [1, 2] },
    { id: "c2", turns: [1, 2, 3, 4] },
    { id: "c3", turns: [1] },
    { id: "c4", turns: [1, 2, 3] },
  ];

  it("keeps whole cases in dataset order", () => {
    // sorted: c2(4) c4(3) c1(2) c3(1): c2 → 1 (4,0); c4 → 2 (4,3); c1 → 2 (4,5); c3 → 1 (5,5)
    expect(shardCases(cases, { index: 1, count: 2 }).map((c) => c.id)).toEqual(["c2", "c3"]);
    expect(shardCases(cases, { index: 2, count: 2 }).map((c) => c.id)).toEqual(["c1", "c4"]);
  });

  it("records the shard, the rule and the whole selection", () => {
    const mine = shardCases(cases, { index: 2, count: 2 });
    expect(shardSection({ index: 2, count: 2 }, cases, mine, "hash-all")).toEqual({
      index: 2,
      count: 2,
      rule: SHARD_RULE,
      caseIds: ["c1", "c4"],
      turns: 5,
      dataset: { datasetHash: "hash-all", caseIds: ["c1", "c2", "c3", "c4"], turns: 10 },
    });
  });
});
