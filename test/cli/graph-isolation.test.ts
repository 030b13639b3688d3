/**
 * A user's graph cannot end, hang or flood the run (docs/reliability.md,
 * "Your graph runs in a thread of its own"; issue 49 item 1), end to end
 * with the real bin (run `npm run build` first) over a graph written the way
 * a user writes one (test/fixtures/graphs/hostile-agent.mjs): process.exit(0)
 * and process.exit(1) in a node, a top-level await that never settles or
 * awaits a long timer, an async factory that never returns, a synchronous
 * loop past the turn deadline and unbounded memory each end the run with
 * exit 2 and one `retrace:` line naming the module and what happened, no
 * report published; console output of the graph never reaches --json's
 * stdout (shown on stderr with --verbose). Each run is killed at 60 s: a
 * hang fails the test as a signal, not as a timed assertion.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli, type CliResult } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const FIXTURES = path.join(ROOT, "test", "fixtures", "graphs");
const GRAPH = path.join(FIXTURES, "hostile-agent.mjs");
const CASES = path.join(FIXTURES, "hostile-cases.jsonl");
const KILL = { timeoutMs: 60_000 };
const LABEL = `--graph ${GRAPH}#graph`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-graph-isolation-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** `retrace eval --graph` over the hostile graph with a gate and two outputs; `extra` after. */
function evalGraph(caseId: string, extra: string[] = [], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(
    [
      "eval",
      "--graph",
      GRAPH,
      "--kb",
      MINI_KB,
      "--cases",
      CASES,
      "-k",
      "3",
      "--case",
      caseId,
      "--gate",
      "min-hit=0.99",
      "--out",
      `json:${path.join(dir, `${caseId}.json`)}`,
      "--out",
      `junit:${path.join(dir, `${caseId}.xml`)}`,
      ...extra,
    ],
    { ...KILL, env },
  );
}

/** The one `retrace:` line of a stopped run. */
function retraceLines(r: CliResult): string[] {
  return r.stderr.split("\n").filter((l) => l.startsWith("retrace:"));
}

/** Exit 2, one `retrace:` line matching `what`, nothing published. */
function expectStopped(r: CliResult, caseId: string, what: RegExp): void {
  expect(r.signal, r.stderr).toBeNull();
  expect(r.exitCode, r.stderr).toBe(2);
  const lines = retraceLines(r);
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(what);
  expect(existsSync(path.join(dir, `${caseId}.json`))).toBe(false);
  expect(existsSync(path.join(dir, `${caseId}.xml`))).toBe(false);
}

describe("eval --graph: your code cannot end the run", () => {
  it("process.exit(0) in a node with a gate: exit 2 naming the module, the call and the turn, never a pass", async () => {
    const r = await evalGraph("en-exit-zero");
    expectStopped(
      r,
      "en-exit-zero",
      /^retrace: --graph .*hostile-agent\.mjs#graph: your code called process\.exit\(0\) at .*hostile-agent\.mjs:\d+:\d+ while running case en-exit-zero turn 0;/,
    );
  });

  it("process.exit(1) in a node: exit 2, never 1 (which means a gate failed)", async () => {
    const r = await evalGraph("en-exit-one");
    expectStopped(r, "en-exit-one", /your code called process\.exit\(1\) .*while running case en-exit-one turn 0/);
  });
});

describe("eval --graph: loading that never finishes", () => {
  it("a top-level await that can never settle: exit 2 at once (not Node's silent exit 13)", async () => {
    const r = await evalGraph("en-ok-001", [], { HOSTILE_LOAD: "tla" });
    expectStopped(
      r,
      "en-ok-001",
      new RegExp(
        `^retrace: ${LABEL.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: loading and building the graph never finished: a top-level await`,
      ),
    );
  });

  it("a top-level await of a long timer: exit 2 at run.loadTimeout", async () => {
    const r = await evalGraph("en-ok-001", ["--config", '{"run":{"loadTimeout":1}}'], { HOSTILE_LOAD: "timer" });
    expectStopped(
      r,
      "en-ok-001",
      /hostile-agent\.mjs#graph: loading and building the graph did not finish within 1 s \(run\.loadTimeout\)/,
    );
  });

  it("an async factory awaiting a long timer: exit 2 at run.loadTimeout", async () => {
    const r = await runCli(
      [
        "eval",
        "--graph",
        `${GRAPH}#slowFactory`,
        "--kb",
        MINI_KB,
        "--cases",
        CASES,
        "--case",
        "en-ok-001",
        "--config",
        '{"run":{"loadTimeout":1}}',
      ],
      KILL,
    );
    expect(r.exitCode, r.stderr).toBe(2);
    expect(retraceLines(r)).toEqual([
      expect.stringMatching(/hostile-agent\.mjs#slowFactory: loading and building the graph did not finish within 1 s/),
    ]);
  });
});

describe("eval --graph: a turn that blocks or grows", () => {
  it("a synchronous loop past run.turnTimeout: the thread is ended, exit 2 naming the turn, never a normal turn", async () => {
    const r = await evalGraph("en-spin", ["--config", '{"run":{"turnTimeout":1}}']);
    expectStopped(
      r,
      "en-spin",
      /hostile-agent\.mjs#graph: case en-spin turn 1 ran past its 1 s deadline \(run\.turnTimeout\) without yielding/,
    );
  });

  it("unbounded memory: exit 2 naming run.graphMemoryMb and the turn (not V8's fatal dump, exit 134)", async () => {
    const r = await evalGraph("en-grow", ["--config", '{"run":{"graphMemoryMb":64}}']);
    expectStopped(
      r,
      "en-grow",
      /hostile-agent\.mjs#graph: ran out of memory while running case en-grow turn 0: its thread may use 64 MB \(run\.graphMemoryMb\)/,
    );
    expect(r.stderr).not.toContain("FATAL ERROR");
  });
});

describe("eval --graph: your code's output", () => {
  const SECRET = "sk-isolation-test-0123456789abcdef";
  const args = (verbose: boolean) => [
    "eval",
    "--graph",
    GRAPH,
    "--kb",
    MINI_KB,
    "--cases",
    CASES,
    "-k",
    "3",
    "--case",
    "en-shout",
    "--json",
    ...(verbose ? ["--verbose"] : []),
  ];

  it("console.log and console.error of the graph never reach --json's stdout: one JSON document, the scores as without them", async () => {
    const r = await runCli(args(false), { ...KILL, env: { HOSTILE_SECRET: SECRET } });
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { turns: { caseId: string; results: { key: string; score: number }[] }[] };
    expect(report.turns.map((t) => t.results.find((x) => x.key === "retrieval_hit_at_k")?.score)).toEqual([1, 1]);
    expect(r.stdout).not.toContain(SECRET);
    expect(r.stderr).not.toContain(SECRET);
  });

  it("with --verbose it is shown on stderr, a line at a time under the module's name, secrets redacted", async () => {
    const r = await runCli(args(true), { ...KILL, env: { HOSTILE_SECRET: SECRET, OPENAI_API_KEY: SECRET } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(() => JSON.parse(r.stdout)).not.toThrow();
    expect(r.stdout).not.toContain("the key is");
    expect(r.stderr).toMatch(/--graph .*hostile-agent\.mjs#graph stdout: the key is /);
    expect(r.stderr).toMatch(/--graph .*hostile-agent\.mjs#graph stderr: stderr: the key is /);
    expect(r.stderr).not.toContain(SECRET);
  });
});
