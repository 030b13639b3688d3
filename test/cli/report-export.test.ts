/**
 * `retrace report` (`--out`, `--trec`) and `compare --html` through the
 * real bin, on the hand-checked report fixture: the HTML path writes only
 * its file (stdout empty), and the TREC export round-trips through
 * `retrace score` to the report's own means.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportToJSON } from "../../src/eval/report/render.js";
import type { Report } from "../../src/eval/report/types.js";
import { tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";
import { fixtureReport, storelessReport } from "../eval/report-fixture.js";

let dir: string;
let cleanup: () => Promise<void>;
let report: Report;
const file = (name: string) => path.join(dir, name);

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("report-export"));
  report = await fixtureReport();
  await writeFile(file("run.json"), reportToJSON(report));
  await writeFile(file("storeless.json"), reportToJSON(await storelessReport()));
});
afterAll(() => cleanup());

describe("retrace report --out html:", () => {
  it("writes one HTML file and nothing on stdout", async () => {
    const r = await runCli(["report", file("run.json"), "--out", `html:${file("out.html")}`]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("");
    const html = await readFile(file("out.html"), "utf8");
    expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
    // The fixture's query `reembolso <b>&"ya"` is in the compressed data (gzip in base64), never in the markup.
    expect(html).not.toContain("<b>");
    expect(html).not.toContain("reembolso");
    const b64 =
      /<script type="application\/octet-stream" id="retrace-data" data-encoding="gzip\+base64">([A-Za-z0-9+/=]*)<\/script>/.exec(
        html,
      )?.[1];
    expect(b64).toBeDefined();
    expect(gunzipSync(Buffer.from(b64!, "base64")).toString("utf8")).toContain('reembolso <b>&\\"ya\\"');
  });

  it("exits 2 naming the file and field when it is not a report, writing nothing", async () => {
    await writeFile(file("bad.json"), JSON.stringify({ version: 1, run: {} }));
    const r = await runCli(["report", file("bad.json"), "--out", `html:${file("bad.html")}`]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/bad\.json.*aggregates/);
    expect(existsSync(file("bad.html"))).toBe(false);
  });

  it("compare --out html: refuses a baseline (no per-turn artifacts) with exit 2", async () => {
    const baseline = path.join(path.dirname(new URL(import.meta.url).pathname), "../../kb/eval/baseline.json");
    const r = await runCli(["compare", baseline, baseline, "--out", `html:${file("diff.html")}`]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/--out html: needs report JSON files/);
    expect(existsSync(file("diff.html"))).toBe(false);
  });
});

describe("retrace export --trec", () => {
  it("writes run and qrels keyed caseId#turn that retrace score reads back to the report's means", async () => {
    const ex = await runCli(["report", file("run.json"), "--out", `trec:${file("trec")}`]);
    expect(ex.exitCode).toBe(0);
    expect(ex.stdout).toBe("");
    const run = await readFile(file("trec/run.txt"), "utf8");
    const qrels = await readFile(file("trec/qrels.txt"), "utf8");
    // g1#0 retrieved [c, a, d]; gold [a, b].
    expect(run.split("\n").filter((l) => l.startsWith("g1#0 "))).toEqual([
      "g1#0 Q0 c 1 3 retrace",
      "g1#0 Q0 a 2 2 retrace",
      "g1#0 Q0 d 3 1 retrace",
    ]);
    expect(qrels.split("\n").filter((l) => l.startsWith("g1#0 "))).toEqual(["g1#0 0 a 1", "g1#0 0 b 1"]);
    expect(qrels).not.toMatch(/^g2#0 /m); // no-match turn: no judgments
    expect(run).not.toMatch(/^g3#0 /m); // retrieval did not run for it

    const sc = await runCli([
      "score",
      "--qrels",
      file("trec/qrels.txt"),
      "--run",
      file("trec/run.txt"),
      "-k",
      "3",
      "--json",
    ]);
    expect(sc.exitCode).toBe(0);
    const all = (JSON.parse(sc.stdout) as { all: Record<string, number> }).all;
    const mean = (k: string) => report.aggregates[k]!.mean;
    expect(all.success_3).toBeCloseTo(mean("retrieval_hit_at_k"), 12);
    expect(all.recall_3).toBeCloseTo(mean("retrieval_recall_at_k"), 12);
    expect(all.ndcg_cut_3).toBeCloseTo(mean("retrieval_ndcg_at_k"), 12);
    expect(all.P_3).toBeCloseTo(mean("retrieval_precision_at_k"), 12);
    expect(all.recip_rank).toBeCloseTo(mean("retrieval_mrr_at_k"), 12);
    expect(qrels).not.toMatch(/^g3#0 /m); // g3#0: retrieval did not run, so the report does not score it: no judgments either
  });

  it("a run with an empty ranking: score -c (the printed command) and trec_eval's rule reproduce the report's means exactly", async () => {
    // A user-style graph over the mini KB; "xyzzy plugh" shares no word with any card, so that turn's ranking is empty (scored 0).
    const cases = file("empty-cases.jsonl");
    await writeFile(
      cases,
      [
        {
          id: "e-1",
          locale: "en",
          kind: "golden",
          turns: [
            { user: "how do I freeze my card?", must_cite_one_of: ["card-freeze"], expect: "answer" },
            { user: "xyzzy plugh", must_cite_one_of: ["refund-timelines"], expect: "answer" },
          ],
        },
        {
          id: "e-2",
          locale: "en",
          kind: "golden",
          turns: [{ user: "when does my refund arrive?", must_cite_one_of: ["refund-timelines"], expect: "answer" }],
        },
      ]
        .map((c) => JSON.stringify(c))
        .join("\n") + "\n",
    );
    const graph = path.join(ROOT, "test", "fixtures", "graphs", "kb-agent.mjs");
    const ev = await runCli(
      ["eval", "--graph", graph, "--kb", MINI_KB, "--cases", cases, "-k", "3", "--out", `json:${file("empty.json")}`],
      { env: { KB_AGENT_KB: MINI_KB } },
    );
    expect(ev.exitCode, ev.stderr).toBe(0);
    const r = JSON.parse(await readFile(file("empty.json"), "utf8")) as Report;
    expect(r.turns.find((t) => t.caseId === "e-1" && t.turn === 1)?.retrievedIds).toEqual([]);
    const ex = await runCli(["report", file("empty.json"), "--out", `trec:${file("trec-empty")}`]);
    expect(ex.exitCode, ex.stderr).toBe(0);
    const qrels = file("trec-empty/qrels.txt");
    const run = file("trec-empty/run.txt");
    expect(ex.stderr).toContain(`the report's means: retrace score -c -k 3 ${qrels} ${run}`);
    const printed = /the report's means: retrace (score -c -k 3 \S+ \S+)/.exec(ex.stderr)![1]!.split(" ");
    const sc = await runCli([...printed, "--json"]);
    expect(sc.exitCode, sc.stderr).toBe(0);
    const all = (JSON.parse(sc.stdout) as { all: Record<string, number> }).all;
    const mean = (k: string) => r.aggregates[k]!.mean;
    expect(all.success_3).toBe(mean("retrieval_hit_at_k")); // 2 of 3
    expect(all.success_3).toBeCloseTo(2 / 3, 12);
    expect(all.recall_3).toBeCloseTo(mean("retrieval_recall_at_k"), 12);
    expect(all.ndcg_cut_3).toBeCloseTo(mean("retrieval_ndcg_at_k"), 12);
    expect(all.recip_rank).toBeCloseTo(mean("retrieval_mrr_at_k"), 12);
    // Without -c the empty ranking is left out (as trec_eval does): the means differ, and the warning says so.
    const noC = await runCli(["score", "-k", "3", qrels, run, "--json"]);
    expect((JSON.parse(noC.stdout) as { all: Record<string, number> }).all.success_3).toBe(1);
    expect(noC.stderr).toMatch(/use -c to score it as 0/);
  }, 60_000);

  it("exits 2 for a store-less report (nothing was retrieved)", async () => {
    const r = await runCli(["report", file("storeless.json"), "--out", `trec:${file("trec2")}`]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/no turn has retrieved ids/);
    expect(existsSync(file("trec2/run.txt"))).toBe(false);
  });
});
