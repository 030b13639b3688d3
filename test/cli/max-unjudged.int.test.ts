/**
 * `--gate max-unjudged=X` end to end (docs/gates-and-exit-codes.md; issue 54
 * item 2) with the real bin, `--graph` (test/fixtures/graphs/kb-agent.mjs)
 * over the graded KB of test/helpers/fixtures.ts at k=3. The turns that carry
 * judgments and their unjudged@3, counted by hand from the rankings asserted
 * in test/cli/graded-relevance.int.test.ts:
 * en-graded-001#0 [card-replace, card-freeze, refund-timelines], all judged → 0;
 * en-graded-001#1 [card-freeze, refund-timelines], both judged → 0;
 * en-judged-001#0 [card-replace, card-freeze, refund-timelines], judged {card-replace} → 2/3.
 * Mean 2/9 ≈ 0.222 (the plain turn carries no judgments and is not counted).
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/cli.js";
import { GRADED_CASES, writeGradedKb } from "../helpers/fixtures.js";

const GRAPH = path.join(ROOT, "test", "fixtures", "graphs", "kb-agent.mjs");
const PLAIN = {
  id: "en-plain-001",
  locale: "en",
  kind: "golden",
  turns: [{ user: "how do I lock my card?", must_cite_one_of: ["card-freeze"], expect: "answer" }],
};

type Check = {
  kind: string;
  key: string;
  option: string;
  threshold: number;
  observed: number;
  n: number;
  verdict: string;
};
type Report = {
  gate: { passed: boolean; checks?: Check[]; failures: { kind: string; reason: string }[] } | null;
  measuresNotComputed?: unknown;
};

let dir: string;
let judged: { kb: string; cases: string };
let plain: { kb: string; cases: string };
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-max-unjudged-"));
  judged = await writeGradedKb(path.join(dir, "judged"), [...GRADED_CASES, PLAIN]);
  plain = await writeGradedKb(path.join(dir, "plain"), [PLAIN]);
}, 60_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

const run = (kb: { kb: string; cases: string }, gate: string) =>
  runCli(["eval", "--graph", GRAPH, "--kb", kb.kb, "--cases", kb.cases, "-k", "3", "--gate", gate, "--json"], {
    env: { KB_AGENT_KB: kb.kb },
  });

describe("--gate max-unjudged", () => {
  it("passes when the mean unjudged@k over the turns that carry judgments is at most X", async () => {
    const r = await run(judged, "max-unjudged=0.3");
    expect(r.stderr).not.toMatch(/unexpected error/);
    expect(r.exitCode).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    const check = report.gate?.checks?.find((c) => c.kind === "unjudged");
    expect(check).toMatchObject({ key: "unjudged_at_k", option: "--gate max-unjudged=0.3", threshold: 0.3, n: 3 });
    expect(check?.observed).toBeCloseTo(2 / 9, 12);
    expect(check?.verdict).toBe("pass");
    expect(report.gate?.passed).toBe(true);
  }, 120_000);

  it("fails (exit 1) when it exceeds X, saying the mean and the turn count", async () => {
    const r = await run(judged, "max-unjudged=0.2");
    expect(r.exitCode).toBe(1);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.gate?.passed).toBe(false);
    expect(report.gate?.failures).toEqual([
      {
        kind: "unjudged",
        key: "unjudged_at_k",
        reason: "mean unjudged@k 0.222 over 3 turns that carry judgments (allowed: 0.2, --gate max-unjudged)",
      },
    ]);
  }, 120_000);

  it("cannot be checked when no turn carries judgments: exit 2 saying why, never a silent pass", async () => {
    const r = await run(plain, "max-unjudged=0.5");
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/--gate max-unjudged/);
    expect(r.stderr).toMatch(/carry judgments/);
  }, 120_000);

  it("refuses a value outside [0, 1] before the run (exit 2)", async () => {
    const r = await run(judged, "max-unjudged=2");
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/--gate max-unjudged` to be a number from 0 to 1/);
    expect(r.stdout).toBe("");
  }, 120_000);
});

describe("measuresNotComputed: no case carries judgments", () => {
  const evalArgs = (kb: { kb: string; cases: string }, ...extra: string[]) =>
    runCli(["eval", "--graph", GRAPH, "--kb", kb.kb, "--cases", kb.cases, "-k", "3", ...extra], {
      env: { KB_AGENT_KB: kb.kb },
    });
  const LINE =
    "not computed: judged@3, unjudged@3, condensed nDCG@3, bpref (no case carries `judged` lists or graded `relevant` (retrace label writes them): a card nobody judged cannot be told from a judged non-relevant one)";

  it("the JSON says which measures and why, once; the markdown has the line; the table only with --verbose", async () => {
    const md = path.join(dir, "plain.md");
    const json = await evalArgs(plain, "--json", "--out", `markdown:${md}`);
    expect(json.exitCode).toBe(0);
    const report = JSON.parse(json.stdout) as Report & { aggregates: Record<string, unknown> };
    expect(report.measuresNotComputed).toEqual([
      {
        keys: ["judged_at_k", "unjudged_at_k", "retrieval_ndcg_condensed_at_k", "retrieval_bpref"],
        reason:
          "no case carries `judged` lists or graded `relevant` (retrace label writes them): a card nobody judged cannot be told from a judged non-relevant one",
      },
    ]);
    expect(report.aggregates.unjudged_at_k).toBeUndefined();
    const { readFile } = await import("node:fs/promises");
    const markdown = await readFile(md, "utf8");
    expect(markdown.split("\n").filter((l) => l.includes("not computed: judged@3"))).toHaveLength(1);

    const quiet = await evalArgs(plain);
    expect(quiet.exitCode).toBe(0);
    expect(quiet.stdout).not.toContain("not computed");
    const verbose = await evalArgs(plain, "--verbose");
    expect(verbose.exitCode).toBe(0);
    expect(verbose.stdout.split("\n").filter((l) => l.includes("not computed"))).toEqual([`note: ${LINE}`]);
  }, 120_000);

  it("a run whose cases carry judgments has no measuresNotComputed", async () => {
    const r = await evalArgs(judged, "--json");
    expect(r.exitCode).toBe(0);
    expect((JSON.parse(r.stdout) as Report).measuresNotComputed).toBeUndefined();
  }, 120_000);
});
