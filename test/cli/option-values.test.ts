/**
 * Option values through the real bin (docs/gates-and-exit-codes.md, "Options"):
 * numeric errors echo the text typed and the true range; an unknown case id is
 * refused before any store starts (CHROMA_URL points where nothing listens,
 * and a local store's data dir must not appear); `run.maxCardBytes` wins over
 * RETRACE_MAX_CARD_BYTES and a card over the limit names its size, the limit
 * and both ways to raise it. Nothing here starts Chroma.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const DEAD_STORE = { CHROMA_URL: "http://127.0.0.1:9" };
let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("option-values"));
});
afterAll(async () => cleanup());

describe("numeric option errors", () => {
  it("trace --turn: the text given and the case's real range (0-based; en-freeze-001 has 2 turns)", async () => {
    for (const raw of ["-3", "abc"]) {
      const r = await runCli(
        ["trace", "en-freeze-001", "--kb", MINI_KB, "--config", '{"retrieval":{"embedder":"builtin"}}', "--turn", raw],
        { env: DEAD_STORE },
      );
      expect(r.exitCode, raw).toBe(2);
      expect(r.stderr).toContain(
        `Expected \`--turn\` to be an integer from 0 to 1 (0-based; case en-freeze-001 has 2 turns), got "${raw}"`,
      );
      expect(r.stderr).not.toMatch(/Chroma|127\.0\.0\.1:9/); // checked before any store is opened
    }
  });

  it("eval --max-drop, compare --seed and score -k echo the value and the range", async () => {
    const cases: Array<[string[], string]> = [
      [["eval", "--gate", "max-drop=1.5"], 'Expected `--gate max-drop` to be a number from 0 to 1, got "1.5"'],
      [
        ["compare", "a", "b", "--config", '{"run":{"seed":-1}}'],
        'Expected `run.seed` to be an integer from 0 to 4294967295, got "-1"',
      ],
      [
        ["score", "--qrels", "q", "--run", "r", "-k", "5,0"],
        'Expected `-k` to be a comma-separated list of positive integers, got "5,0"',
      ],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args, { cwd: dir });
      expect(r.exitCode, args.join(" ")).toBe(2);
      expect(r.stderr).toContain(message);
    }
  });
});

describe("eval run.workers (--config)", () => {
  it("takes auto or an integer from 1 to 64, echoing anything else", async () => {
    for (const raw of ["0", "65", "two", "1.5"]) {
      const r = await runCli(["eval", "--kb", MINI_KB, "--config", JSON.stringify({ run: { workers: raw } })], {
        cwd: dir,
        env: DEAD_STORE,
      });
      expect(r.exitCode, raw).toBe(2);
      expect(r.stderr).toContain(
        `--config: field \`run.workers\` Expected \`run.workers\` to be auto or an integer from 1 to 64, got "${raw}"`,
      );
    }
  });

  it("is refused with --judge (exit 2, before any store starts) and with --graph", async () => {
    const judge = await runCli(
      [
        "eval",
        "--kb",
        MINI_KB,
        "--config",
        '{"retrieval":{"embedder":"builtin"}}',
        "--config",
        '{"run":{"workers":2}}',
        "--config",
        '{"run":{"judge":"./no-such-judge.mjs"}}',
      ],
      { cwd: dir, env: DEAD_STORE },
    );
    expect(judge.exitCode).toBe(2);
    expect(judge.stderr).toContain("Expected `run.workers` to be 1 with run.judge");
    expect(judge.stderr).not.toMatch(/127\.0\.0\.1:9/);
    const graph = await runCli(
      ["eval", "--graph", "./no-such-graph.mjs", "--catalog", "c.jsonl", "--config", '{"run":{"workers":2}}'],
      { cwd: dir },
    );
    expect(graph.exitCode).toBe(2);
    expect(graph.stderr).toContain("setting 'run.workers' of --config is not used with --graph");
  });

  it("runs a store-less sweep on 2 threads with the single thread's report", async () => {
    const run = (workers: string) =>
      runCli(
        [
          "eval",
          "--kb",
          MINI_KB,
          "--store",
          "none",
          "--json",
          "--config",
          JSON.stringify({ run: { workers: workers } }),
        ],
        { cwd: dir },
      );
    const one = await run("1");
    const two = await run("auto");
    expect(one.exitCode, one.stderr).toBe(0);
    expect(two.exitCode, two.stderr).toBe(0);
    const strip = (out: string) => JSON.stringify({ ...JSON.parse(out), timings: null });
    expect(strip(two.stdout)).toBe(strip(one.stdout));
    expect(JSON.parse(one.stdout).turns.length).toBeGreaterThan(0);
  });
});

describe("an unknown case id is refused before any store starts or anything is ingested", () => {
  it("trace (remote store unreachable; a local store's data dir never created)", async () => {
    const remote = await runCli(
      ["trace", "no-such-case", "--kb", MINI_KB, "--config", '{"retrieval":{"embedder":"builtin"}}'],
      { env: DEAD_STORE },
    );
    expect(remote.exitCode).toBe(2);
    expect(remote.stderr).toContain("Expected `CASE_ID` to be the id of a case in");
    expect(remote.stderr).toContain('got "no-such-case"');
    const dataDir = path.join(dir, "trace-data");
    const local = await runCli([
      "trace",
      "no-such-case",
      "--kb",
      MINI_KB,
      "--config",
      '{"retrieval":{"embedder":"builtin"}}',
      "--store",
      "local",
      "--data-dir",
      dataDir,
    ]);
    expect(local.exitCode).toBe(2);
    expect(existsSync(dataDir)).toBe(false);
  });

  it("start --case and eval --graph --case (the graph module is never loaded)", async () => {
    const dataDir = path.join(dir, "start-data");
    const start = await runCli(
      [
        "start",
        "--kb",
        MINI_KB,
        "--config",
        '{"retrieval":{"embedder":"builtin"}}',
        "--data-dir",
        dataDir,
        "--case",
        "no-such-case",
      ],
      { env: { CHROMA_URL: "" } },
    );
    expect(start.exitCode).toBe(2);
    expect(start.stderr).toContain('Expected `--case` to be the id of a case in the dataset, got "no-such-case"');
    expect(existsSync(dataDir)).toBe(false);
    const graph = await runCli([
      "eval",
      "--graph",
      path.join(dir, "missing-graph.mjs"),
      "--kb",
      MINI_KB,
      "--case",
      "no-such-case",
    ]);
    expect(graph.exitCode).toBe(2);
    expect(graph.stderr).toContain('Expected `--case` to be the id of a case in the dataset, got "no-such-case"');
  });
});

describe("run.maxCardBytes", () => {
  const card = path.join(MINI_KB, "cards", "en", "card-freeze.md"); // 382 bytes
  it("a card over the limit: its path, size, the limit, who set it, and both ways to raise it", async () => {
    const r = await runCli(["check", "--kb", MINI_KB, "--config", '{"run":{"maxCardBytes":300}}']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `${card}: the file is 382 bytes, over the limit of 300 bytes (set by run.maxCardBytes); raise the limit with the setting run.maxCardBytes (--config '{"run":{"maxCardBytes":N}}' or the project file) or RETRACE_MAX_CARD_BYTES=N (the setting wins)`,
    );
    const env = await runCli(["check", "--kb", MINI_KB], { env: { RETRACE_MAX_CARD_BYTES: "300" } });
    expect(env.exitCode).toBe(2);
    expect(env.stderr).toContain("over the limit of 300 bytes (set by RETRACE_MAX_CARD_BYTES)");
  });

  it("the setting wins over the environment, both ways; a bad environment value is exit 2", async () => {
    const raised = await runCli(["check", "--kb", MINI_KB, "--config", '{"run":{"maxCardBytes":100000}}'], {
      env: { RETRACE_MAX_CARD_BYTES: "300" },
    });
    expect(raised.exitCode).toBe(0);
    const lowered = await runCli(["check", "--kb", MINI_KB, "--config", '{"run":{"maxCardBytes":300}}'], {
      env: { RETRACE_MAX_CARD_BYTES: "100000" },
    });
    expect(lowered.exitCode).toBe(2);
    const bad = await runCli(["check", "--kb", MINI_KB], { env: { RETRACE_MAX_CARD_BYTES: "1MB" } });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('Expected `RETRACE_MAX_CARD_BYTES` to be a positive integer (bytes), got "1MB"');
    const zero = await runCli(["ingest", "--kb", MINI_KB, "--config", '{"run":{"maxCardBytes":0}}']);
    expect(zero.exitCode).toBe(2);
    expect(zero.stderr).toContain('Expected `run.maxCardBytes` to be a positive integer, got "0"');
  });

  it("trace and eval read it too, before any store starts", async () => {
    for (const args of [["trace", "en-freeze-001"], ["eval"]]) {
      const r = await runCli(
        [
          ...args,
          "--kb",
          MINI_KB,
          "--config",
          '{"retrieval":{"embedder":"builtin"}}',
          "--config",
          '{"run":{"maxCardBytes":300}}',
        ],
        { env: DEAD_STORE },
      );
      expect(r.exitCode, args[0]).toBe(2);
      expect(r.stderr).toContain("over the limit of 300 bytes (set by run.maxCardBytes)");
    }
  });
});
