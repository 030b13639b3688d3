/**
 * `retrace eval --repeat N` on the command line (issue 26; docs/ci.md): for
 * retrace's own graph (in-process store) the run is accepted, gated by
 * --max-flaky, and says once that the repeats were identical; --max-flaky
 * without --repeat, and on a shard, is exit 2. Runs dist/ (npm run build).
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";

const KB = "test/fixtures/kb-mini";
const BASE = ["eval", "--kb", KB, "--store", "memory", "--config", '{"retrieval":{"embedder":"builtin"}}'];

describe("retrace eval --repeat (retrace's own graph)", () => {
  it("runs, says once that the repeats were identical, and gates --max-flaky", async () => {
    const r = await runCli([...BASE, "--repeat", "2", "--gate", "max-flaky=0"], { timeoutMs: 120_000 });
    expect(r.exitCode).toBe(0);
    expect(r.stdout.match(/the 2 repeats were identical/g)).toHaveLength(1);
    expect(r.stdout).toMatch(/passed checks \(1\): --gate max-flaky=0 flaky/);
  }, 150_000);

  it("--max-flaky without --repeat, and --max-flaky on a shard: exit 2 before the run", async () => {
    const a = await runCli([...BASE, "--gate", "max-flaky=0"]);
    expect(a.exitCode).toBe(2);
    expect(a.stderr).toMatch(/--gate max-flaky.*--repeat N, N ≥ 2/);
    const b = await runCli([...BASE, "--repeat", "2", "--gate", "max-flaky=0", "--shard", "1/2"]);
    expect(b.exitCode).toBe(2);
    expect(b.stderr).toMatch(/--gate max-flaky.*given to `retrace merge`, not to a shard/);
  }, 60_000);
});
