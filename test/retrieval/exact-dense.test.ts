/** ExactDenseIndex: exact cosine, id tie-break, locale partitions, independent of input order. */
import { describe, expect, it } from "vitest";
import { mulberry32 } from "../../src/eval/stats/bootstrap.js";
import { LOCALES, type Locale } from "../../src/kb/types.js";
import { InMemoryDenseIndex } from "../../src/retrieval/dense.js";
import { ExactDenseIndex, type StoredVector } from "../../src/retrieval/exact-dense.js";

function randomVectors(n: number, d: number, seed: number): StoredVector[] {
  const rand = mulberry32(seed);
  return Array.from({ length: n }, (_, i) => ({
    id: `c${String(i).padStart(4, "0")}#1`,
    parentId: `c${String(i).padStart(4, "0")}`,
    locale: LOCALES[i % 3] as Locale,
    vector: Array.from({ length: d }, () => rand() * 2 - 1),
  }));
}

describe("ExactDenseIndex", () => {
  const vectors = randomVectors(600, 16, 3);
  const index = new ExactDenseIndex(vectors, { dimension: 16 });
  const reference = new InMemoryDenseIndex(
    vectors.map((v) => ({ ...v, vector: Array.from(v.vector) })),
    { dimension: 16 },
  );
  const rand = mulberry32(9);
  const queries = Array.from({ length: 40 }, () => Array.from({ length: 16 }, () => rand() * 2 - 1));

  it("ranks like the float64 brute-force index, with and without a locale", () => {
    for (const q of queries) {
      for (const locale of [undefined, "es-419" as const]) {
        const got = index.searchSync(q, { topN: 10, ...(locale ? { locale } : {}) });
        const want = reference.searchSync(q, { topN: 10, ...(locale ? { locale } : {}) });
        expect(got.map((r) => r.id)).toEqual(want.map((r) => r.id));
        got.forEach((r, i) => expect(r.score).toBeCloseTo(want[i]!.score, 5));
        expect(got.map((r) => r.rank)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        if (locale) for (const r of got) expect(Number(r.parentId.slice(1)) % 3).toBe(1);
      }
    }
  });

  it("does not depend on the order the store returned the records in", () => {
    const shuffled = [...vectors].reverse();
    const other = new ExactDenseIndex(shuffled, { dimension: 16 });
    for (const q of queries) expect(other.searchSync(q, { topN: 20 })).toEqual(index.searchSync(q, { topN: 20 }));
  });

  it("breaks equal scores by id ascending, whatever the input order", () => {
    // b, a, c are the same direction: equal cosine; z is orthogonal (score 0)
    const tied: StoredVector[] = [
      { id: "b#1", parentId: "b", locale: "en", vector: [2, 0] },
      { id: "z#1", parentId: "z", locale: "en", vector: [0, 1] },
      { id: "a#1", parentId: "a", locale: "en", vector: [1, 0] },
      { id: "c#1", parentId: "c", locale: "en", vector: [3, 0] },
    ];
    const hits = new ExactDenseIndex(tied, { dimension: 2 }).searchSync([5, 0], { topN: 3 });
    expect(hits.map((h) => [h.id, h.score, h.rank])).toEqual([
      ["a#1", 1, 1],
      ["b#1", 1, 2],
      ["c#1", 1, 3],
    ]);
  });

  it("scores a zero vector 0 and returns nothing for a locale it does not hold", () => {
    const idx = new ExactDenseIndex([{ id: "a#1", parentId: "a", locale: "en", vector: [0, 0] }], { dimension: 2 });
    expect(idx.searchSync([1, 0], { topN: 1 })[0]?.score).toBe(0);
    expect(idx.searchSync([1, 0], { topN: 1, locale: "pt-BR" })).toEqual([]);
  });

  it("rejects duplicate ids, wrong dimensions and non-finite values", () => {
    expect(() => new ExactDenseIndex([vectors[0]!, vectors[0]!], { dimension: 16 })).toThrow(/unique ids/);
    expect(() => new ExactDenseIndex([vectors[0]!], { dimension: 8 })).toThrow(/dimension 8/);
    expect(() => index.searchSync([1, 2], { topN: 1 })).toThrow(/dimension 16/);
    expect(
      () => new ExactDenseIndex([{ id: "x", parentId: "x", locale: "en", vector: [NaN, 1] }], { dimension: 2 }),
    ).toThrow(/finite/);
  });

  it("scores a sparse query with exactly the bits of the full float64 dot product over the float32-stored rows", () => {
    const d = 64;
    const rows = randomVectors(300, d, 21);
    const idx = new ExactDenseIndex(rows, { dimension: d });
    // What the index documents: rows unit-normalised and stored as float32; the query normalised in float64; Σ over all i ascending.
    const stored = rows.map((r) => {
      const norm = Math.sqrt(Array.from(r.vector).reduce((s, x) => s + x * x, 0));
      return { id: r.id, locale: r.locale, v: Array.from(r.vector, (x) => Math.fround(x / norm)) };
    });
    const rand = mulberry32(5);
    for (const nonZero of [1, 7, d / 2 - 1, d / 2, d]) {
      for (let trial = 0; trial < 5; trial++) {
        const q = Array.from({ length: d }, () => 0);
        const dims = [...Array(d).keys()].sort(() => rand() - 0.5).slice(0, nonZero);
        for (const i of dims) q[i] = rand() * 2 - 1;
        const qn = Math.sqrt(q.reduce((s, x) => s + x * x, 0));
        const want = stored
          .filter((r) => r.locale === "en")
          .map((r) => {
            let dot = 0;
            for (let i = 0; i < d; i++) dot += r.v[i]! * (q[i]! / qn);
            return { id: r.id, score: dot };
          })
          .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
          .slice(0, 15);
        const got = idx.searchSync(q, { topN: 15, locale: "en" });
        expect(got.map((h) => [h.id, h.score])).toEqual(want.map((h) => [h.id, h.score]));
      }
    }
  });

  it("is rebuilt from its shared matrices (no copy) with the same rankings", () => {
    const shared = index.share();
    for (const p of shared.partitions) expect(p.matrix.buffer).toBeInstanceOf(SharedArrayBuffer);
    const copy = ExactDenseIndex.fromShared(structuredClone(shared));
    expect(copy.size).toBe(index.size);
    for (const q of queries) expect(copy.searchSync(q, { topN: 20 })).toEqual(index.searchSync(q, { topN: 20 }));
    // The clone shares memory with the original: a write through one is seen by the other.
    const first = shared.partitions[0]!;
    const cloned = structuredClone(shared).partitions[0]!;
    const before = first.matrix[0]!;
    cloned.matrix[0] = 0.5;
    expect(first.matrix[0]).toBe(0.5);
    first.matrix[0] = before;
    const bad = { ...shared, partitions: [{ ...first, ids: first.ids.slice(1) }] };
    expect(() => ExactDenseIndex.fromShared(bad)).toThrow(/shared partition/);
  });
});
