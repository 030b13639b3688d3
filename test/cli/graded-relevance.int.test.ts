/**
 * Graded relevance and judged@k end to end (docs/metrics.md; issue 25 items 3
 * and 4), with the real bin on a hand-made case file over a copy of kb-mini
 * with one more English card (three en cards, so a top-3 can hold a card no
 * one judged):
 * - retrace's own graph (`--store memory --embedder builtin`), `--graph`
 *   (test/fixtures/graphs/kb-agent.mjs over the same KB) and `--graph
 *   --catalog`: a graded turn's nDCG@3 is the graded one, a relevance-only
 *   turn scores nDCG only, judged@3 equals the hand count, and the stderr
 *   warning names the turns with holes;
 * - `retrace trace` shows the graded gains and the relevance-only turn's comment;
 * - `retrace merge` of two shards gives the same judged@k and judgments section.
 *
 * The expected nDCG is computed in this file by its own small DCG (gain =
 * grade, log2 discount, ideal from every positive grade), never by retrace's
 * metric code; the rankings are asserted first, so a change in retrieval
 * shows as such.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/cli.js";
import { GRADED_CASES, writeGradedKb } from "../helpers/fixtures.js";

const GRAPH = path.join(ROOT, "test", "fixtures", "graphs", "kb-agent.mjs");

// Hand-made cases: the graded ones (a graded turn with a contract, a relevance-only turn, a contract turn with `judged`) and a plain turn.
const CASES = [
  ...GRADED_CASES,
  {
    id: "en-plain-001",
    locale: "en",
    kind: "golden",
    turns: [{ user: "how do I lock my card?", must_cite_one_of: ["card-freeze"], expect: "answer" }],
  },
];

type Result = { key: string; score: number; comment?: string };
type Turn = {
  caseId: string;
  turn: number;
  retrievedIds: string[] | null;
  results: Result[];
  relevant?: Record<string, number>;
  judged?: string[];
  relevanceOnly?: true;
};
type Report = {
  turns: Turn[];
  aggregates: Record<string, { mean: number; n: number }>;
  vacuous: string[];
  judgments?: {
    gradedTurns: number;
    relevanceOnlyTurns: number;
    judgedTurns: number;
    warnBelow: number;
    holes: { caseId: string; turn: number; judged: number; unjudged: string[] }[];
  };
};

/** The test's own graded nDCG@k (trec_eval's ndcg_cut): gain = grade, discount log2(rank + 1), ideal from every positive grade, cut at k. */
function referenceNdcg(ranked: readonly string[], grades: Record<string, number>, k: number): number {
  const dcg = ranked.slice(0, k).reduce((s, id, i) => s + Math.max(grades[id] ?? 0, 0) / Math.log2(i + 2), 0);
  const ideal = Object.values(grades)
    .filter((g) => g > 0)
    .sort((a, b) => b - a)
    .slice(0, k);
  return dcg / ideal.reduce((s, g, i) => s + g / Math.log2(i + 2), 0);
}

const turnOf = (r: Report, id: string) => r.turns.find((t) => `${t.caseId}#${t.turn}` === id)!;
const keys = (t: Turn) => t.results.map((x) => x.key);
const scoreOf = (t: Turn, key: string) => t.results.find((x) => x.key === key)?.score;

let dir: string;
let kb: string;
let cases: string;
let catalog: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-graded-"));
  ({ kb, cases } = await writeGradedKb(dir, CASES));
  catalog = path.join(dir, "catalog.tsv");
  await writeFile(
    catalog,
    [
      "card-freeze\ten",
      "refund-timelines\ten",
      "card-replace\ten",
      "es-congelar-tarjeta\tes-419",
      "pt-chaves-pix\tpt-BR",
      "",
    ].join("\n"),
  );
}, 60_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

/** What every path must agree on, given the rankings it retrieved (asserted by the caller). */
function expectScoring(r: Report): void {
  const graded = turnOf(r, "en-graded-001#0");
  expect(graded.relevant).toEqual({ "card-freeze": 3, "card-replace": 1, "refund-timelines": 0 });
  expect(scoreOf(graded, "retrieval_ndcg_at_k")).toBeCloseTo(
    referenceNdcg(graded.retrievedIds!, graded.relevant!, 3),
    12,
  );
  // hit@3 reads the contract: card-freeze is in the top 3.
  expect(scoreOf(graded, "retrieval_hit_at_k")).toBe(graded.retrievedIds!.slice(0, 3).includes("card-freeze") ? 1 : 0);

  const relOnly = turnOf(r, "en-graded-001#1");
  expect(relOnly.relevanceOnly).toBe(true);
  expect(keys(relOnly)).toEqual([
    "retrieval_ndcg_at_k",
    "judged_at_k",
    "unjudged_at_k",
    "retrieval_ndcg_condensed_at_k",
    "retrieval_bpref",
  ]);
  expect(scoreOf(relOnly, "retrieval_ndcg_at_k")).toBeCloseTo(
    referenceNdcg(relOnly.retrievedIds!, relOnly.relevant!, 3),
    12,
  );

  // 4 turns; hit@3 on the 3 with a contract; nDCG@3 on all 4.
  expect(r.aggregates.retrieval_hit_at_k?.n).toBe(3);
  expect(r.aggregates.retrieval_ndcg_at_k?.n).toBe(4);
  expect(r.judgments).toMatchObject({ gradedTurns: 2, relevanceOnlyTurns: 1, judgedTurns: 3, warnBelow: 0.8 });
}

describe("graded nDCG and judged@k through every path", () => {
  it("--graph (kb-agent over the KB): graded nDCG, nDCG only on the relevance-only turn, judged@3 by hand, the warning naming the holes", async () => {
    const r = await runCli(["eval", "--graph", GRAPH, "--kb", kb, "--cases", cases, "-k", "3", "--json"], {
      env: { KB_AGENT_KB: kb },
    });
    expect(r.stderr).not.toMatch(/unexpected error/);
    expect(r.exitCode).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    // The rankings (word overlap, ties by id; the graph searches every locale): the second turn's question matches two cards only.
    expect(turnOf(report, "en-graded-001#0").retrievedIds).toEqual(["card-replace", "card-freeze", "refund-timelines"]);
    expect(turnOf(report, "en-graded-001#1").retrievedIds).toEqual(["card-freeze", "refund-timelines"]);
    expect(turnOf(report, "en-judged-001#0").retrievedIds).toEqual(["card-replace", "card-freeze", "refund-timelines"]);
    expectScoring(report);
    // By hand, en-graded-001#0, gains [1, 3, 0]: DCG = 1/1 + 3/log2 3 = 2.892789; IDCG = 3/1 + 1/log2 3 = 3.630930 → 0.796708
    // (the binary nDCG over the contract [card-freeze] would be 1/log2 3 = 0.630930).
    expect(scoreOf(turnOf(report, "en-graded-001#0"), "retrieval_ndcg_at_k")).toBeCloseTo(0.796708, 6);
    // By hand, en-graded-001#1, gains [1, 3]: the same DCG and IDCG → 0.796708.
    expect(scoreOf(turnOf(report, "en-graded-001#1"), "retrieval_ndcg_at_k")).toBeCloseTo(0.796708, 6);
    // judged@3 by hand:
    //   en-graded-001#0: judged set {card-freeze, card-replace, refund-timelines} (relevant keys, grade 0 included) → 3/3
    //   en-graded-001#1: {refund-timelines, card-freeze}; both retrieved cards judged → 2/2 (divided by what was retrieved, not by k)
    //   en-judged-001#0: {card-replace} (judged) ∪ {card-replace} (contract) → 1/3; card-freeze and refund-timelines unjudged
    //   en-plain-001#0: no judgments → not measured
    expect(scoreOf(turnOf(report, "en-graded-001#0"), "judged_at_k")).toBe(1);
    expect(scoreOf(turnOf(report, "en-graded-001#1"), "judged_at_k")).toBe(1);
    expect(scoreOf(turnOf(report, "en-judged-001#0"), "judged_at_k")).toBeCloseTo(1 / 3, 12);
    expect(keys(turnOf(report, "en-plain-001#0"))).not.toContain("judged_at_k");
    expect(report.aggregates.judged_at_k?.n).toBe(3);
    expect(report.aggregates.judged_at_k?.mean).toBeCloseTo((1 + 1 + 1 / 3) / 3, 12);
    expect(report.judgments?.holes).toEqual([
      { caseId: "en-judged-001", turn: 0, judged: 1 / 3, unjudged: ["card-freeze", "refund-timelines"] },
    ]);
    // 0.778 < 0.8: the warning on stderr names the turn and its unjudged cards.
    expect(r.stderr).toContain("judged@3 is 0.778 (n=3), below 0.8");
    expect(r.stderr).toContain(
      "1 turn with unjudged cards in the top-3: en-judged-001#0 [card-freeze, refund-timelines]",
    );

    // The table says which nDCG was used and lists the holes.
    const text = await runCli(["eval", "--graph", GRAPH, "--kb", kb, "--cases", cases, "-k", "3"], {
      env: { KB_AGENT_KB: kb },
    });
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toContain(
      "nDCG@3: graded gains (the turn's relevant) on 2 turns of 4 scored turns (1 relevance-only: scored for nDCG only)",
    );
    expect(text.stdout).toContain("en-judged-001#0 judged 0.333 unjudged [card-freeze, refund-timelines]");
  }, 120_000);

  it("--graph --catalog: the same scores from the catalog's ids", async () => {
    const r = await runCli(["eval", "--graph", GRAPH, "--catalog", catalog, "--cases", cases, "-k", "3", "--json"], {
      env: { KB_AGENT_KB: kb },
    });
    expect(r.stderr).not.toMatch(/unexpected error/);
    expect(r.exitCode).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expectScoring(report);
    expect(report.aggregates.judged_at_k?.mean).toBeCloseTo((1 + 1 + 1 / 3) / 3, 12);
    expect(r.stderr).toContain(
      "1 turn with unjudged cards in the top-3: en-judged-001#0 [card-freeze, refund-timelines]",
    );
  }, 120_000);

  it("retrace's own graph (--store memory): graded nDCG and judged@3 match the hand count on its rankings", async () => {
    const r = await runCli(
      [
        "eval",
        "--kb",
        kb,
        "--cases",
        cases,
        "--store",
        "memory",
        "--config",
        '{"retrieval":{"embedder":"builtin"}}',
        "-k",
        "3",
        "--json",
      ],
      { timeoutMs: 300_000 },
    );
    expect(r.stderr).not.toMatch(/unexpected error/);
    expect(r.exitCode).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expectScoring(report);
    for (const t of report.turns) expect(t.retrievedIds?.length).toBe(3); // three en cards, all in every top 3
    // With all three en cards in every top 3, judged@3 does not depend on their order: 3/3, 2/3, 1/3 as above.
    expect(scoreOf(turnOf(report, "en-graded-001#0"), "judged_at_k")).toBe(1);
    expect(scoreOf(turnOf(report, "en-graded-001#1"), "judged_at_k")).toBeCloseTo(2 / 3, 12);
    expect(scoreOf(turnOf(report, "en-judged-001#0"), "judged_at_k")).toBeCloseTo(1 / 3, 12);
    // Query attribution (on by default) scores the graph's own query with the same graded gains: its nDCG@3 is the turn's.
    const graded = turnOf(report, "en-graded-001#0") as Turn & {
      queries?: { graph: { scores: Record<string, number> } };
    };
    expect(graded.queries?.graph.scores.retrieval_ndcg_at_k).toBe(scoreOf(graded, "retrieval_ndcg_at_k"));
    // The relevance-only turn's answer side is not scored: refusal correctness on the 3 contract turns only.
    expect(report.aggregates.refusal_correctness?.n).toBe(3);
    expect(report.vacuous).not.toContain("judged_at_k");
    expect(r.stderr).toContain("judged@3 is 0.667 (n=3), below 0.8");

    const trace = await runCli(
      [
        "trace",
        "en-graded-001",
        "--kb",
        kb,
        "--cases",
        cases,
        "--store",
        "memory",
        "--config",
        '{"retrieval":{"embedder":"builtin"}}',
        "-k",
        "3",
      ],
      { timeoutMs: 300_000 },
    );
    expect(trace.exitCode).toBe(0);
    expect(trace.stdout).toContain(
      "relevant (graded: nDCG's gains): card-freeze=3, card-replace=1, refund-timelines=0",
    );
    expect(trace.stdout).toContain("gold:  none (relevance-only turn: scored for nDCG only)");
    expect(trace.stdout).toMatch(/ndcg=\S+ \(graded\) relevant=\{refund-timelines:3,card-freeze:1\} top3=/);
  }, 600_000);

  it("retrace merge of two --graph shards gives the unsharded judged@k and judgments section", async () => {
    const base = ["eval", "--graph", GRAPH, "--kb", kb, "--cases", cases, "-k", "3"];
    const whole = JSON.parse((await runCli([...base, "--json"], { env: { KB_AGENT_KB: kb } })).stdout) as Report;
    const files = [1, 2].map((i) => path.join(dir, `shard-${i}.json`));
    for (const [i, file] of files.entries()) {
      const s = await runCli([...base, "--shard", `${i + 1}/2`, "--out", `json:${file}`], { env: { KB_AGENT_KB: kb } });
      expect(s.exitCode).toBe(0);
    }
    const merged = await runCli(["merge", ...files, "--json"]);
    expect(merged.stderr).not.toMatch(/unexpected error/);
    expect(merged.exitCode).toBe(0);
    const m = JSON.parse(merged.stdout) as Report;
    expect(m.aggregates.judged_at_k).toEqual(whole.aggregates.judged_at_k);
    expect(m.aggregates.retrieval_ndcg_at_k).toEqual(whole.aggregates.retrieval_ndcg_at_k);
    expect(m.judgments).toEqual(whole.judgments);
    expect(merged.stderr).toContain("judged@3 is 0.778 (n=3), below 0.8");
  }, 300_000);
});
