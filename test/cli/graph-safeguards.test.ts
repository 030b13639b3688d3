/**
 * A misbehaving graph cannot hang, crash silently or grow unnoticed
 * (docs/reliability.md, "A graph that hangs, stalls or grows"; issue 21
 * item 3), end to end with the real bin (run `npm run build` first) over a
 * graph written the way a user writes one (test/fixtures/graphs/misbehaving-agent.mjs):
 * - a node awaiting a promise that never settles drains the event loop:
 *   that turn is an error turn naming the case and turn, the sweep goes on,
 *   the report lists what finished, exit 1 (turn errors gate) — not Node's
 *   silent exit 13;
 * - a node awaiting a 24-day timer: the turn is given up at `--turn-timeout`,
 *   and the process exits although the timer is still pending;
 * - a state above `--max-state-mb` is listed (a warning), never failed;
 * - the report is the same at `--concurrency 1` and 8 (outside `timings`).
 * Each run is killed at 60 s (runCli's timeout): a hang fails the test as a
 * signal, not as a timed assertion.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const FIXTURES = path.join(ROOT, "test", "fixtures", "graphs");
const GRAPH = path.join(FIXTURES, "misbehaving-agent.mjs");
const CASES = path.join(FIXTURES, "misbehaving-cases.jsonl");
const base = ["--kb", MINI_KB, "--cases", CASES, "-k", "3"];
const only = (...ids: string[]) => ids.flatMap((id) => ["--case", id]);
const KILL = { timeoutMs: 60_000 };

type Turn = {
  caseId: string;
  turn: number;
  error?: string;
  givenUp?: string;
  stateBytes?: number;
  results: { key: string; score: number }[];
};
const byId = (report: { turns: Turn[] }) => Object.fromEntries(report.turns.map((t) => [`${t.caseId}#${t.turn}`, t]));
const hit = (t: Turn | undefined) => t?.results.find((r) => r.key === "retrieval_hit_at_k")?.score;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-graph-safeguards-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("eval --graph: a turn that never finishes", () => {
  it("a promise that never settles: an error turn naming case and turn, the sweep goes on, the report lists what finished, exit 1", async () => {
    const junit = path.join(dir, "stall.xml");
    const r = await runCli(
      [
        "eval",
        "--graph",
        GRAPH,
        ...base,
        ...only("en-hang-001", "en-ok-001"),
        "--config",
        '{"run":{"concurrency":1}}',
        "--json",
        "--out",
        `junit:${junit}`,
      ],
      KILL,
    );
    expect(r.signal, r.stderr).toBeNull();
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      "warning: case en-hang-001 turn 1: turn never finished: the event loop drained while it was pending",
    );
    const report = JSON.parse(r.stdout);
    const t = byId(report);
    expect(t["en-hang-001#1"]).toMatchObject({ givenUp: "stalled", results: [] });
    expect(t["en-hang-001#1"]!.error).toMatch(/^turn never finished: the event loop drained/);
    // What finished is scored: the turn before, the turn after (the case goes on) and the other case.
    for (const id of ["en-hang-001#0", "en-hang-001#2", "en-ok-001#0", "en-ok-001#1"]) expect(hit(t[id]), id).toBe(1);
    expect(report.gate.failures).toEqual([
      {
        kind: "turn_errors",
        key: "turn_errors",
        reason: "1 turn threw or was given up (deadline or stall) (allowed: 0, --gate max-errors): en-hang-001#1",
      },
    ]);
    expect(await readFile(junit, "utf8")).toContain('<failure message="turn never finished: the event loop drained');
  });

  it("passes with --max-errors allowing the stalled turn (exit 0)", async () => {
    const r = await runCli(["eval", "--graph", GRAPH, ...base, ...only("en-hang-001"), "--gate", "max-errors=1"], KILL);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain("en-hang-001#1 en");
  });

  it("a 24-day timer: given up at --turn-timeout, the next cases run, and the process exits although the timer is pending", async () => {
    const r = await runCli(
      [
        "eval",
        "--graph",
        GRAPH,
        ...base,
        ...only("en-sleep-001", "en-ok-002"),
        "--config",
        '{"run":{"turnTimeout":1}}',
        "--json",
      ],
      KILL,
    );
    expect(r.signal, r.stderr).toBeNull();
    expect(r.exitCode, r.stderr).toBe(1);
    const report = JSON.parse(r.stdout);
    const t = byId(report);
    expect(t["en-sleep-001#0"]).toMatchObject({
      error: "turn exceeded the 1 s deadline (run.turnTimeout)",
      givenUp: "deadline",
    });
    expect(hit(t["en-ok-002#0"])).toBe(1);
    expect(report.run.graph.turnTimeoutSeconds).toBe(1);
  });

  it("trace --graph gives up the same turn and shows why", async () => {
    const r = await runCli(
      ["trace", "--graph", GRAPH, ...base, "en-sleep-001", "--config", '{"run":{"turnTimeout":0.5}}'],
      KILL,
    );
    expect(r.signal, r.stderr).toBeNull();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain("error: turn exceeded the 0.5 s deadline (run.turnTimeout)");
  });

  it("refuses a deadline that is not a positive number (exit 2), for your graph and for retrace's own, which takes it too", async () => {
    const zero = await runCli(["eval", "--graph", GRAPH, ...base, "--config", '{"run":{"turnTimeout":0}}'], KILL);
    expect(zero.exitCode).toBe(2);
    expect(zero.stderr).toMatch(/run\.turnTimeout/);
    // One rule for every graph: retrace's own graph runs under the same per-turn deadline.
    const ownZero = await runCli(
      ["eval", "--store", "none", "--kb", MINI_KB, "--config", '{"run":{"turnTimeout":0}}'],
      KILL,
    );
    expect(ownZero.exitCode).toBe(2);
    expect(ownZero.stderr).toMatch(/run\.turnTimeout/);
    const own = await runCli(
      ["eval", "--store", "none", "--kb", MINI_KB, "--config", '{"run":{"turnTimeout":5}}'],
      KILL,
    );
    expect(own.exitCode, own.stderr).toBe(0);
    expect(own.stderr).not.toContain("is not used");
  });
});

describe("eval --graph: state size", () => {
  it("lists the turns whose state exceeds --max-state-mb (a warning, not a failure) and records every turn's size", async () => {
    const r = await runCli(
      [
        "eval",
        "--graph",
        `${GRAPH}#bigState`,
        ...base,
        ...only("en-ok-001", "en-ok-002"),
        "--config",
        '{"run":{"maxStateMb":0.5}}',
        "--out",
        `json:${path.join(dir, "big.json")}`,
      ],
      {
        ...KILL,
        env: { BIG_STATE_MB: "1" },
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /warning: 3 turns carried a state above the 0\.5 MB limit \(run.maxStateMb\): en-ok-001#0 1\.0 MB, en-ok-001#1 1\.0 MB, en-ok-002#0 1\.0 MB/,
    );
    const report = JSON.parse(await readFile(path.join(dir, "big.json"), "utf8"));
    expect(report.run.graph).toMatchObject({ maxStateBytes: 2 ** 19, largeStateTurns: 3 });
    for (const t of report.turns as Turn[]) expect(t.stateBytes).toBeGreaterThan(2 ** 20);
  });
});

describe("eval --graph: concurrency", () => {
  it("writes the same report at --concurrency 1 and 8 (outside timings)", async () => {
    const reports: string[] = [];
    for (const c of ["1", "8"]) {
      const out = path.join(dir, `c${c}.json`);
      // kb-mini's own cases plus this file's well-behaved ones (the slow graph never hangs).
      const r = await runCli(
        [
          "eval",
          "--graph",
          `${GRAPH}#slowGraph`,
          "--kb",
          MINI_KB,
          "-k",
          "3",
          "--config",
          JSON.stringify({ run: { concurrency: c } }),
          "--out",
          `json:${out}`,
        ],
        { ...KILL, env: { SLOW_MS: "5" } },
      );
      expect(r.exitCode, r.stderr).toBe(0);
      const { timings: _t, ...rest } = JSON.parse(await readFile(out, "utf8"));
      reports.push(JSON.stringify(rest));
    }
    expect(reports[1]).toBe(reports[0]);
  });
});
