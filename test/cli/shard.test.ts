/**
 * `--shard` and `retrace merge` through the real bin, offline: option errors
 * exit 2 before anything starts (CHROMA_URL points at a port where nothing
 * listens, so a store opened too early would exit 3), and a store-less
 * sharded run of the mini KB merges into the unsharded store-less report.
 * The store-backed equality is test/cli/shard.int.test.ts.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportToJSON } from "../../src/eval/report/render.js";
import { withoutTimings } from "../../src/eval/report/timings.js";
import type { Report } from "../../src/eval/report/types.js";
import { tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const DEAD_STORE = { CHROMA_URL: "http://127.0.0.1:9" };
let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("shard-cli"));
});
afterAll(async () => cleanup());

describe("eval --shard: usage errors, exit 2 before any store starts", () => {
  it.each([
    ["4/3", /with n = 3, i must be in 1\.\.3, got "4\/3"/],
    ["half", /i\/n with integers 1 ≤ i ≤ n \(e\.g\. 2\/3\), got "half"/],
  ])(
    "--shard %s echoes the value and the valid range (every rule: test/eval/shard.test.ts)",
    async (value, message) => {
      const r = await runCli(["eval", "--kb", MINI_KB, "--shard", value], { env: DEAD_STORE });
      expect(r.exitCode).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(message);
    },
    60_000,
  );

  it("refuses gate and baseline options on a shard: they go to retrace merge", async () => {
    const r = await runCli(
      ["eval", "--kb", MINI_KB, "--shard", "1/2", "--gate", "min-hit=0.5", "--gate", "max-flips=0"],
      { env: DEAD_STORE },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(
      /Expected `--gate min-hit, --gate max-flips` to be given to `retrace merge`, not to a shard .*got "--gate min-hit --gate max-flips with --shard 1\/2"/,
    );
    const u = await runCli(["start", "--kb", MINI_KB, "--shard", "2/2", "--update-baseline"], { env: DEAD_STORE });
    expect(u.exitCode).toBe(2);
    expect(u.stderr).toMatch(/--update-baseline with --shard 2\/2/);
  }, 60_000);

  it("--graph with --shard: the gate options of a graph run go to retrace merge too, before the graph module loads", async () => {
    // examples/none.ts does not exist: the refusal comes first (sharded --graph runs themselves: test/cli/graph-parity.int.test.ts).
    const r = await runCli(
      ["eval", "--kb", MINI_KB, "--shard", "1/2", "--graph", "examples/none.ts", "--gate", "max-errors=1"],
      { env: DEAD_STORE },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/Expected `--gate max-errors` to be given to `retrace merge`, not to a shard/);
    const m = await runCli(
      ["eval", "--kb", MINI_KB, "--shard", "1/2", "--graph", "examples/none.ts", "--gate", "max-drop=0.1"],
      { env: DEAD_STORE },
    );
    expect(m.exitCode).toBe(2);
    expect(m.stderr).toMatch(/Expected `--gate max-drop` to be given to `retrace merge`/);
  }, 60_000);
});

describe("retrace merge, store-less", () => {
  it("merges 1/2 and 2/2 into the unsharded report (apart from timings), with the same exit code", async () => {
    const full = await runCli([
      "eval",
      "--store",
      "none",
      "--kb",
      MINI_KB,
      "--out",
      `json:${path.join(dir, "full.json")}`,
    ]);
    expect(full.exitCode, full.stderr).toBe(0);
    for (const i of [1, 2]) {
      const r = await runCli(["eval", "--store", "none", "--kb", MINI_KB, "--shard", `${i}/2`, "--json"]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stderr).toMatch(new RegExp(`shard ${i}/2: \\d+ of 5 cases, \\d+ of 6 turns`));
      await writeFile(path.join(dir, `s${i}.json`), r.stdout); // --json on stdout is a shard report too
    }
    const merged = await runCli(["merge", path.join(dir, "s2.json"), path.join(dir, "s1.json"), "--json"]);
    expect(merged.exitCode, merged.stderr).toBe(full.exitCode);
    const strip = (json: string) => reportToJSON(withoutTimings(JSON.parse(json) as Report));
    expect(strip(merged.stdout)).toBe(strip(await readFile(path.join(dir, "full.json"), "utf8")));
    expect(JSON.parse(merged.stdout).vacuousReasons.retrieval_hit_at_k).toBe("no store");
    // a partial report is not a source of floors
    const floors = await runCli(["report", path.join(dir, "s1.json"), "--floors"]);
    expect(floors.exitCode).toBe(2);
    expect(floors.stderr).toContain(`${path.join(dir, "s1.json")}: field \`shard\` a partial report (shard 1/2)`);
  }, 120_000);

  it("refuses a file that is not a JSON report, naming it", async () => {
    const bad = path.join(dir, "bad.json");
    await writeFile(bad, "not json");
    const r = await runCli(["merge", bad]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `${bad}:1:2: malformed JSON (expected 'null', got 'o'); expected a shard report JSON written by retrace eval --shard i/n`,
    );
    const folder = path.join(dir, "a-folder.json");
    await mkdir(folder);
    const d = await runCli(["merge", folder]);
    expect(d.exitCode).toBe(2);
    expect(d.stderr).toContain(`${folder}: expected a regular text file, got a directory`);
  }, 60_000);
});
