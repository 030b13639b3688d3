/**
 * Conformance with trec_eval's own expected outputs (test/fixtures/trec_eval-tests,
 * vendored unchanged from usnistgov/trec_eval's `test/` directory with its licence;
 * the command behind each file is in its README.md).
 *
 * For every measure `retrace score` implements — recip_rank, P_k, recall_k,
 * ndcg_cut_k, success_k — every row of the expected file (each query and `all`)
 * must be printed by retrace with the same `%6.4f` text. Rows of measures retrace
 * does not implement are not compared; the number of compared rows is asserted so
 * that a file silently matching nothing cannot pass.
 *
 * trec_eval 10's measures for incomplete judgments and the rest of `-m all_trec`
 * that retrace implements (runid, num_q, num_ret, num_rel, num_rel_ret, map,
 * gm_map, Rprec, bpref, infAP, gm_bpref, map_cut, num_nonrel_judged_ret, rbp,
 * rbp_resid, unj) are compared on every row of out.test.a, .aq, .aqc, .aqcM
 * (-M100) and .aql (-l2, graded qrels with unjudged-in-pool values): the
 * output of `-m all_trec` must be the expected file with the rows of the
 * measures retrace does not implement removed, byte for byte and in order.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ALL_TREC_NOT_IMPLEMENTED,
  formatTrecText,
  parseQrels,
  parseRun,
  scoreTrec,
  type TrecOptions,
  type TrecScores,
} from "../../src/eval/ir/trec.js";

const DIR = path.join(import.meta.dirname, "..", "fixtures", "trec_eval-tests");
const IMPLEMENTED = /^(recip_rank|P_\d+|recall_\d+|ndcg_cut_\d+|success_\d+)$/;

async function load(name: string): Promise<string> {
  return readFile(path.join(DIR, name), "utf8");
}

/** `measure → qid → value text` of trec_eval-layout output; only rows of implemented measures. */
function rows(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const [m, qid, value] = line.split("\t").map((f) => f.trim()) as [string, string, string];
    if (IMPLEMENTED.test(m)) out.set(`${m}\t${qid}`, value);
  }
  return out;
}

async function score(qrelsFile: string, runFile: string, ks: number[], complete: boolean): Promise<TrecScores> {
  // qrels.test has only rel 0/1, so graded and binary gains agree; graded is trec_eval's own ndcg_cut.
  return scoreTrec(parseQrels(await load(qrelsFile), qrelsFile), parseRun(await load(runFile), runFile), {
    ks,
    complete,
    graded: true,
  });
}

/** Every expected row of an implemented measure is printed identically by retrace; returns how many were compared. */
function expectRows(expected: Map<string, string>, ours: Map<string, string>): number {
  for (const [id, value] of expected) {
    const got = ours.get(id);
    if (got !== value) expect.fail(`${id.replace("\t", " @ ")}: trec_eval ${value}, retrace ${got ?? "(missing)"}`);
  }
  return expected.size;
}

const ALL_TREC_KS = [5, 10, 15, 20, 30, 100, 200, 500, 1000, 1];
// Per query and `all`: recip_rank 1 + P 9 + recall 9 + ndcg_cut 9 + success 3 (1, 5, 10) = 31 rows each.
const ALL_TREC_ROWS_PER_QUERY = 31;

describe("trec_eval conformance on trec_eval's own test files", () => {
  it("out.test (default measures, `all` rows): recip_rank and P_k; also from qrels.test.with-comments; with and without -c", async () => {
    const expected = rows(await load("out.test"));
    // Default measure set: recip_rank and P_5 … P_1000 of the implemented ones.
    expect(expected.size).toBe(1 + 9);
    for (const qrels of ["qrels.test", "qrels.test.with-comments"]) {
      for (const complete of [false, true]) {
        // Every judged query has results in results.test, so -c changes nothing.
        const s = await score(qrels, "results.test", ALL_TREC_KS, complete);
        expect(s.numQueries).toBe(3);
        expect(expectRows(expected, rows(formatTrecText(s)))).toBe(10);
      }
    }
  });

  it("out.test.a (-m all_trec, `all` rows) and out.test.aq (-q: every query and `all`), with and without -c", async () => {
    const a = rows(await load("out.test.a"));
    const aq = rows(await load("out.test.aq"));
    expect(a.size).toBe(ALL_TREC_ROWS_PER_QUERY);
    expect(aq.size).toBe(4 * ALL_TREC_ROWS_PER_QUERY);
    for (const complete of [false, true]) {
      const s = await score("qrels.test", "results.test", ALL_TREC_KS, complete);
      const ours = rows(formatTrecText(s, { perQuery: true }));
      expect(expectRows(a, ours)).toBe(31);
      expect(expectRows(aq, ours)).toBe(124);
    }
  });

  it("out.test.aqc (-c on results.trunc, which lacks query 302): 302 scores 0 and counts in `all`", async () => {
    const expected = rows(await load("out.test.aqc"));
    expect(expected.size).toBe(4 * ALL_TREC_ROWS_PER_QUERY);
    const s = await score("qrels.test", "results.trunc", ALL_TREC_KS, true);
    expect(s.numQueries).toBe(3);
    expect(expectRows(expected, rows(formatTrecText(s, { perQuery: true })))).toBe(124);
  });

  it("without -c on results.trunc: queries 301 and 303 still match out.test.aqc; 302 is left out of `all`, with a warning", async () => {
    const expected = rows(await load("out.test.aqc"));
    const s = await score("qrels.test", "results.trunc", ALL_TREC_KS, false);
    const ours = rows(formatTrecText(s, { perQuery: true }));
    const perQuery = new Map([...expected].filter(([id]) => /\t30[13]$/.test(id)));
    expect(expectRows(perQuery, ours)).toBe(62);
    expect([...ours.keys()].some((id) => id.endsWith("\t302"))).toBe(false);
    expect(s.numQueries).toBe(2);
    // `all` is then the mean over 301 and 303: e.g. recip_rank (0.1667 + 0.3333)/2 = 0.2500, not trec_eval -c's 0.1667.
    expect(ours.get("recip_rank\tall")).toBe("0.2500");
    expect(expected.get("recip_rank\tall")).toBe("0.1667");
    expect(s.warnings.join("\n")).toContain("1 judged query with no results in the run was left out");
  });

  it("out.test.meas_params (parameterised cutoffs): P.3,5,7  recall.20,2000  ndcg_cut.10,20,23  success.2,5,20, with and without -c", async () => {
    const expected = rows(await load("out.test.meas_params"));
    // 4 rows (3 queries + all) × 11 measures: P 3 + recall 2 + ndcg_cut 3 + success 3 (recip_rank was not requested).
    expect(expected.size).toBe(4 * 11);
    for (const complete of [false, true]) {
      // One set of cutoffs for all measures here: the union; only the requested rows are compared.
      const s = await score("qrels.test", "results.test", [3, 5, 7, 20, 2000, 10, 23, 2], complete);
      expect(expectRows(expected, rows(formatTrecText(s, { perQuery: true })))).toBe(44);
    }
  });
});

/** The expected file without the rows of trec_eval measures retrace does not implement (relstring's `-mrelstring.20` included). */
function implementedLines(text: string): string[] {
  const missing = new Set(ALL_TREC_NOT_IMPLEMENTED);
  const withParams = /^(iprec_at_recall|Rprec_mult|relative_P|relstring)_/; // rows named measure_param
  return text.split("\n").filter((l) => {
    const name = (l.split("\t")[0] as string).trim();
    return l !== "" && !missing.has(name) && !withParams.test(name);
  });
}

describe("trec_eval 10's measures for incomplete judgments (-m all_trec): every row of trec_eval's outputs", () => {
  const cases: Array<{ file: string; qrels: string; run: string; options: Partial<TrecOptions>; perQuery: boolean }> = [
    { file: "out.test.a", qrels: "qrels.test", run: "results.test", options: {}, perQuery: false },
    { file: "out.test.aq", qrels: "qrels.test", run: "results.test", options: {}, perQuery: true },
    { file: "out.test.aqc", qrels: "qrels.test", run: "results.trunc", options: { complete: true }, perQuery: true },
    {
      file: "out.test.aqcM",
      qrels: "qrels.test",
      run: "results.trunc",
      options: { complete: true, depth: 100 },
      perQuery: true,
    },
    {
      file: "out.test.aql",
      qrels: "qrels.rel_level",
      run: "results.test",
      options: { relevanceLevel: 2 },
      perQuery: true,
    },
  ];
  // `all`: runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank (10) + P 9 + recall 9
  // + infAP gm_bpref (2) + ndcg_cut 9 + map_cut 9 + success 3 + num_nonrel_judged_ret rbp rbp_resid (3) + unj 3 = 57;
  // per query the same but runid, num_q, gm_map and gm_bpref (53).
  const ROWS = { "out.test.a": 57, "out.test.aq": 3 * 53 + 57 };

  for (const c of cases) {
    it(`${c.file}: byte for byte, in trec_eval's order`, async () => {
      const s = scoreTrec(parseQrels(await load(c.qrels), c.qrels), parseRun(await load(c.run), c.run), {
        measures: ["all_trec"],
        graded: true,
        ...c.options,
      });
      const expected = implementedLines(await load(c.file));
      const ours = formatTrecText(s, { perQuery: c.perQuery }).trimEnd().split("\n");
      expect(ours).toEqual(expected);
      expect(ours.length).toBe(c.perQuery ? ROWS["out.test.aq"] : ROWS["out.test.a"]);
      for (const m of [
        "map",
        "Rprec",
        "bpref",
        "infAP",
        "rbp",
        "rbp_resid",
        "unj_5",
        "unj_20",
        "map_cut_10",
        "num_rel",
      ])
        expect(ours.filter((l) => l.startsWith(`${m} `)).length).toBe(c.perQuery ? 4 : 1);
    });
  }

  it("the measures printed cover what the issue names: map, map_cut, Rprec, bpref, infAP, rbp, rbp_resid, unj, num_*", async () => {
    const s = scoreTrec(parseQrels(await load("qrels.test")), parseRun(await load("results.test")), {
      measures: ["all_trec"],
    });
    expect(s.measures).toEqual(
      expect.arrayContaining([
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "Rprec",
        "bpref",
        "infAP",
        "rbp",
        "rbp_resid",
      ]),
    );
    expect(s.measures.filter((m) => m.startsWith("map_cut_"))).toEqual(
      [5, 10, 15, 20, 30, 100, 200, 500, 1000].map((k) => `map_cut_${k}`),
    );
    expect(s.measures.filter((m) => m.startsWith("unj_"))).toEqual(["unj_5", "unj_10", "unj_20"]);
    expect(s.warnings.join("\n")).toContain("-m all_trec: trec_eval's iprec_at_recall");
  });

  it("out.test (the official set): every row retrace implements, with -m official", async () => {
    const s = scoreTrec(parseQrels(await load("qrels.test")), parseRun(await load("results.test")), {
      measures: ["official"],
    });
    const ours = formatTrecText(s).trimEnd().split("\n");
    expect(ours).toEqual(implementedLines(await load("out.test")));
    expect(ours.length).toBe(19); // runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank + 9 P
  });

  it("-m with cutoffs (P.5,7,3) selects and sorts as trec_eval does (out.test.meas_params)", async () => {
    const s = scoreTrec(parseQrels(await load("qrels.test")), parseRun(await load("results.test")), {
      measures: ["P.5,7,3", "recall.20,2000", "ndcg_cut.10,20,23", "success.2,5,20"],
      graded: true,
    });
    const ours = formatTrecText(s, { perQuery: true }).trimEnd().split("\n");
    const expected = (await load("out.test.meas_params"))
      .split("\n")
      .filter((l) => /^(P|recall|ndcg_cut|success)_\d+\s/.test(l));
    expect(ours).toEqual(expected);
    expect(ours.length).toBe(44);
  });
});
