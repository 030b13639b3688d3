/**
 * `retrace eval --judge MODULE` end to end: the real bin, a real local Chroma
 * (started by the command), the mini KB, and a scripted fake chat model
 * (test/fixtures/judge/scripted-judge.mjs). The first run calls the model
 * once per answered turn; the re-run reads every verdict from the cache.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Report } from "../../src/eval/report/types.js";
import { chromaPids, tempDir } from "../helpers/chroma.js";
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
  "eval", "--kb", MINI_KB, "--embedder", "builtin", "--data-dir", path.join(dir, "chroma"), "--concurrency", "1",
  "--judge", path.join(ROOT, "test/fixtures/judge/scripted-judge.mjs"), "--judge-cache", path.join(dir, "judge-cache"), "--report-json", path.join(dir, out),
];

describe("retrace eval --judge", () => {
  it("scores groundedness on answered turns, reports the cost, and costs nothing on a re-run", async () => {
    const first = await runCli(args("first.json"), { env: { CHROMA_URL: "" } });
    expect(first.exitCode).toBe(0);
    const r1 = JSON.parse(await readFile(path.join(dir, "first.json"), "utf8")) as Report;
    // The mini KB has 2 answered turns (es-congelar-001#0, pt-pix-001#0); the fake replies 1, then 0.5.
    const g = (r: Report) => r.turns.flatMap((t) => t.results.filter((x) => x.key === "groundedness").map((x) => [`${t.caseId}#${t.turn}`, x.score]));
    expect(g(r1)).toEqual([["es-congelar-001#0", 1], ["pt-pix-001#0", 0.5]]);
    expect(r1.aggregates.groundedness).toMatchObject({ mean: 0.75, n: 2 });
    expect(r1.vacuous).not.toContain("groundedness");
    expect(r1.judge).toEqual({ model: "FakeListChatModel", prompt: "groundedness-v1", calls: 2, cached: 0, inputTokens: null, outputTokens: null, unparsable: 0 });
    expect(first.stdout).toMatch(/^groundedness\s+0\.750/m);

    const again = await runCli(args("second.json"), { env: { CHROMA_URL: "" } });
    expect(again.exitCode).toBe(0);
    const r2 = JSON.parse(await readFile(path.join(dir, "second.json"), "utf8")) as Report;
    expect(g(r2)).toEqual(g(r1));
    expect(r2.judge).toMatchObject({ calls: 0, cached: 2 });
  }, 180_000);
});
