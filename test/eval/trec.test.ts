import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DataValidationError, InvalidArgumentError } from "../../src/errors.js";
import {
  formatTrecRow,
  formatTrecText,
  formatTrecValue,
  normalizeCutoffs,
  parseQrels,
  parseRun,
  readQrels,
  readRun,
  scoreTrec,
  strcmp,
  toTrecJson,
  trecMeasureNames,
  trecRanking,
  type Qrels,
  type Run,
} from "../../src/eval/ir/trec.js";
import { ROOT } from "../helpers/cli.js";

const FIX = path.join(ROOT, "test", "fixtures", "trec");
const L = (rank: number) => Math.log2(rank + 1); // discount at a 1-based rank

function dataIssues(fn: () => unknown): DataValidationError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DataValidationError);
    return e as DataValidationError;
  }
  throw new Error("expected a DataValidationError");
}

// ------------------------------------------------------------------ mini fixtures
// q1 judged d1:1 d2:0 d3:2 d9:1 → relevant {d1,d3,d9}; run d2 .9, d1 .5, d3 .5, d1 .4 (dup), d5 .3, d9 .1
//   trec order: d2 (.9), then the .5 tie by docno DESCENDING: d3, d1; then d1 (.4) is a duplicate → dropped; d5, d9
//   ranked = [d2, d3, d1, d5, d9]  (the rank column, which says d1 before d3, is ignored)
// q2 judged a:0 b:0 → no relevant document; run a, z
// q3 judged x:1 → no results in the run
// q4 judged m:1 n:3; run n 1, x 5e0, m 0 → ranked [x, n, m] (x is unjudged for q4)
// q9 only in the run → ignored
const Q1 = {
  recip_rank: 1 / 2, // d3 at rank 2
  P_2: 1 / 2, // [d2,d3]
  P_5: 3 / 5, // d3,d1,d9
  recall_2: 1 / 3,
  recall_5: 3 / 3, // without dedup the top 5 would be [d2,d3,d1,d1,d5]: d9 hidden, recall 2/3
  ndcg_cut_2: 1 / L(2) / (1 + 1 / L(2)), // 0.63093 / 1.63093 = 0.38685
  ndcg_cut_5: (1 / L(2) + 1 / L(3) + 1 / L(5)) / (1 + 1 / L(2) + 1 / L(3)), // (0.63093+0.5+0.38685)/2.13093 = 0.71226
  success_2: 1,
  success_5: 1,
};
const Q1_GRADED = {
  ndcg_cut_2: 2 / L(2) / (2 + 1 / L(2)), // gains [d2:0, d3:2]; ideal [2,1] → 1.26186/2.63093 = 0.47962
  ndcg_cut_5: (2 / L(2) + 1 / L(3) + 1 / L(5)) / (2 + 1 / L(2) + 1 / L(3)), // 2.14871/3.13093 = 0.68629
};
const Q4 = {
  recip_rank: 1 / 2, // n at rank 2
  P_2: 1 / 2,
  P_5: 2 / 5, // divides by 5 although only 3 were retrieved
  recall_2: 1 / 2,
  recall_5: 1,
  ndcg_cut_2: 1 / L(2) / (1 + 1 / L(2)), // 0.38685
  ndcg_cut_5: (1 / L(2) + 1 / L(3)) / (1 + 1 / L(2)), // 1.13093/1.63093 = 0.69343
  success_2: 1,
  success_5: 1,
};
const Q4_GRADED = {
  ndcg_cut_2: 3 / L(2) / (3 + 1 / L(2)), // 1.89279/3.63093 = 0.52130
  ndcg_cut_5: (3 / L(2) + 1 / L(3)) / (3 + 1 / L(2)), // 2.39279/3.63093 = 0.65900
};
const MEASURES_2_5 = [
  "recip_rank",
  "P_2",
  "P_5",
  "recall_2",
  "recall_5",
  "ndcg_cut_2",
  "ndcg_cut_5",
  "success_2",
  "success_5",
];
const ZERO = Object.fromEntries(MEASURES_2_5.map((m) => [m, 0]));

let qrels: Qrels;
let run: Run;
beforeAll(async () => {
  qrels = await readQrels(path.join(FIX, "mini.qrels"));
  run = await readRun(path.join(FIX, "mini.run"));
});

describe("parsing", () => {
  it("reads qrels and runs, skipping comments and blank lines, keeping file order and duplicates", () => {
    expect([...qrels.keys()]).toEqual(["q1", "q2", "q3", "q4"]);
    expect(qrels.get("q1")).toEqual(
      new Map([
        ["d1", 1],
        ["d2", 0],
        ["d3", 2],
        ["d9", 1],
      ]),
    );
    expect(run.queries.get("q1")?.docnos).toEqual(["d2", "d1", "d3", "d1", "d5", "d9"]);
    expect(run.queries.get("q4")?.scores).toEqual([1, 5, 0]);
    expect(run.runId).toBe("mini");
  });

  it("accepts CRLF, tabs, extra spaces, fields after the tag, negative and exponent scores", () => {
    const r = parseRun("q\tQ0\td1\t1\t -1.5e-3\ttag extra fields\r\n\r\n  q Q0 d2 2 +2 tag\r\n");
    expect(r.queries.get("q")).toEqual({ docnos: ["d1", "d2"], scores: [-0.0015, 2] });
    const q = parseQrels("q 0 d1 1\r\nq 0 d2 -1\r\n");
    expect(q.get("q")).toEqual(
      new Map([
        ["d1", 1],
        ["d2", -1],
      ]),
    );
  });

  it("a run line with 5 columns names file, line and the expected layout", () => {
    const e = dataIssues(() => parseRun("q Q0 d1 1 0.5 t\n# comment\nq Q0 d2 2 0.4\n", "bad.run"));
    expect(e.issues).toEqual([
      {
        file: "bad.run",
        line: 3,
        message: "Expected 6 whitespace-separated fields (qid Q0 docno rank score tag), got 5",
      },
    ]);
    expect(e.message).toContain("bad.run:3:");
    expect(e.exitCode).toBe(2);
  });

  it("a non-numeric or non-finite score names the field", () => {
    const e = dataIssues(() => parseRun("q Q0 d1 1 high t\nq Q0 d2 2 NaN t\nq Q0 d3 3 1e999 t\n", "bad.run"));
    expect(e.issues.map((i) => [i.line, i.field])).toEqual([
      [1, "score"],
      [2, "score"],
      [3, "score"],
    ]);
    expect(e.issues[0]?.message).toBe('Expected a finite number, got "high"');
  });

  it("qrels: wrong field count, non-integer relevance, duplicate judgment", () => {
    const e = dataIssues(() => parseQrels("q 0 d1\nq 0 d2 1.5\nq 0 d3 1\nq 0 d3 0\nq 0 d4 1 x\n", "bad.qrels"));
    expect(e.issues).toEqual([
      { file: "bad.qrels", line: 1, message: "Expected 4 whitespace-separated fields (qid iter docno rel), got 3" },
      { file: "bad.qrels", line: 2, field: "rel", message: 'Expected an integer relevance, got "1.5"' },
      {
        file: "bad.qrels",
        line: 4,
        field: "docno",
        message: 'Duplicate judgment of document "d3" for query "q" (first at line 3)',
      },
      { file: "bad.qrels", line: 5, message: "Expected 4 whitespace-separated fields (qid iter docno rel), got 5" },
    ]);
  });

  it("empty qrels is an error; an empty run parses (and then scores nothing)", () => {
    expect(dataIssues(() => parseQrels("# nothing\n", "e.qrels")).issues[0]?.message).toBe(
      "Expected at least one judgment, got none",
    );
    expect(parseRun("").queries.size).toBe(0);
  });

  it("stops collecting after 50 issues", () => {
    const e = dataIssues(() => parseRun("q Q0 d\n".repeat(80)));
    expect(e.issues).toHaveLength(50);
    expect(e.message).toContain("... and 30 more");
  });

  describe("streaming files", () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), "retrace-trec-"));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it("reads a file larger than one chunk exactly as the in-memory parser does (no final newline)", async () => {
      const lines: string[] = [];
      for (let i = 0; i < 40_000; i++) lines.push(`q${i % 37} Q0 doc-${i} ${i} ${(i * 7919) % 1000}.25 run${i % 3}`);
      const text = lines.join("\n"); // ~1.5 MB, no trailing newline
      const file = path.join(dir, "big.run");
      await writeFile(file, text);
      const streamed = await readRun(file);
      const parsed = parseRun(text);
      expect(streamed.queries).toEqual(parsed.queries);
      expect(streamed.runId).toBe("run0"); // the last line's tag (39999 % 3 = 0)
      let n = 0;
      for (const q of streamed.queries.values()) n += q.docnos.length;
      expect(n).toBe(40_000);
    });

    it("a missing file is a data error naming it", async () => {
      const missing = path.join(dir, "nope.qrels");
      await expect(readQrels(missing)).rejects.toThrow(DataValidationError);
      await expect(readQrels(missing)).rejects.toThrow(`${missing}: cannot read the file (no such file)`);
    });
  });
});

describe("trec ordering", () => {
  it("score descending, ties by docno descending; the rank column plays no part", () => {
    expect(trecRanking({ docnos: ["b", "a", "c", "d"], scores: [1, 1, 1, 2] }).ranked).toEqual(["d", "c", "b", "a"]);
    // strcmp order, not numeric: "doc10" < "doc9", so at equal score doc9 ranks first
    expect(trecRanking({ docnos: ["doc10", "doc9"], scores: [0, 0] }).ranked).toEqual(["doc9", "doc10"]);
  });

  it("keeps the first occurrence in trec order and counts the dropped duplicates", () => {
    expect(trecRanking({ docnos: ["x", "y", "x", "x"], scores: [0.1, 0.5, 0.9, 0.2] })).toEqual({
      ranked: ["x", "y"],
      duplicates: 2,
    });
  });

  it("does not mutate the run", () => {
    const q = { docnos: ["a", "b"], scores: [1, 2] };
    trecRanking(q);
    expect(q).toEqual({ docnos: ["a", "b"], scores: [1, 2] });
  });

  it("strcmp is UTF-8 byte order (JS `<` is not, for astral vs U+E000..U+FFFF)", () => {
    expect(strcmp("a", "b")).toBeLessThan(0);
    expect(strcmp("ab", "a")).toBeGreaterThan(0);
    expect(strcmp("Z", "a")).toBeLessThan(0); // uppercase before lowercase, as bytes
    expect(strcmp("\u{1F600}", "\uFFFD")).toBeGreaterThan(0); // F0 9F 98 80 > EF BF BD
    expect("\u{1F600}" < "\uFFFD").toBe(true); // what plain JS comparison would wrongly say
    const unit = fc.constantFrom("a", "b", "Z", "é", "\uE000", "\uFFFD", "\u{10000}", "\u{1F600}", "0");
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 6 }), fc.string({ unit, maxLength: 6 }), (a, b) => {
        expect(Math.sign(strcmp(a, b))).toBe(Math.sign(Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"))));
      }),
      { seed: 42, numRuns: 200 },
    );
  });
});

describe("scoreTrec on the hand-made fixtures", () => {
  it("default: q2 (no relevant) scores 0 and counts; q3 (no results) is left out; q9 (unjudged) is ignored", () => {
    const s = scoreTrec(qrels, run, { ks: [5, 2, 5] }); // sorted and deduplicated like trec_eval's cutoffs
    expect(s.measures).toEqual(MEASURES_2_5);
    expect(s.perQuery.map((q) => q.qid)).toEqual(["q1", "q2", "q4"]);
    for (const m of MEASURES_2_5) {
      expect(s.perQuery[0]?.values[m]).toBeCloseTo(Q1[m as keyof typeof Q1], 12);
      expect(s.perQuery[1]?.values[m]).toBe(0);
      expect(s.perQuery[2]?.values[m]).toBeCloseTo(Q4[m as keyof typeof Q4], 12);
      // all = mean over the 3 evaluated queries
      expect(s.all[m]).toBeCloseTo((Q1[m as keyof typeof Q1] + 0 + Q4[m as keyof typeof Q4]) / 3, 12);
    }
    expect(s.numQueries).toBe(3);
    expect(s.counts).toEqual({
      judged: 4,
      evaluated: 3,
      withoutResults: 1,
      withoutRelevant: 1,
      unjudged: 1,
      duplicates: 1,
      queriesWithDuplicates: 1,
    });
    expect(s.warnings).toEqual([
      '1 judged query with no results in the run was left out of "all" (use -c to score it as 0, as trec_eval -c does)',
      "1 duplicate document in 1 query of the run was ignored (the first in trec order was kept)",
      '1 judged query with no relevant document scored 0 and counted in "all", as trec_eval does (--skip-empty leaves it out)',
      "1 query of the run with no judgments was ignored",
    ]);
    // The printed `all` rows, hand-rounded: recip_rank (0.5+0+0.5)/3; recall_2 (1/3+0+1/2)/3 = 0.27778;
    // ndcg_cut_2 (0.38685+0+0.38685)/3 = 0.25790; ndcg_cut_5 (0.71226+0+0.69343)/3 = 0.46856
    expect(formatTrecText(s)).toBe(
      [
        "recip_rank            \tall\t0.3333",
        "P_2                   \tall\t0.3333",
        "P_5                   \tall\t0.3333", // (0.6+0+0.4)/3
        "recall_2              \tall\t0.2778",
        "recall_5              \tall\t0.6667",
        "ndcg_cut_2            \tall\t0.2579",
        "ndcg_cut_5            \tall\t0.4686",
        "success_2             \tall\t0.6667",
        "success_5             \tall\t0.6667",
        "",
      ].join("\n"),
    );
  });

  it("complete (-c): q3 scores 0 and counts, so every mean is over 4", () => {
    const s = scoreTrec(qrels, run, { ks: [2, 5], complete: true });
    expect(s.perQuery.map((q) => q.qid)).toEqual(["q1", "q2", "q3", "q4"]);
    expect(s.perQuery[2]?.values).toEqual(ZERO);
    for (const m of MEASURES_2_5)
      expect(s.all[m]).toBeCloseTo((Q1[m as keyof typeof Q1] + Q4[m as keyof typeof Q4]) / 4, 12);
    expect(formatTrecValue(s.all.recall_2 as number)).toBe("0.2083"); // 0.83333/4
    expect(formatTrecValue(s.all.ndcg_cut_5 as number)).toBe("0.3514"); // 1.40569/4
    expect(s.warnings[0]).toBe('1 judged query with no results in the run scored 0 and counted in "all" (-c)');
  });

  it("skipEmpty: q2 gets no score and is not counted", () => {
    const s = scoreTrec(qrels, run, { ks: [2, 5], skipEmpty: true });
    expect(s.perQuery.map((q) => q.qid)).toEqual(["q1", "q4"]);
    expect(s.numQueries).toBe(2);
    expect(s.all.ndcg_cut_5).toBeCloseTo((Q1.ndcg_cut_5 + Q4.ndcg_cut_5) / 2, 12); // 0.70284
    expect(formatTrecValue(s.all.recall_2 as number)).toBe("0.4167"); // (1/3+1/2)/2
    expect(s.warnings).toContain(
      "1 judged query with no relevant document was skipped (--skip-empty): no score, not counted",
    );
  });

  it("skipEmpty and complete: a judged query with neither relevant documents nor results is skipped, not zero-filled", () => {
    const q = parseQrels("a 0 d 1\nb 0 d 0\n");
    const r = parseRun("a Q0 d 1 1 t\n");
    const s = scoreTrec(q, r, { ks: [1], skipEmpty: true, complete: true });
    expect(s.perQuery.map((p) => p.qid)).toEqual(["a"]);
    expect(s.counts.withoutResults).toBe(0);
  });

  it("a judged query with neither relevant documents nor results is only 'without results' by default", () => {
    const q = parseQrels("a 0 d 1\nb 0 d 0\n");
    const s = scoreTrec(q, parseRun("a Q0 d 1 1 t\n"), { ks: [1] });
    expect(s.perQuery.map((p) => p.qid)).toEqual(["a"]);
    expect(s.counts).toMatchObject({ withoutResults: 1, withoutRelevant: 0 });
    expect(s.warnings).toEqual([
      '1 judged query with no results in the run was left out of "all" (use -c to score it as 0, as trec_eval -c does)',
    ]);
    const c = scoreTrec(q, parseRun("a Q0 d 1 1 t\n"), { ks: [1], complete: true });
    expect(c.perQuery.map((p) => p.qid)).toEqual(["a", "b"]);
    expect(c.all.success_1).toBe(0.5);
  });

  it("graded: ndcg_cut uses the rel values as gains; the other measures do not change", () => {
    const binary = scoreTrec(qrels, run, { ks: [2, 5] });
    const s = scoreTrec(qrels, run, { ks: [2, 5], graded: true });
    expect(s.perQuery[0]?.values.ndcg_cut_2).toBeCloseTo(Q1_GRADED.ndcg_cut_2, 12);
    expect(s.perQuery[0]?.values.ndcg_cut_5).toBeCloseTo(Q1_GRADED.ndcg_cut_5, 12);
    expect(s.perQuery[2]?.values.ndcg_cut_2).toBeCloseTo(Q4_GRADED.ndcg_cut_2, 12);
    expect(s.perQuery[2]?.values.ndcg_cut_5).toBeCloseTo(Q4_GRADED.ndcg_cut_5, 12);
    expect(formatTrecValue(s.all.ndcg_cut_2 as number)).toBe("0.3336"); // (0.47962+0+0.52130)/3
    expect(formatTrecValue(s.all.ndcg_cut_5 as number)).toBe("0.4484"); // (0.68629+0+0.65900)/3
    for (const m of MEASURES_2_5.filter((x) => !x.startsWith("ndcg"))) expect(s.all[m]).toBe(binary.all[m]);
  });

  it("JSON carries the same numbers, unrounded, with every evaluated query", () => {
    const s = scoreTrec(qrels, run, { ks: [2, 5] });
    const j = toTrecJson(s);
    expect(j.version).toBe(1);
    expect(j.measures).toEqual(MEASURES_2_5);
    expect(Object.keys(j.perQuery).sort()).toEqual(["q1", "q2", "q4"]);
    expect(j.perQuery.q1?.ndcg_cut_5).toBeCloseTo(Q1.ndcg_cut_5, 12);
    expect(j.all).toEqual(s.all);
    expect(j.numQueries).toBe(3);
    expect(j.warnings).toEqual(s.warnings);
  });

  it("no query with both results and judgments is an error (as trec_eval)", () => {
    const e = dataIssues(() =>
      scoreTrec(qrels, parseRun("zz Q0 d 1 1 t\n"), { ks: [5] }, { qrels: "a.qrels", run: "b.run" }),
    );
    expect(e.issues[0]).toEqual({ file: "b.run", message: "No query has both results and judgments in a.qrels" });
    const onlyEmpty = parseQrels("q 0 d 0\n");
    expect(() => scoreTrec(onlyEmpty, parseRun("q Q0 d 1 1 t\n"), { ks: [5], skipEmpty: true })).toThrow(
      /--skip-empty/,
    );
  });

  it("bad cutoffs are InvalidArgumentErrors", () => {
    expect(() => normalizeCutoffs([])).toThrow(InvalidArgumentError);
    expect(() => normalizeCutoffs([5, 0])).toThrow("Expected `k` to be a positive integer, got 0");
    expect(normalizeCutoffs([10, 5, 10])).toEqual([5, 10]);
  });

  it("does not mutate its inputs", () => {
    const before = JSON.stringify([...run.queries]);
    scoreTrec(qrels, run, { ks: [2, 5] });
    expect(JSON.stringify([...run.queries])).toBe(before);
  });
});

describe("trec_eval's layout", () => {
  it("%6.4f: correctly rounded, exact ties (odd/32) to even like C's printf", () => {
    expect(formatTrecValue(0.5)).toBe("0.5000");
    expect(formatTrecValue(1)).toBe("1.0000");
    expect(formatTrecValue(0)).toBe("0.0000");
    expect(formatTrecValue(1 / 3)).toBe("0.3333");
    expect(formatTrecValue(2 / 3)).toBe("0.6667");
    expect(formatTrecValue(0.40625)).toBe("0.4062"); // 13/32 exactly: tie → even (toFixed says 0.4063)
    expect(formatTrecValue(0.03125)).toBe("0.0312"); // 1/32
    expect(formatTrecValue(0.09375)).toBe("0.0938"); // 3/32: 937.5 → 938 (even)
    expect(formatTrecValue(0.00005)).toBe("0.0001"); // not a tie: the double is slightly above 5e-5
    expect(formatTrecValue(0.12345)).toBe("0.1235"); // the double 0.12345 is 0.123450000000000004...
    expect(formatTrecValue(-412.66666)).toBe("-412.6667");
  });

  it("rows are `%-22s\\t%s\\t%6.4f`", () => {
    expect(formatTrecRow("P_5", "301", 0.2)).toBe("P_5                   \t301\t0.2000");
    expect(formatTrecRow("a_measure_name_longer_than_22", "all", 1)).toBe("a_measure_name_longer_than_22\tall\t1.0000");
  });

  it("per-query rows come query by query in strcmp order of qid, then the `all` rows", () => {
    const q = parseQrels("10 0 d 1\n9 0 d 1\n");
    const r = parseRun("9 Q0 d 1 1 t\n10 Q0 x 1 2 t\n10 Q0 d 2 1 t\n");
    const text = formatTrecText(scoreTrec(q, r, { ks: [1] }), { perQuery: true });
    expect(text.split("\n").map((l) => l.split("\t").slice(0, 2).join(" ").replace(/ +/g, " "))).toEqual([
      "recip_rank 10",
      "P_1 10",
      "recall_1 10",
      "ndcg_cut_1 10",
      "success_1 10",
      "recip_rank 9",
      "P_1 9",
      "recall_1 9",
      "ndcg_cut_1 9",
      "success_1 9",
      "recip_rank all",
      "P_1 all",
      "recall_1 all",
      "ndcg_cut_1 all",
      "success_1 all",
      "",
    ]);
    expect(trecMeasureNames([1, 3])).toEqual([
      "recip_rank",
      "P_1",
      "P_3",
      "recall_1",
      "recall_3",
      "ndcg_cut_1",
      "ndcg_cut_3",
      "success_1",
      "success_3",
    ]);
  });
});

describe("trec_eval's own test data (query 302 of test/qrels.test and test/results.test)", () => {
  it("prints exactly the rows trec_eval publishes in test/out.test.aq", async () => {
    const q = await readQrels(path.join(FIX, "qrels-302.test"));
    const r = await readRun(path.join(FIX, "results-302.test"));
    const s = scoreTrec(q, r, { ks: [1, 5, 10, 15, 20, 30, 100, 200, 500, 1000] });
    const ours = new Set(formatTrecText(s, { perQuery: true }).split("\n"));
    const published = (await readFile(path.join(FIX, "out.test.aq.302"), "utf8")).trimEnd().split("\n");
    expect(published).toHaveLength(31);
    for (const row of published) expect(ours, row).toContain(row);
    expect(s.counts).toMatchObject({ judged: 1, evaluated: 1, duplicates: 0 });
    expect(r.runId).toBe("STANDARD");
  });
});

// -------------------------------------------------- differential: trec_eval's algorithm
/**
 * A direct transcription of trec_eval's per-query procedure (form_res_rels:
 * sort by sim desc / docno desc, rel -1 for unjudged; m_success, m_recall,
 * m_P, m_ndcg_cut, m_recip_rank: one pass over the ranking, closing each
 * cutoff when the rank reaches it; the ideal DCG walks the relevance levels
 * from the top), written independently of src/eval/measures/metrics.ts. Runs without
 * duplicate documents, as trec_eval requires.
 */
function trecEvalReference(
  judged: Map<string, number>,
  results: Array<[string, number]>,
  cutoffs: number[],
): Record<string, number> {
  const docs = [...results].sort((a, b) => (a[1] !== b[1] ? b[1] - a[1] : a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0));
  const rels = docs.map(([d]) => judged.get(d) ?? -1);
  const numRel = [...judged.values()].filter((r) => r >= 1).length;
  const levels = new Map<number, number>();
  for (const r of judged.values()) if (r >= 0) levels.set(r, (levels.get(r) ?? 0) + 1);
  const out: Record<string, number> = {};
  const walk = (
    name: string,
    init: number,
    step: (acc: number, rel: number, i: number) => number,
    close: (acc: number, cutoff: number) => number,
  ) => {
    let ci = 0;
    let acc = init;
    for (let i = 0; i < rels.length && ci < cutoffs.length; i++) {
      if (i === cutoffs[ci]) out[`${name}_${cutoffs[ci++]}`] = close(acc, i);
      if (ci < cutoffs.length) acc = step(acc, rels[i] as number, i);
    }
    while (ci < cutoffs.length) {
      const c = cutoffs[ci++] as number;
      out[`${name}_${c}`] = close(acc, c);
    }
  };
  walk(
    "success",
    0,
    (a, r) => (r >= 1 ? a + 1 : a),
    (a) => (a > 0 ? 1 : 0),
  );
  walk(
    "recall",
    0,
    (a, r) => (r >= 1 ? a + 1 : a),
    (a) => (numRel === 0 ? 0 : a / numRel),
  );
  walk(
    "P",
    0,
    (a, r) => (r >= 1 ? a + 1 : a),
    (a, c) => a / c,
  );
  walk(
    "ndcg_cut",
    0,
    (a, r, i) => (r > 0 ? a + r / Math.log2(i + 2) : a),
    (a) => a,
  );
  // ideal DCG per cutoff: relevance levels from the highest down
  const ideal: number[] = [];
  for (const lvl of [...levels.keys()].filter((l) => l > 0).sort((a, b) => b - a))
    for (let n = 0; n < (levels.get(lvl) as number); n++) ideal.push(lvl);
  for (const c of cutoffs) {
    let idcg = 0;
    for (let i = 0; i < Math.min(c, ideal.length); i++) idcg += (ideal[i] as number) / Math.log2(i + 2);
    if (idcg > 0) out[`ndcg_cut_${c}`] = (out[`ndcg_cut_${c}`] as number) / idcg;
  }
  const first = rels.findIndex((r) => r >= 1);
  out.recip_rank = first === -1 ? 0 : 1 / (first + 1);
  return out;
}

describe("differential test against trec_eval's algorithm (fast-check, seed 42)", () => {
  const DOC = fc.constantFrom("d1", "d2", "d3", "d10", "d11", "D1", "x", "y", "z");
  const qid = fc.constantFrom("1", "2", "10", "a");
  const judgments = fc.uniqueArray(fc.tuple(qid, DOC, fc.integer({ min: -1, max: 3 })), {
    minLength: 1,
    maxLength: 25,
    selector: (t) => `${t[0]} ${t[1]}`,
  });
  // few distinct scores, so ties are frequent
  const results = fc.uniqueArray(fc.tuple(qid, DOC, fc.constantFrom(0, 0.5, 1, 2, -1, 1e-9)), {
    maxLength: 30,
    selector: (t) => `${t[0]} ${t[1]}`,
  });
  const cutoffs = fc
    .uniqueArray(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 4 })
    .map((c) => [...c].sort((a, b) => a - b));

  it("every per-query value and every mean equals trec_eval's, graded qrels included", () => {
    fc.assert(
      fc.property(judgments, results, cutoffs, (js, rs, ks) => {
        const qtext = js.map(([q, d, r]) => `${q} 0 ${d} ${r}`).join("\n");
        const rtext = rs.map(([q, d, s], i) => `${q} Q0 ${d} ${i} ${s} t`).join("\n");
        const q = parseQrels(qtext);
        const r = parseRun(rtext);
        const evaluable = [...q.keys()].filter((id) => r.queries.has(id));
        fc.pre(evaluable.length > 0);
        const s = scoreTrec(q, r, { ks, graded: true });
        expect(s.perQuery.map((p) => p.qid)).toEqual(evaluable.sort());
        const sums: Record<string, number> = {};
        for (const p of s.perQuery) {
          const judged = q.get(p.qid) as Map<string, number>;
          const rq = r.queries.get(p.qid) as { docnos: string[]; scores: number[] };
          const ref = trecEvalReference(
            judged,
            rq.docnos.map((d, i) => [d, rq.scores[i] as number]),
            ks,
          );
          for (const m of s.measures) {
            expect(p.values[m], `${p.qid} ${m}`).toBeCloseTo(ref[m] as number, 12);
            sums[m] = (sums[m] ?? 0) + (ref[m] as number);
          }
        }
        for (const m of s.measures) expect(s.all[m]).toBeCloseTo((sums[m] as number) / s.numQueries, 12);
      }),
      { seed: 42, numRuns: 200 },
    );
  });

  it("a duplicate that ranks below its first occurrence changes nothing", () => {
    fc.assert(
      fc.property(
        judgments,
        results,
        cutoffs,
        fc.array(fc.nat(), { minLength: 1, maxLength: 5 }),
        (js, rs, ks, picks) => {
          fc.pre(rs.length > 0);
          const q = parseQrels(js.map(([a, d, x]) => `${a} 0 ${d} ${x}`).join("\n"));
          const base = rs.map(([a, d, x]) => `${a} Q0 ${d} 0 ${x} t`);
          fc.pre([...q.keys()].some((id) => rs.some(([a]) => a === id)));
          const dupes = picks.map((p) => {
            const [a, d, x] = rs[p % rs.length] as [string, string, number];
            return `${a} Q0 ${d} 0 ${x - 1} t`; // lower score: after the original in trec order
          });
          const plain = scoreTrec(q, parseRun(base.join("\n")), { ks });
          const withDupes = scoreTrec(q, parseRun([...dupes, ...base].join("\n")), { ks });
          expect(withDupes.all).toEqual(plain.all);
          expect(withDupes.perQuery).toEqual(plain.perQuery);
        },
      ),
      { seed: 42, numRuns: 200 },
    );
  });
});
