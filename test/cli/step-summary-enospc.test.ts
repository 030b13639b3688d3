/**
 * ENOSPC on any output, the GitHub step summary included, is exit 3 with
 * nothing published (docs/reliability.md, "Outputs"): the step summary is
 * appended in the run's output set, so a summary on a full device
 * (`/dev/full`) or a full file system (a small tmpfs, root only) leaves the
 * report files unwritten, the summary as it was, stdout empty.
 */
import { lstat, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";
import { MINI_KB, mountSmallTmpfs, unmountTmpfs } from "../helpers/fixtures.js";

let dir: string;
let cleanup: () => Promise<void>;
const EVAL = ["eval", "--kb", MINI_KB, "--store", "memory", "--config", '{"retrieval":{"embedder":"builtin"}}'];
const missing = (p: string) =>
  lstat(p).then(
    () => false,
    () => true,
  );

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("step-summary-enospc"));
});
afterAll(() => cleanup());

describe("a step summary that cannot be written", () => {
  it("/dev/full: exit 3 naming it, the report files not published, nothing on stdout", async () => {
    const json = path.join(dir, "r.json");
    const junit = path.join(dir, "r.xml");
    const r = await runCli([...EVAL, "--out", `json:${json}`, "--out", `junit:${junit}`], {
      env: { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: "/dev/full" },
    });
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toContain("retrace: could not write /dev/full: no space left on device");
    expect(r.stdout).toBe("");
    expect(await missing(json)).toBe(true);
    expect(await missing(junit)).toBe(true);
    expect((await readdir(dir)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("a full file system under the summary: exit 3, the summary as it was, the report not published", async (ctx) => {
    const mnt = path.join(dir, "mnt");
    await mountSmallTmpfs(mnt, "16k", ctx);
    try {
      const summary = path.join(mnt, "summary.md");
      await writeFile(summary, "# earlier step\n");
      await writeFile(path.join(mnt, "filler"), Buffer.alloc(4096, 1)); // a few blocks left: the preflight passes, the summary does not fit
      const json = path.join(dir, "r2.json");
      const r = await runCli([...EVAL, "--out", `json:${json}`], {
        env: { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summary },
      });
      expect(r.exitCode, r.stderr).toBe(3);
      expect(r.stderr).toContain("no space left on device");
      expect(await readFile(summary, "utf8")).toBe("# earlier step\n");
      expect(await missing(json)).toBe(true);
      expect((await readdir(mnt)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    } finally {
      unmountTmpfs(mnt);
    }
  });
});
