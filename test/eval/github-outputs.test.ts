/**
 * The pure parts of issue 26's CI outputs: workflow-command escaping, the
 * annotations of a gated report, the PR comment's size bound on a 5,000-turn
 * run, the quarantine file and what the gate does with it, and the run
 * differences `retrace compare` prints.
 */
import { describe, expect, it } from "vitest";
import { DataValidationError } from "../../src/errors.js";
import { baselineFromReport } from "../../src/eval/gate/baseline.js";
import { gate } from "../../src/eval/gate/gate.js";
import { annotationLines, escapeData, escapeProperty, workflowCommand } from "../../src/eval/gate/github.js";
import { GITHUB_COMMENT_LIMIT, renderPrComment } from "../../src/eval/report/render/pr-comment.js";
import { referenceComparison } from "../../src/eval/gate/compare.js";
import { parseQuarantine } from "../../src/eval/gate/quarantine.js";
import { runDifferences } from "../../src/eval/gate/run-diff.js";
import { flipLines } from "../../src/eval/report/render/compare-text.js";
import { HIT_KEY } from "../../src/eval/measures/metrics.js";
import type { Report, TurnReport } from "../../src/eval/report/types.js";
import { fixtureReport, ROWS } from "./report-fixture.js";

const INDEX = new Map([
  ["g1", { line: 3, turns: 2 }],
  ["g2", { line: 5, turns: 2 }],
  ["adv1", { line: 8, turns: 2 }],
  ["g3", { line: 9, turns: 1 }],
]);

/** The fixture's baseline with hit@k set to 1 on g2#1 (a miss now): one hit→miss flip. */
function betterBaseline(report: Report) {
  const b = baselineFromReport(report);
  b.perTurn["g2#1"]![HIT_KEY] = 1;
  return b;
}

describe("workflow commands", () => {
  it("escape %, CR and LF in the message, and also : and , in properties (GitHub's rules)", () => {
    expect(escapeData("50% done\r\nnext: a,b")).toBe("50%25 done%0D%0Anext: a,b");
    expect(escapeProperty("a:b,c%\n")).toBe("a%3Ab%2Cc%25%0A");
    expect(
      workflowCommand(
        "error",
        { file: "kb/eval/cases.jsonl", line: 7, title: "x: y, z", col: undefined },
        "line1\nline2 100%",
      ),
    ).toBe("::error file=kb/eval/cases.jsonl,line=7,title=x%3A y%2C z::line1%0Aline2 100%25");
  });

  it("annotate each gate failure and each hit→miss flip at its case's line", async () => {
    const report = await fixtureReport();
    report.gate = gate(report, { minHit: 0.9, maxFlips: 0, maxDrop: 1 }, betterBaseline(report)); // drops tolerated: only the floor and the flip fail
    const lines = annotationLines(report, { casesFile: "kb/eval/cases.jsonl", index: INDEX });
    // hit@3 mean 3/4 < 0.9 (floor) and one flip (g2#1) > 0 allowed: two failures, then the flip.
    expect(report.gate.failures.map((f) => f.kind)).toEqual(["floor", "flips"]);
    expect(lines).toHaveLength(3);
    for (const l of lines) expect(l).toMatch(/^::error file=kb\/eval\/cases\.jsonl(,line=\d+)?,title=[^:\n]+::[^\n]+$/);
    expect(lines[0]).not.toContain("line="); // a floor is about the whole run
    expect(lines[1]).toContain(",line=5,"); // the flips failure concerns one case: g2, line 5
    expect(lines[2]).toMatch(
      /^::error file=kb\/eval\/cases\.jsonl,line=5,title=retrace%3A hit@3 1 → 0 at g2#1::hit→miss against the baseline: g2#1 /,
    );
  });

  it("nothing for an ungated report", async () => {
    expect(annotationLines(await fixtureReport(), { casesFile: "c.jsonl", index: INDEX })).toEqual([]);
  });
});

describe("the PR comment", () => {
  it("stays under GitHub's 65,536 characters for a 5,000-turn run with 2,500 flips, cutting lists with 'and N more'", async () => {
    const base = await fixtureReport();
    const proto = base.turns[1]!; // g1#1: a hit
    const turns: TurnReport[] = Array.from({ length: 5000 }, (_, i) => ({
      ...structuredClone(proto),
      caseId: `case-with-a-rather-long-identifier-${String(Math.floor(i / 4)).padStart(5, "0")}`,
      turn: i % 4,
      user: `a long question ${"x".repeat(400)}`,
      // every other turn now misses
      results: proto.results.map((r) =>
        i % 2 === 1 &&
        [
          HIT_KEY,
          "retrieval_recall_at_k",
          "retrieval_ndcg_at_k",
          "retrieval_mrr_at_k",
          "retrieval_precision_at_k",
        ].includes(r.key)
          ? { ...r, score: 0 }
          : r,
      ),
    }));
    const report: Report = { ...base, turns };
    const baseline = baselineFromReport({ ...report, turns: turns.map((t) => ({ ...t, results: proto.results })) });
    report.gate = gate(report, { maxFlips: 0 }, baseline);
    const body = renderPrComment(report, {
      comparison: referenceComparison(report, { file: "kb/eval/baseline.json", data: baseline }, { seed: 42 }),
    });
    expect(body.length).toBeLessThan(GITHUB_COMMENT_LIMIT);
    expect(body).toContain("**Gate: ❌ FAIL**");
    expect(body).toContain("hit@3 flips: 2500 hit→miss, 0 miss→hit");
    expect(body).toContain("… and 2480 more hit→miss turns");
    expect(body).toMatch(/\| hit@3 \| 1\.000 \| 0\.500 \| \*\*−0\.500\*\* \|/);
  });

  it("without a reference: the verdict and the metrics, no deltas", async () => {
    const report = await fixtureReport();
    report.gate = gate(report, {});
    const body = renderPrComment(report, { comparison: null });
    expect(body).toContain("No reference run: no deltas");
    expect(body).toContain("| hit@3 | 0.750 |");
  });
});

describe("the quarantine file", () => {
  it("parses caseId#turn, a tab or spaces, a reason; # comments and blank lines skipped", () => {
    const q = parseQuarantine("# flaky\n\ng2#1\tLLM rewrite varies\n  adv1#0   reranker ties  \n", "q.txt", INDEX);
    expect(q.entries).toEqual([
      { caseId: "g2", turn: 1, reason: "LLM rewrite varies", line: 3 },
      { caseId: "adv1", turn: 0, reason: "reranker ties", line: 4 },
    ]);
  });

  it("refuses unknown cases and turns, a missing reason and duplicates, naming file and line", () => {
    const bad = () => parseQuarantine("nope#0 x\ng3#1 y\ng1#0\ng1#1 a\ng1#1 b\ng1 z\n", "q.txt", INDEX);
    expect(bad).toThrow(DataValidationError);
    const issues = (() => {
      try {
        bad();
      } catch (e) {
        return (e as DataValidationError).issues.map((i) => `${i.line}:${i.field ?? ""}`);
      }
      return [];
    })();
    expect(issues).toEqual(["1:caseId", "2:turn", "3:reason", "5:", "6:"]);
  });

  it("keeps the turns in the report but out of floors, drops and flips, and says how many", async () => {
    const report = await fixtureReport();
    const baseline = betterBaseline(report);
    const q = parseQuarantine("g2#1 known flaky\ng3#0 not scored but listed\n", "q.txt", INDEX);
    const without = gate(report, { minHit: 0.9, maxFlips: 0 }, baseline);
    const withQ = gate(report, { minHit: 0.9, maxFlips: 0, quarantine: q }, baseline);
    expect(without.passed).toBe(false);
    // hit@3 over g1#0, g1#1, adv1#0 = 3/3 ≥ 0.9; the flip was g2#1; drops: both sides over the same 3 turns.
    expect(withQ.passed).toBe(true);
    expect(withQ.checks?.find((c) => c.kind === "floor")).toMatchObject({ observed: 1, n: 3 });
    expect(withQ.flips).toEqual([]);
    expect(withQ.quarantine).toEqual({
      file: "q.txt",
      listed: 2,
      count: 2,
      turns: [
        { caseId: "g2", turn: 1, locale: "es-419", reason: "known flaky" },
        { caseId: "g3", turn: 0, locale: "en", reason: "not scored but listed" },
      ],
    });
    expect(report.turns).toHaveLength(ROWS.length); // the report keeps every turn
  });
});

describe("run differences", () => {
  it("lists every run property that differs, with readable names, merging locales that differ alike", async () => {
    const a = await fixtureReport();
    const b = await fixtureReport({ embedder: "builtin-x", k: 3 });
    const cfg = { denseK: 20, bm25K: 20, fusion: { method: "rrf", params: { k: 60 } } };
    a.run.retrieval = { en: cfg, de: cfg };
    b.run.retrieval = { en: { ...cfg, denseK: 30 }, de: { ...cfg, denseK: 30 } };
    (b.run as Record<string, unknown>).someFutureSetting = "on"; // a field added later shows up without code changes
    const d = runDifferences(a, b);
    expect(d.map((x) => x.name)).toEqual(["embedder", "retrieval settings [en, de]: dense k", "some future setting"]);
    expect(d[1]).toMatchObject({ path: "run.retrieval.{en,de}.denseK", a: 20, b: 30 });
    // A baseline records fewer properties: only those it has are compared.
    expect(runDifferences(baselineFromReport(a), b).map((x) => x.name)).toEqual(["embedder"]);
  });

  it("a --graph run's largest state size is no difference (it moves with every message's text); the turns above the limit are an outcome", async () => {
    const a = await fixtureReport();
    const b = await fixtureReport();
    const graph = {
      file: "g.mjs",
      exportName: "graph",
      idKey: "metadata.id",
      retrievalCall: "last" as const,
      retrievers: ["R"],
      errors: 0,
      noRetrieval: 0,
      largestStateBytes: 4283,
      largeStateTurns: 0,
    };
    (a.run as Record<string, unknown>).graph = graph;
    (b.run as Record<string, unknown>).graph = { ...graph, largestStateBytes: 4259, largeStateTurns: 1 };
    const d = runDifferences(a, b);
    expect(d.map((x) => x.path)).toEqual(["run.graph.largeStateTurns"]);
    expect(d[0]!.outcome).toBe(true);
  });
});

describe("retrace compare's flip lines", () => {
  it("name each turn caseId#turn, as every other output does", () => {
    const lines = flipLines(
      {
        hitToMiss: 1,
        missToHit: 0,
        turns: [{ id: "bk-group-010#0", caseId: "bk-group-010", turn: 0, locale: "en", direction: "hit→miss" }],
      },
      5,
    );
    expect(lines).toEqual([
      "hit@5 flips: 1 hit→miss, 0 miss→hit (turns scored in both runs)",
      "  hit→miss:",
      "    bk-group-010#0  en",
    ]);
  });
});
