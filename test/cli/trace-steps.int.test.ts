/**
 * `retrace trace CASE` shows every retrieval step of a turn, scored or not,
 * each metric once, and numbers the calls within their step (issue 50):
 * - test/fixtures/graphs/steps-agent.mjs makes a pre-search (step 1, one
 *   KeywordRetriever call, not scored with the default `last`) that ranks the
 *   gold card-freeze 2nd behind a document naming no card, then two parallel
 *   merge calls (step 2, scored) with two child runs each;
 * - a `.ts` graph (examples/custom-retriever.ts, one call a turn) and
 *   retrace's own graph print their metrics on one line.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const GRAPHS = path.join(ROOT, "test", "fixtures", "graphs");

/** The metric lines of a trace: one per turn, none of them repeated in another line. */
function metricsOnce(stdout: string, turns: number): void {
  const lines = stdout.split("\n");
  expect(lines.filter((l) => l.startsWith("metrics: "))).toHaveLength(turns);
  expect(lines.filter((l) => /\bhit=/.test(l))).toHaveLength(turns); // the comment is the metrics line
  expect(stdout).not.toMatch(/retrieval_hit_at_k=/);
}

describe("retrace trace: every step, each metric once, calls numbered within their step", () => {
  it("a graph with an unscored pre-search: step 1 is shown with the gold's rank in it; step 2's calls are #1 and #2", async () => {
    const r = await runCli(
      [
        "trace",
        "en-freeze-001",
        "--graph",
        path.join(GRAPHS, "steps-agent.mjs"),
        "--kb",
        MINI_KB,
        "-k",
        "3",
        "--turn",
        "0",
      ],
      { timeoutMs: 120_000 },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const out = r.stdout;
    const step1 = out.indexOf("  step 1 of 2, not scored (1 call):");
    const step2 = out.indexOf("  step 2 of 2, scored (2 calls overlapping in time):");
    expect(step1, out).toBeGreaterThan(0);
    expect(step2).toBeGreaterThan(step1);
    // The pre-search's list: the gold card 2nd (what the scored lists alone would hide).
    expect(out.slice(step1, step2)).toMatch(
      / {4}#1 KeywordRetriever \(2 cards\):\n.*\n {8}2 {2}card-freeze {3}<- gold\n/,
    );
    // Step 2: the calls numbered from #1 within the step (their keys count #2.. over the turn), child lists under their call's number.
    const inStep2 = out.slice(step2).split("\n");
    const numbered = inStep2.filter((l) => /^ {4}#\d/.test(l)).map((l) => l.trim().split(" ")[0]);
    expect(numbered).toEqual(["#1", "#1", "#1", "#2", "#2", "#2"]);
    expect(inStep2.filter((l) => /^ {4}#\d (?!child)/.test(l))).toHaveLength(2); // the two calls
    // The gold explanation names the calls as the listing does (#1/#2 within step 2), never by the turn-wide keys (KeywordRetriever#4).
    const explained = out.split("\n").find((l) => l.startsWith("  HIT  card-freeze: step 2, 2 parallel calls: "))!;
    expect(explained, out).toMatch(
      /^ {2}HIT {2}card-freeze: step 2, 2 parallel calls: 1st in #1 child KeywordRetriever, absent from #1 child KeywordRetriever \(1 listed\), 1st from #1 Merge.*, absent from #2 child KeywordRetriever \(0 listed\), absent from #2 child KeywordRetriever \(2 listed\), absent from #2 Merge.* \(2 listed\); retrieved at rank 1 of the top-3$/,
    );
    expect(out).not.toMatch(/KeywordRetriever#\d/);
    metricsOnce(out, 1);
  }, 120_000);

  it("a .ts graph (under tsx): metrics once", async () => {
    const r = await runCli(
      ["trace", "en-freeze-001", "--graph", path.join(ROOT, "examples", "custom-retriever.ts"), "--kb", MINI_KB],
      { env: { RETRACE_EXAMPLE_KB: MINI_KB }, timeoutMs: 120_000 },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    metricsOnce(r.stdout, 2);
  }, 120_000);

  it("retrace's own graph: metrics once, the answer side after the retrieval comment", async () => {
    const r = await runCli(["trace", "en-freeze-001", "--kb", MINI_KB, "--store", "memory"], { timeoutMs: 120_000 });
    expect(r.exitCode, r.stderr).toBe(0);
    metricsOnce(r.stdout, 2);
    expect(r.stdout).toMatch(/^metrics: hit=1 .* top5=\[[^\]]*\] {2}\S+=/m);
  }, 120_000);
});
