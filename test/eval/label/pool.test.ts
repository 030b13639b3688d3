/**
 * The labelling page's pool (src/eval/label/pool.ts): pooling order, term
 * marking that never changes the text, best passage; and the export merge
 * (src/eval/label/merge.ts) on hand-made lines.
 */
import { describe, expect, it } from "vitest";
import { mergeLabels } from "../../../src/eval/label/merge.js";
import {
  bestPassage,
  idf,
  MARK_IDF_FLOOR,
  markTerms,
  poolOf,
  queryTerms,
  termStats,
  type TermOf,
} from "../../../src/eval/label/pool.js";
import { analyzerFor } from "../../../src/retrieval/analyzer.js";

describe("poolOf", () => {
  it("is the union of each system's top depth, ordered by best rank, then system order, then id", () => {
    const pool = poolOf(
      { bm25: ["a", "b", "c"], dense: ["d", "a", "e"], hybrid: ["a", "d", "b"] },
      ["bm25", "dense", "hybrid"],
      2,
    );
    // depth 2: bm25 {a:1, b:2}, dense {d:1, a:2}, hybrid {a:1, d:2}; c and e are below the depth.
    expect(pool).toEqual([
      { id: "a", ranks: { bm25: 1, dense: 2, hybrid: 1 } },
      { id: "d", ranks: { dense: 1, hybrid: 2 } },
      { id: "b", ranks: { bm25: 2 } },
    ]);
  });
  it("counts a repeated id once in a list", () => {
    expect(poolOf({ graph: ["x", "x", "y"] }, ["graph"], 2)).toEqual([
      { id: "x", ranks: { graph: 1 } },
      { id: "y", ranks: { graph: 2 } },
    ]);
  });
});

const en = analyzerFor("en");
const termOf: TermOf = (w) => en.analyze(w)[0] ?? null;

describe("markTerms", () => {
  it("marks the query's words by analysed term (not its stop words), case-insensitively, and gives the text back unchanged", () => {
    const text = `Freeze <b>the</b> card: "freezing" FREEZE, when it is still frozen`;
    // "how", "to", "the", "when", "is", "still" are stop words of the English analyzer; "freeze" and "freezing" share the stem "freez".
    const terms = queryTerms(["how to freeze the card when it is still?"], termOf);
    const segs = markTerms(text, terms, termOf);
    expect(segs.map((s) => s[0]).join("")).toBe(text);
    expect(segs.filter((s) => s[1]).map((s) => s[0])).toEqual(["Freeze", "card", "freezing", "FREEZE"]);
  });
  it("leaves out a query term held by more than half the cards (BM25 IDF under ln 2), keeps one held by exactly half", () => {
    // 4 cards: "card" in 3 (idf ln(1 + 1.5/3.5) = 0.36 < ln 2), "refund" in 2 (idf ln(1 + 2.5/2.5) = ln 2, kept), "arrive" in none.
    const stats = termStats([["card freeze"], ["card refund"], ["card refund limits"], ["pix keys"]], termOf);
    expect(stats.docs).toBe(4);
    const terms = queryTerms(["when does the card refund still arrive"], termOf, stats);
    const segs = markTerms("The card refund will still arrive.", terms, termOf);
    expect(segs.filter((s) => s[1]).map((s) => s[0])).toEqual(["refund", "arrive"]);
    expect(idf(2, 4)).toBe(MARK_IDF_FLOOR);
    expect(idf(3, 4)).toBeCloseTo(Math.log(1 + 1.5 / 3.5), 12);
  });
  it("picks the passage with the most distinct query terms, the first on a tie", () => {
    const terms = queryTerms(["refund timing card"], termOf);
    expect(bestPassage(["card card card", "refund timing", "refund card"], terms, termOf)).toBe("refund timing");
    expect(bestPassage([], terms, termOf)).toBeUndefined();
  });
});

describe("mergeLabels", () => {
  const base = { id: "c1", locale: "en", kind: "golden", turns: [{ user: "q" }] };
  const line = (o: unknown) => `${JSON.stringify(o)}\n`;
  it("appends a case the cases file lacks and keeps the others byte for byte", () => {
    const into = ` ${JSON.stringify(base)}\n`; // a leading space: the line must come back as it was
    const extra = { ...base, id: "c2", turns: [{ user: "q2", must_cite_one_of: [], expect: "refuse" }] };
    const r = mergeLabels(line(base) + line(extra), "e.jsonl", into, "c.jsonl");
    expect(r.text).toBe(`${into}${JSON.stringify(extra)}\n`);
    expect(r).toMatchObject({ changed: [], appended: ["c2"], unchanged: 1 });
  });
  it("unions judgments that agree and refuses another expect", () => {
    const a = {
      ...base,
      turns: [{ user: "q", must_cite_one_of: ["x"], expect: "answer", relevant: { x: 2 }, judged: ["x"] }],
    };
    const b = {
      ...base,
      turns: [{ user: "q", must_cite_one_of: ["x"], expect: "answer", relevant: { y: 1, x: 2 }, judged: ["y", "x"] }],
    };
    const r = mergeLabels(line(b), "e.jsonl", line(a), "c.jsonl");
    expect(JSON.parse(r.text)).toEqual({
      ...base,
      turns: [{ user: "q", must_cite_one_of: ["x"], expect: "answer", relevant: { y: 1, x: 2 }, judged: ["x", "y"] }],
    });
    // A card judged (in `judged`) without a grade is grade 0: against a 2, a conflict.
    const zero = { ...base, turns: [{ user: "q", must_cite_one_of: ["x"], expect: "answer", judged: ["x"] }] };
    expect(() => mergeLabels(line(zero), "e.jsonl", line(a), "c.jsonl")).toThrow(
      /card x graded 0 here, 2 in c\.jsonl:1/,
    );
    const refuse = { ...base, turns: [{ user: "q", must_cite_one_of: ["x"], expect: "refuse" }] };
    expect(() => mergeLabels(line(refuse), "e.jsonl", line(a), "c.jsonl")).toThrow(
      /e\.jsonl:1: field `turns\[0\]\.expect` case c1 turn 0: expect "refuse" here, "answer" in c\.jsonl:1/,
    );
  });
});
