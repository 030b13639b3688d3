import { beforeEach, describe, expect, it } from "vitest";
import { drawRatioSteps, drawRatios, stateAfter, STEP_WORK } from "../../src/eval/stats/draws.js";
import { mulberry32 } from "../../src/random.js";

/** The definition, one list at a time: m units drawn with replacement from the seed's stream, Σ sums / Σ counts. */
function reference(sums: Float64Array, counts: Float64Array, seed: number, samples: number): Float64Array {
  const m = sums.length;
  const rand = mulberry32(seed);
  const out = new Float64Array(samples);
  for (let r = 0; r < samples; r++) {
    let s = 0;
    let n = 0;
    for (let i = 0; i < m; i++) {
      const j = Math.floor(rand() * m);
      s += sums[j]!;
      n += counts[j]!;
    }
    out[r] = s / n;
  }
  return out;
}

describe("drawRatios (the report's batched resampling loop)", () => {
  const rand = mulberry32(21);
  const m = 37;
  // 7 lists with 3 distinct count columns (10 columns: a block of 16); graded sums, 1–3 turns a unit.
  const lists = Array.from({ length: 7 }, (_, k) => {
    const counts = Float64Array.from({ length: m }, (_, j) => 1 + ((j + k) % 3));
    const sums = Float64Array.from(counts, (c) => (k % 2 === 0 ? c * rand() : Math.round(c * rand())));
    return { sums, counts };
  });
  const seed = 99;
  const samples = 301; // odd: the two threads' halves differ in size
  let split: string[] = [];
  beforeEach(() => {
    split = [];
  });

  it("gives each list exactly the replicates of drawing it alone, on one thread", () => {
    const got = drawRatios(lists, m, seed, samples, {
      threadMinWork: Number.POSITIVE_INFINITY,
      onSecondHalf: (by) => split.push(by),
    });
    lists.forEach((l, k) =>
      expect(Array.from(got[k]!)).toEqual(Array.from(reference(l.sums, l.counts, seed, samples))),
    );
  });

  it("gives the same replicates when a worker thread takes the second half of the resamples", () => {
    const got = drawRatios(lists, m, seed, samples, { threadMinWork: 1, onSecondHalf: (by) => split.push(by) });
    expect(split).toEqual(["worker"]);
    lists.forEach((l, k) =>
      expect(Array.from(got[k]!)).toEqual(Array.from(reference(l.sums, l.counts, seed, samples))),
    );
    expect(new Set(Array.from(got[0]!)).size).toBeGreaterThan(10);
  });

  it.each([
    { lists: 3, columns: "4 columns: one block of 8" },
    { lists: 21, columns: "22 columns: two blocks of 16" },
  ])("gives each of $lists lists exactly its own replicates ($columns)", ({ lists: K }) => {
    const r = mulberry32(5);
    // Lists of the same turns share one count column: the odd lists one, the even lists another.
    const shared = [0, 1].map((p) => Float64Array.from({ length: m }, (_, j) => 1 + ((j + p) % 2)));
    const many = Array.from({ length: K }, (_, k) => {
      const counts = shared[k % 2]!;
      return { sums: Float64Array.from(counts, (c) => c * r()), counts };
    });
    const got = drawRatios(many, m, seed, samples, { threadMinWork: Number.POSITIVE_INFINITY });
    many.forEach((l, k) => expect(Array.from(got[k]!)).toEqual(Array.from(reference(l.sums, l.counts, seed, samples))));
    expect(new Set(Array.from(got[K - 1]!)).size).toBeGreaterThan(10);
  });

  it("draws in steps, a slice of resamples each, with exactly the replicates of one pass (both threads)", () => {
    const big = 200_000; // units: STEP_WORK / big resamples a slice
    const r = mulberry32(8);
    const counts = Float64Array.from({ length: big }, (_, j) => 1 + (j % 2));
    const one = [{ sums: Float64Array.from(counts, (c) => c * r()), counts }];
    const n = 31;
    const want = Array.from(reference(one[0]!.sums, counts, seed, n));
    for (const threadMinWork of [Number.POSITIVE_INFINITY, 1]) {
      const steps = drawRatioSteps(one, big, seed, n, { threadMinWork });
      let yields = 0;
      let next = steps.next();
      for (; next.done !== true; next = steps.next()) yields++;
      expect(Array.from(next.value[0]!)).toEqual(want);
      // This thread's resamples (all, or its half) in slices of STEP_WORK / big: a yield after each.
      expect(yields).toBeGreaterThanOrEqual(Math.ceil((threadMinWork === 1 ? 15 : n) / (STEP_WORK / big)));
    }
  });

  it("jumps mulberry32's stream ahead: the state after n draws continues the sequence", () => {
    const seq = mulberry32(seed);
    for (let i = 0; i < 1000; i++) seq();
    const jumped = mulberry32(stateAfter(seed, 1000));
    for (let i = 0; i < 5; i++) expect(jumped()).toBe(seq());
    expect(stateAfter(0xffffffff, 3)).toBe(Number((0xffffffffn + 3n * 0x6d2b79f5n) % 0x1_0000_0000n));
  });
});
