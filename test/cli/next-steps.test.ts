/**
 * Every run ends with the next useful command (src/cli/next-steps.ts), and
 * each printed command works when run exactly as printed: trace the first
 * missed turn, open the report in a browser, record a baseline, then gate on
 * it. Through the real bin, retrace's own graph on the mini KB (store
 * `memory`) and a user-style graph (test/fixtures/graphs/kb-agent.mjs).
 */
import { existsSync } from "node:fs";
import { cp, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir("next-steps")));
afterAll(async () => cleanup());

/** The "Next:" lines of a run's stderr, each as "what: command". */
function nextLines(stderr: string): { what: string; command: string[] }[] {
  const lines = stderr.split("\n");
  const at = lines.findIndex((l) => l.startsWith("Next: "));
  if (at < 0) return [];
  const block = [
    lines[at]!.slice("Next: ".length),
    ...lines
      .slice(at + 1)
      .filter((l) => l.startsWith("      "))
      .map((l) => l.trim()),
  ];
  return block.map((l) => {
    const i = l.indexOf(": npx retrace ");
    return { what: l.slice(0, i < 0 ? l.length : i), command: i < 0 ? [] : l.slice(i + 2).split(" ") };
  });
}

/** Runs a printed `npx retrace …` line with the real bin (the paths here need no quoting). */
const runPrinted = (command: string[], cwd: string) => {
  expect(command.slice(0, 2)).toEqual(["npx", "retrace"]);
  return runCli(command.slice(2), { cwd, env: { KB_AGENT_KB: MINI_KB } });
};

describe("the Next: lines", () => {
  it("retrace's own graph: trace the missed turn, open the HTML, record then gate a baseline — each runs as printed", async () => {
    // A copy of the mini KB: the printed --update-baseline writes <kb>/eval/baseline.json.
    const kb = path.join(dir, "kb");
    await cp(MINI_KB, kb, { recursive: true });
    const cases = path.join(dir, "cases.jsonl");
    // Mortgages are in no card: the gold card cannot be retrieved at k=1, so the turn is a miss.
    await writeFile(
      cases,
      `${JSON.stringify({ id: "en-miss-001", locale: "en", kind: "golden", turns: [{ user: "do you offer mortgages?", must_cite_one_of: ["refund-timelines"], expect: "answer" }] })}\n`,
    );
    const baseline = path.join(kb, "eval", "baseline.json");
    const r = await runCli(["eval", "--kb", kb, "--cases", cases, "--store", "memory", "-k", "1"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const next = nextLines(r.stderr);
    expect(next.map((n) => n.what)).toEqual([
      "trace the first missed turn stage by stage",
      "see every turn in a browser",
      "record this run as the baseline to gate on",
      "evaluate your own LangGraph.js graph: see docs/your-graph-in-five-minutes.md",
    ]);
    expect(next[0]!.command).toEqual([
      "npx",
      "retrace",
      "trace",
      "en-miss-001",
      "--turn",
      "0",
      "--kb",
      kb,
      "--cases",
      cases,
      "--store",
      "memory",
      "-k",
      "1",
    ]);
    const trace = await runPrinted(next[0]!.command, dir);
    expect(trace.exitCode, trace.stderr).toBe(0);
    expect(trace.stdout).toContain("do you offer mortgages?");
    const html = await runPrinted(next[1]!.command, dir);
    expect(html.exitCode, html.stderr).toBe(0);
    expect(existsSync(path.join(dir, "report.html"))).toBe(true);
    const record = await runPrinted(next[2]!.command, dir);
    expect(record.exitCode, record.stderr).toBe(0);
    expect(existsSync(baseline)).toBe(true);
    const gate = nextLines(record.stderr).find((n) =>
      n.what.startsWith("gate later runs on the baseline just written"),
    );
    expect(gate?.command).toEqual([
      "npx",
      "retrace",
      "eval",
      "--kb",
      kb,
      "--cases",
      cases,
      "--store",
      "memory",
      "-k",
      "1",
      "--gate",
      "max-drop=auto",
      "--gate",
      "max-flips=0",
    ]);
    const gated = await runPrinted(gate!.command, dir);
    expect(gated.exitCode, gated.stderr).toBe(0);
    expect(gated.stdout).toMatch(/^gate: PASS$/m);
  }, 120_000);

  it("a --graph run repeats its graph and data options, not the defaults, and never suggests --graph again", async () => {
    const graph = path.join(ROOT, "test", "fixtures", "graphs", "kb-agent.mjs");
    const r = await runCli(["eval", "--graph", graph, "--kb", MINI_KB], { env: { KB_AGENT_KB: MINI_KB } });
    expect(r.exitCode, r.stderr).toBe(0);
    const next = nextLines(r.stderr);
    expect(next.map((n) => n.what)).not.toContain("evaluate your own LangGraph.js graph");
    expect(next.find((n) => n.what === "see every turn in a browser")?.command).toEqual([
      "npx",
      "retrace",
      "eval",
      "--graph",
      graph,
      "--kb",
      MINI_KB,
      "--out",
      "html:report.html",
    ]);
  }, 60_000);

  it("--json keeps stdout the report alone (the Next: lines are on stderr)", async () => {
    const r = await runCli(["eval", "--kb", MINI_KB, "--store", "memory", "--json"]);
    expect(r.exitCode).toBe(0);
    expect(() => JSON.parse(r.stdout)).not.toThrow();
    expect(r.stderr).toContain("Next: ");
  }, 60_000);
});
