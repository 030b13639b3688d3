/**
 * `retrace score` end to end: the real bin in a child process, in a temp dir,
 * asserting {exitCode, stdout, stderr}. Expected values are the hand-computed
 * ones of test/eval/trec.test.ts (mini fixtures) and trec_eval's published
 * output (query 302).
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/cli.js";

const FIX = path.join(ROOT, "test", "fixtures", "trec");
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-score-"));
  for (const f of ["mini.qrels", "mini.run", "qrels-302.test", "results-302.test"])
    await copyFile(path.join(FIX, f), path.join(dir, f));
  for (const f of ["qrels.test", "results.trunc", "out.test.aqcM"])
    await copyFile(path.join(ROOT, "test", "fixtures", "trec_eval-tests", f), path.join(dir, f));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const score = (...args: string[]) => runCli(["score", ...args], { cwd: dir });

describe("retrace score", () => {
  it("prints trec_eval's layout for the `all` rows, warnings on stderr", async () => {
    const r = await score("--qrels", "mini.qrels", "--run", "mini.run", "-k", "2,5");
    expect(r.exitCode).toBe(0);
    // Hand-computed in test/eval/trec.test.ts: q1, q2 (0), q4 averaged over 3.
    expect(r.stdout).toBe(
      [
        "recip_rank            \tall\t0.3333",
        "P_2                   \tall\t0.3333",
        "P_5                   \tall\t0.3333",
        "recall_2              \tall\t0.2778",
        "recall_5              \tall\t0.6667",
        "ndcg_cut_2            \tall\t0.2579",
        "ndcg_cut_5            \tall\t0.4686",
        "success_2             \tall\t0.6667",
        "success_5             \tall\t0.6667",
        "",
      ].join("\n"),
    );
    expect(r.stderr).toBe(
      [
        'warning: 1 judged query with no results in the run was left out of "all" (use -c to score it as 0, as trec_eval -c does)',
        "warning: 1 duplicate document in 1 query of the run was ignored (the first in trec order was kept)",
        'warning: 1 judged query with no relevant document scored 0 and counted in "all", as trec_eval does (--skip-empty leaves it out)',
        "warning: 1 query of the run with no judgments was ignored",
        "",
      ].join("\n"),
    );
  });

  it("-q -c: per-query rows query by query (q3 zero-filled), means over 4; default cutoffs 5,10", async () => {
    const r = await score("--qrels", "mini.qrels", "--run", "mini.run", "-q", "-c");
    expect(r.exitCode).toBe(0);
    const rows = r.stdout
      .trimEnd()
      .split("\n")
      .map((l) => l.split("\t"));
    expect(rows.every((cols) => cols.length === 3 && cols[0]?.length === 22)).toBe(true);
    expect([...new Set(rows.map((c) => c[1]))]).toEqual(["q1", "q2", "q3", "q4", "all"]);
    expect(rows.filter((c) => c[1] === "q1").map((c) => c[0]?.trim())).toEqual([
      "recip_rank",
      "P_5",
      "P_10",
      "recall_5",
      "recall_10",
      "ndcg_cut_5",
      "ndcg_cut_10",
      "success_5",
      "success_10",
    ]);
    expect(rows.filter((c) => c[1] === "q3").every((c) => c[2] === "0.0000")).toBe(true);
    const all = Object.fromEntries(rows.filter((c) => c[1] === "all").map((c) => [c[0]?.trim(), c[2]]));
    expect(all.recip_rank).toBe("0.2500"); // (0.5+0+0+0.5)/4
    expect(all.P_10).toBe("0.1250"); // (3/10 + 0 + 0 + 2/10)/4: P divides by 10 although 5 and 3 were retrieved
    expect(all.recall_10).toBe("0.5000"); // (1 + 0 + 0 + 1)/4
    expect(r.stderr).toContain('1 judged query with no results in the run scored 0 and counted in "all" (-c)');
  });

  it("--skip-empty --json: the same numbers as JSON, q2 not counted", async () => {
    const r = await score("--qrels", "mini.qrels", "--run", "mini.run", "-k", "2,5", "--skip-empty", "--json");
    expect(r.exitCode).toBe(0);
    const j = JSON.parse(r.stdout) as {
      version: number;
      measures: string[];
      perQuery: Record<string, Record<string, number>>;
      all: Record<string, number>;
      numQueries: number;
      warnings: string[];
    };
    expect(j.version).toBe(1);
    expect(j.numQueries).toBe(2);
    expect(Object.keys(j.perQuery).sort()).toEqual(["q1", "q4"]);
    const L = (rank: number) => Math.log2(rank + 1);
    // ndcg_cut_5: q1 (1/L2 + 1/L3 + 1/L5)/(1 + 1/L2 + 1/L3), q4 (1/L2 + 1/L3)/(1 + 1/L2)
    const q1 = (1 / L(2) + 1 / L(3) + 1 / L(5)) / (1 + 1 / L(2) + 1 / L(3));
    const q4 = (1 / L(2) + 1 / L(3)) / (1 + 1 / L(2));
    expect(j.perQuery.q1?.ndcg_cut_5).toBeCloseTo(q1, 12);
    expect(j.all.ndcg_cut_5).toBeCloseTo((q1 + q4) / 2, 12);
    expect(j.all.recall_2).toBeCloseTo((1 / 3 + 1 / 2) / 2, 12);
    expect(j.warnings).toContain(
      "1 judged query with no relevant document was skipped (--skip-empty): no score, not counted",
    );
    expect(r.stderr).toContain("warning: 1 judged query with no relevant document was skipped (--skip-empty)");
  });

  it("--graded: ndcg_cut uses the rel values as gains", async () => {
    const r = await score("--qrels", "mini.qrels", "--run", "mini.run", "-k", "2", "--graded");
    expect(r.exitCode).toBe(0);
    // q1 (2/L2)/(2 + 1/L2) = 0.47962, q2 0, q4 (3/L2)/(3 + 1/L2) = 0.52130 → /3 = 0.33364
    expect(r.stdout).toContain("ndcg_cut_2            \tall\t0.3336\n");
  });

  it("equals trec_eval's published output for query 302 of its test collection", async () => {
    const r = await score(
      "--qrels",
      "qrels-302.test",
      "--run",
      "results-302.test",
      "-q",
      "-k",
      "1,5,10,15,20,30,100,200,500,1000",
    );
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe("");
    const ours = new Set(r.stdout.split("\n"));
    const published = (await readFile(path.join(FIX, "out.test.aq.302"), "utf8")).trimEnd().split("\n");
    expect(published).toHaveLength(31);
    for (const row of published) expect(ours, row).toContain(row);
  });

  it("a run line with 5 columns: exit 2, file and line on stderr, nothing on stdout", async () => {
    await writeFile(path.join(dir, "bad.run"), "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4\nq1 Q0 d3 3 high t\n");
    const r = await score("--qrels", "mini.qrels", "--run", "bad.run");
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      "retrace: 2 data errors:\n" +
        "bad.run:2: Expected 6 whitespace-separated fields (qid Q0 docno rank score tag), got 5\n" +
        'bad.run:3: field `score` Expected a finite number, got "high"\n',
    );
  });

  it("bad qrels, a missing file, a bad -k, a missing option: exit 2", async () => {
    await writeFile(path.join(dir, "bad.qrels"), "q1 0 d1 yes\n");
    const badQrels = await score("--qrels", "bad.qrels", "--run", "mini.run");
    expect(badQrels.exitCode).toBe(2);
    expect(badQrels.stderr).toContain('bad.qrels:1: field `rel` Expected an integer relevance, got "yes"');
    expect(badQrels.stdout).toBe("");

    const missing = await score("--qrels", "mini.qrels", "--run", "nope.run");
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toBe("retrace: 1 data error:\nnope.run: cannot read the file (no such file)\n");

    const badK = await score("--qrels", "mini.qrels", "--run", "mini.run", "-k", "5,0");
    expect(badK.exitCode).toBe(2);
    expect(badK.stdout).toBe("");
    expect(badK.stderr).toContain('Expected `-k` to be a comma-separated list of positive integers, got "5,0"');

    const noRun = await score("--qrels", "mini.qrels");
    expect(noRun.exitCode).toBe(2);
    expect(noRun.stderr).toContain(
      "Expected `RUN` to be the qrels and the run file: retrace score QRELS RUN (trec_eval's order), or --qrels FILE --run FILE",
    );
    const twice = await score("mini.qrels", "mini.run", "--run", "mini.run");
    expect(twice.exitCode).toBe(2);
    expect(twice.stderr).toContain("Expected `--run` to be the run file given once");
  });

  it("takes trec_eval's positional order, qrels first, with the same output as --qrels/--run", async () => {
    const named = await score("--qrels", "mini.qrels", "--run", "mini.run", "-q", "-c");
    const positional = await score("mini.qrels", "mini.run", "-q", "-c");
    expect(positional.exitCode, positional.stderr).toBe(0);
    expect(positional.stdout).toBe(named.stdout);
    expect(positional.stdout).toMatch(/^success_5\s+all\s/m);
  });

  it("-m with trec_eval's syntax, -c and -M100: trec_eval 10's rows of out.test.aqcM for those measures, byte for byte", async () => {
    const r = await score(
      "qrels.test",
      "results.trunc",
      "-q",
      "-c",
      "-M100",
      "--graded",
      "-m",
      "num_ret",
      "-m",
      "map_cut.10",
      "-m",
      "bpref",
      "-m",
      "infAP",
      "-m",
      "rbp",
      "-m",
      "rbp_resid",
      "-m",
      "unj.5,10",
    );
    expect(r.exitCode).toBe(0);
    const wanted = /^(num_ret|bpref|infAP|map_cut_10|rbp|rbp_resid|unj_5|unj_10)\s/;
    const expected = (await readFile(path.join(dir, "out.test.aqcM"), "utf8"))
      .split("\n")
      .filter((l) => wanted.test(l));
    expect(r.stdout.trimEnd().split("\n")).toEqual(expected);
    expect(expected.length).toBe(4 * 8);
  });

  it("-J ranks only judged documents: unj is 0 and num_ret counts judged documents", async () => {
    const r = await score("qrels.test", "results.trunc", "-J", "-m", "unj.5", "-m", "num_ret", "-m", "rbp_resid");
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^num_ret +\tall\t\d+\n/);
    expect(r.stdout).toContain("unj_5                 \tall\t0.0000");
    expect(r.stdout).toContain("rbp_resid             \tall\t0.0000");
    const all = await score("qrels.test", "results.trunc", "-m", "num_ret");
    expect(Number(/\d+$/.exec(r.stdout.split("\n")[0] as string)?.[0])).toBeLessThan(
      Number(/\d+$/.exec(all.stdout.trimEnd())?.[0]),
    );
  });

  it("-m all_trec names on stderr the trec_eval measures it does not print", async () => {
    const r = await score("qrels.test", "results.trunc", "-m", "all_trec");
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^runid +\tall\tSTANDARD\nnum_q +\tall\t2\n/);
    expect(r.stderr).toContain("-m all_trec: trec_eval's iprec_at_recall");
  });

  it("bad -m, -k with -m, bad -M and -l: exit 2 before reading the files", async () => {
    const bogus = await score("qrels.test", "missing.run", "-m", "bogus");
    expect(bogus.exitCode).toBe(2);
    expect(bogus.stderr).toContain("-m");
    expect(bogus.stderr).toContain("bogus");
    expect(bogus.stderr).not.toContain("missing.run");
    const notImplemented = await score("qrels.test", "results.trunc", "-m", "iprec_at_recall");
    expect(notImplemented.exitCode).toBe(2);
    expect(notImplemented.stderr).toContain("a trec_eval measure retrace does not implement");
    const both = await score("qrels.test", "results.trunc", "-m", "map", "-k", "5");
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain("-m P.5,10");
    for (const bad of [
      ["-M", "0"],
      ["-l", "x"],
      ["-m", "P.0"],
      ["-m", "map.5"],
    ]) {
      const r = await score("qrels.test", "results.trunc", ...bad);
      expect(r.exitCode, bad.join(" ")).toBe(2);
      expect(r.stdout).toBe("");
    }
  });
});
