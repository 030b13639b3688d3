/**
 * A `--judge` or `--generator` module cannot end, hang or flood the run
 * (docs/reliability.md, "Your graph runs in a thread of its own"; issue 49
 * item 1): it runs in a thread of its own, as a `--graph` does. End to end
 * with the real bin (run `npm run build` first) over modules written to
 * misbehave (test/fixtures/judge/hostile-judge.mjs,
 * test/fixtures/synthetic/hostile-generator.mjs). Before, process.exit(0) in
 * a judge ended retrace with exit 0 and no report (a false pass), a
 * synchronous loop hung the run past every deadline, and the judge's
 * console.log landed in --json's stdout. Each run is killed at 60 s: a hang
 * fails the test as a signal, not as a timed assertion.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli, type CliResult } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const JUDGE = path.join(ROOT, "test", "fixtures", "judge", "hostile-judge.mjs");
const GENERATOR = path.join(ROOT, "test", "fixtures", "synthetic", "hostile-generator.mjs");
const KILL = { timeoutMs: 60_000 };
const SECRET = "sk-hostilejudge0123456789abcdef";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-module-isolation-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** `retrace eval` (retrace's own graph, in memory) with the hostile judge in `mode`, a gate, a JSON output. */
function evalWithJudge(mode: string, extra: string[] = []): Promise<CliResult> {
  return runCli(
    [
      "eval",
      "--kb",
      MINI_KB,
      "--store",
      "memory",
      "--config",
      JSON.stringify({ run: { judge: JUDGE, judgeCache: path.join(dir, `cache-${mode}`), turnTimeout: 2 } }),
      "--gate",
      "min-hit=0.01",
      "--out",
      `json:${path.join(dir, `${mode}.json`)}`,
      ...extra,
    ],
    { ...KILL, cwd: dir, env: { HOSTILE_JUDGE: mode, OPENAI_API_KEY: SECRET } },
  );
}

function synth(mode: string, extra: string[] = []): Promise<CliResult> {
  return runCli(
    [
      "cases",
      "synth",
      "--kb",
      MINI_KB,
      "--generator",
      GENERATOR,
      "--n",
      "2",
      "--out",
      path.join(dir, `${mode}.jsonl`),
      ...extra,
    ],
    { ...KILL, cwd: dir, env: { HOSTILE_GENERATOR: mode } },
  );
}

/** Exit `code`, one `retrace:` line matching `what`, nothing written. */
function expectStopped(r: CliResult, out: string, what: RegExp, code = 2): void {
  expect(r.signal, r.stderr).toBeNull();
  expect(r.exitCode, r.stderr).toBe(code);
  const lines = r.stderr.split("\n").filter((l) => l.startsWith("retrace:"));
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(what);
  expect(existsSync(path.join(dir, out))).toBe(false);
}

describe("eval --judge: the judge's code cannot end, hang or flood the run", () => {
  it("process.exit(0) in the judge's invoke: exit 2 naming the module and the call, never a pass", async () => {
    const r = await evalWithJudge("exit0");
    expectStopped(
      r,
      "exit0.json",
      /--judge .*hostile-judge\.mjs: your code called process\.exit\(0\) at .*hostile-judge\.mjs:\d+:\d+ during judge call 1/,
    );
  });

  it("process.exit(1): exit 2, never 1 (which means a gate failed)", async () => {
    const r = await evalWithJudge("exit1");
    expectStopped(r, "exit1.json", /your code called process\.exit\(1\)/);
  });

  it("process.exit while the module loads: exit 2 naming the module", async () => {
    const r = await evalWithJudge("load-exit");
    expectStopped(
      r,
      "load-exit.json",
      /--judge .*hostile-judge\.mjs: your code called process\.exit\(0\) .*while loading it/,
    );
  });

  it("a top-level await that can never settle: exit 2 at once (not Node's silent exit 13)", async () => {
    const r = await evalWithJudge("tla-never");
    expectStopped(
      r,
      "tla-never.json",
      /--judge .*hostile-judge\.mjs: loading the module never finished: a top-level await/,
    );
  });

  it("a synchronous loop in invoke: the thread is ended past run.turnTimeout, exit 2", async () => {
    const r = await evalWithJudge("loop");
    expectStopped(
      r,
      "loop.json",
      /judge call 1 ran past its 2 s deadline \(run\.turnTimeout\) without yielding to the event loop/,
    );
  });

  it("an invoke that never answers: exit 3 (the judge model did not answer), at run.turnTimeout", async () => {
    const r = await evalWithJudge("hang");
    expectStopped(r, "hang.json", /the judge model did not answer judge call 1 within 2 s \(run\.turnTimeout\)/, 3);
  });

  it("console.log of the judge never reaches --json's stdout; with --verbose it is on stderr, redacted", async () => {
    const quiet = await evalWithJudge("", ["--json"]);
    expect(quiet.exitCode, quiet.stderr).toBe(0);
    expect(() => JSON.parse(quiet.stdout) as unknown).not.toThrow();
    expect(quiet.stdout).not.toContain("judge says");
    expect(quiet.stderr).not.toContain("judge says");
    await rm(path.join(dir, "cache-"), { recursive: true, force: true });
    await rm(path.join(dir, ".json"), { force: true });
    const loud = await evalWithJudge("", ["--json", "--verbose"]);
    expect(loud.exitCode, loud.stderr).toBe(0);
    expect(() => JSON.parse(loud.stdout) as unknown).not.toThrow();
    expect(loud.stderr).toMatch(/--judge .*hostile-judge\.mjs stdout: judge says OPENAI_API_KEY=\*\*\*/);
    expect(loud.stderr + loud.stdout).not.toContain(SECRET);
  });
});

describe("cases synth --generator: the generator's code cannot end or hang the run", () => {
  it("process.exit(0) in the generator: exit 2 naming the module and the card, no cases written", async () => {
    const r = await synth("exit0");
    expectStopped(
      r,
      "exit0.jsonl",
      /--generator .*hostile-generator\.mjs: your code called process\.exit\(0\) at .*hostile-generator\.mjs:\d+:\d+ during its call on card /,
    );
  });

  it("a top-level await that can never settle: exit 2 at once", async () => {
    const r = await synth("tla-never");
    expectStopped(r, "tla-never.jsonl", /--generator .*hostile-generator\.mjs: loading the module never finished/);
  });

  it("turns that are not plain data: exit 2 naming the module", async () => {
    const r = await synth("fn");
    expectStopped(
      r,
      "fn.jsonl",
      /--generator .*hostile-generator\.mjs: returned a value that cannot be passed on as plain data/,
    );
  });

  it("a synchronous loop in a call: exit 2 at the run.callTimeout deadline, named", async () => {
    const r = await synth("loop", ["--config", '{"run":{"callTimeout":1}}']);
    expectStopped(
      r,
      "loop.jsonl",
      /--generator .*hostile-generator\.mjs: its call on card \S+ ran past its 1 s deadline \(run\.callTimeout\) without yielding/,
    );
  });

  it("a generator that needs longer than run.callTimeout allows: exit 2 naming the setting; given more, it writes", async () => {
    const short = await synth("slow", ["--config", '{"run":{"callTimeout":0.5}}']);
    expectStopped(
      short,
      "slow.jsonl",
      /--generator .*hostile-generator\.mjs: its call on card \S+ did not finish within 0\.5 s \(run\.callTimeout\)/,
    );
    const long = await synth("slow", ["--config", '{"run":{"callTimeout":30}}']);
    expect(long.exitCode, long.stderr).toBe(0);
    expect(existsSync(path.join(dir, "slow.jsonl"))).toBe(true);
  });

  it("run.callTimeout is checked, and is a setting of cases synth only", async () => {
    const zero = await synth("", ["--config", '{"run":{"callTimeout":0}}']);
    expect(zero.exitCode).toBe(2);
    expect(zero.stderr).toContain('Expected `run.callTimeout` to be a number > 0 (seconds), got "0"');
    const turn = await synth("", ["--config", '{"run":{"turnTimeout":3}}']);
    expect(turn.exitCode).toBe(2);
    expect(turn.stderr).toContain("field `run.turnTimeout` not a setting of retrace cases synth");
  });

  it("a well-behaved generator still writes its cases, its console.log kept off stdout", async () => {
    const r = await synth("");
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).not.toContain("generator chatter");
    expect(existsSync(path.join(dir, ".jsonl"))).toBe(true);
  });
});
