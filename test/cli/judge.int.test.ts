/**
 * `retrace eval --judge MODULE` end to end: the real bin, a real local Chroma
 * (started by the command), the mini KB, and a scripted fake chat model
 * (test/fixtures/judge/scripted-judge.mjs). The first run calls the model
 * once per answered turn; the re-run reads every verdict from the cache and
 * its report is byte-identical outside `timings`, where the judge's cost
 * lives. A missing judge module is exit 2 before any store is asked.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withoutTimings } from "../../src/eval/report/timings.js";
import type { Report } from "../../src/eval/report/types.js";
import { chromaPids, closedPort, tempDir } from "../helpers/chroma.js";
import { ROOT, runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir("judge-cli")));
afterAll(async () => {
  expect(chromaPids(dir)).toEqual([]);
  await cleanup();
});

const args = (out: string) => [
  "eval",
  "--kb",
  MINI_KB,
  "--config",
  '{"retrieval":{"embedder":"builtin"}}',
  "--data-dir",
  path.join(dir, "chroma"),
  "--config",
  '{"run":{"concurrency":1}}',
  "--config",
  JSON.stringify({ run: { judge: path.join(ROOT, "test/fixtures/judge/scripted-judge.mjs") } }),
  "--config",
  JSON.stringify({ run: { judgeCache: path.join(dir, "judge-cache") } }),
  "--out",
  `json:${path.join(dir, out)}`,
];

describe("retrace eval --judge", () => {
  it("scores groundedness on answered turns, reports the cost, and costs nothing on a re-run", async () => {
    const first = await runCli(args("first.json"), { env: { CHROMA_URL: "" } });
    expect(first.exitCode).toBe(0);
    const r1 = JSON.parse(await readFile(path.join(dir, "first.json"), "utf8")) as Report;
    // The mini KB has 2 answered turns (es-congelar-001#0, pt-pix-001#0); the fake replies 1, then 0.5.
    const g = (r: Report) =>
      r.turns.flatMap((t) =>
        t.results.filter((x) => x.key === "groundedness").map((x) => [`${t.caseId}#${t.turn}`, x.score]),
      );
    expect(g(r1)).toEqual([
      ["es-congelar-001#0", 1],
      ["pt-pix-001#0", 0.5],
    ]);
    expect(r1.aggregates.groundedness).toMatchObject({ mean: 0.75, n: 2 });
    expect(r1.vacuous).not.toContain("groundedness");
    // What the verdicts depend on in `judge`; what this run cost (it depends on the cache) in `timings.judge` (docs/determinism.md).
    expect(r1.judge).toEqual({ model: "FakeListChatModel", prompt: "groundedness-v1", unparsable: 0 });
    expect(r1.timings?.judge).toEqual({ calls: 2, cached: 0, inputTokens: null, outputTokens: null });
    expect(first.stdout).toMatch(/^groundedness\s+0\.750/m);
    expect(first.stderr).toMatch(/judge FakeListChatModel: 2 calls, 0 cached, tokens not reported/);

    const again = await runCli(args("second.json"), { env: { CHROMA_URL: "" } });
    expect(again.exitCode).toBe(0);
    const text2 = await readFile(path.join(dir, "second.json"), "utf8");
    const r2 = JSON.parse(text2) as Report;
    expect(g(r2)).toEqual(g(r1));
    expect(r2.timings?.judge).toEqual({ calls: 0, cached: 2, inputTokens: null, outputTokens: null });
    // The cached re-run is byte-identical to the first run outside `timings` (jq 'del(.timings)' a.json; the key order is the file's).
    const text1 = await readFile(path.join(dir, "first.json"), "utf8");
    const outsideTimings = (text: string) => JSON.stringify(withoutTimings(JSON.parse(text) as Report), null, 2);
    expect(outsideTimings(text2)).toBe(outsideTimings(text1));
    expect(text2).not.toBe(text1); // the timings (and the judge's cost in them) do differ
    expect(Object.keys(r2).at(-1)).toBe("timings");
  }, 180_000);

  it("refuses a --judge module that does not exist with exit 2 before any store starts (a closed port is never asked)", async () => {
    const closed = await closedPort();
    const r = await runCli([
      "eval",
      "--kb",
      MINI_KB,
      "--config",
      '{"retrieval":{"embedder":"builtin"}}',
      "--store",
      `http://127.0.0.1:${closed}`,
      "--config",
      '{"run":{"judge":"./nope.mjs"}}',
    ]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim()).toBe(
      'retrace: Expected `--judge` to be a module file exporting a LangChain chat model or a factory of one, got "./nope.mjs"',
    );
    // The same command with a judge that loads reaches the store: exit 3, so the 2 above came from the judge check.
    const reached = await runCli([
      "eval",
      "--kb",
      MINI_KB,
      "--config",
      '{"retrieval":{"embedder":"builtin"}}',
      "--store",
      `http://127.0.0.1:${closed}`,
      "--config",
      JSON.stringify({ run: { judge: path.join(ROOT, "test/fixtures/judge/scripted-judge.mjs") } }),
      "--config",
      JSON.stringify({ run: { judgeCache: path.join(dir, "unused-cache") } }),
    ]);
    expect(reached.exitCode, reached.stderr).toBe(3);
    expect(reached.stderr).toMatch(/Cannot reach Chroma at http:\/\/127\.0\.0\.1:\d+/);
  }, 60_000);

  it("refuses a --judge-cache that is a file, exit 2 naming the option, before the judge loads or a store starts", async () => {
    const file = path.join(dir, "cache-is-a-file");
    await writeFile(file, "not a folder\n");
    const closed = await closedPort();
    const r = await runCli([
      "eval",
      "--kb",
      MINI_KB,
      "--config",
      '{"retrieval":{"embedder":"builtin"}}',
      "--store",
      `http://127.0.0.1:${closed}`,
      "--config",
      JSON.stringify({ run: { judge: path.join(ROOT, "test/fixtures/judge/scripted-judge.mjs") } }),
      "--config",
      JSON.stringify({ run: { judgeCache: file } }),
    ]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("`--judge-cache` to be a folder retrace can write verdicts into");
    expect(r.stderr).toContain(file);
    expect(await readFile(file, "utf8")).toBe("not a folder\n");
  }, 60_000);
});
