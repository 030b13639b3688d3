/**
 * Concurrent runs on one data dir (docs/reliability.md): four first-time
 * `retrace eval` processes and one `retrace ingest` of another KB, all at
 * once on an empty data dir, all exit 0; the four reports are identical
 * apart from their `timings` section.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportToJSON } from "../../src/eval/report/render.js";
import { withoutTimings } from "../../src/eval/report/timings.js";
import type { Report } from "../../src/eval/report/types.js";
import { chromaPids, tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";
import { MINI_KB, SHIPPED_KB } from "../helpers/fixtures.js";

let tmp: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  tmp = await tempDir("concurrent");
});
afterAll(async () => {
  const left = chromaPids(tmp.dir);
  await tmp?.cleanup();
  expect(left).toEqual([]);
});

describe("concurrent first-time runs on one empty data dir", () => {
  it("all succeed, and the eval reports are identical", async () => {
    const dataDir = path.join(tmp.dir, "chroma");
    const env = { CHROMA_URL: "" };
    const evals = Array.from({ length: 4 }, () =>
      runCli(
        ["eval", "--kb", MINI_KB, "--config", '{"retrieval":{"embedder":"builtin"}}', "--data-dir", dataDir, "--json"],
        { env, timeoutMs: 400_000 },
      ),
    );
    const other = runCli(
      [
        "ingest",
        "--kb",
        SHIPPED_KB,
        "--config",
        JSON.stringify({ retrieval: { embedder: "builtin" } }),
        "--data-dir",
        dataDir,
      ],
      {
        env,
        timeoutMs: 400_000,
      },
    );
    const results = await Promise.all([...evals, other]);
    for (const r of results) expect(r.exitCode, r.stderr).toBe(0);
    const reports = results.slice(0, 4).map((r) => reportToJSON(withoutTimings(JSON.parse(r.stdout) as Report)));
    for (const r of reports.slice(1)) expect(r).toBe(reports[0]);
    expect(JSON.parse(reports[0]!).turns.length).toBeGreaterThan(0);
    // Exactly one of them ingested the mini KB; the others found it up to date.
    const stderrs = results.slice(0, 4).map((r) => r.stderr);
    expect(stderrs.filter((s) => /ingested \d+ chunks/.test(s))).toHaveLength(1);
  }, 600_000);
});
