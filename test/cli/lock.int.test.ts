/**
 * The data-dir lock through the real bin and a real local Chroma
 * (docs/reliability.md, "Concurrent runs on one data dir"): an empty `retrace.lock` (what
 * an interrupted non-atomic write used to leave) is taken over with one
 * line and the run goes on; a lock naming a live process makes the run say
 * who holds it and how long it waits, then exit 3; a data dir on a full
 * file system is exit 3 with the cause and leaves no lock file.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromaPids, tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";
import { MINI_KB, mountSmallTmpfs, unmountTmpfs } from "../helpers/fixtures.js";

let tmp: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  tmp = await tempDir("cli-lock");
});
afterAll(async () => {
  const left = chromaPids(tmp.dir);
  await tmp?.cleanup();
  expect(left).toEqual([]);
});

const evalCli = (dataDir: string, timeout: string) =>
  runCli(
    [
      "eval",
      "--kb",
      MINI_KB,
      "--config",
      '{"retrieval":{"embedder":"builtin"}}',
      "--store",
      "local",
      "--data-dir",
      dataDir,
    ],
    { env: { CHROMA_URL: "", RETRACE_LOCK_TIMEOUT: timeout } },
  );

describe("retrace.lock heals", () => {
  it("an empty lock is a leftover: taken over with one line, the eval passes, no lock left after it", async () => {
    const dd = path.join(tmp.dir, "empty");
    await mkdir(dd, { recursive: true });
    await writeFile(path.join(dd, "retrace.lock"), "");
    const t0 = Date.now();
    const r = await evalCli(dd, "5");
    expect(r.exitCode, r.stderr).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5_000); // it did not wait the lock timeout out
    expect(r.stderr.split("\n").filter((l) => l.includes("retrace.lock"))).toEqual([
      `Took over the stale lock ${path.join(dd, "retrace.lock")}: it was empty`,
    ]);
    expect(existsSync(path.join(dd, "retrace.lock"))).toBe(false);
  });

  it("a lock of a live process: says who holds it and how long it waits, then exit 3 naming the holder", async () => {
    const dd = path.join(tmp.dir, "live");
    await mkdir(dd, { recursive: true });
    await writeFile(
      path.join(dd, "retrace.lock"),
      JSON.stringify({ pid: process.pid, host: os.hostname(), token: "t", since: "2026-12-01T00:00:00.000Z" }),
    );
    const r = await evalCli(dd, "1");
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toContain(
      `Waiting for process ${process.pid} on ${os.hostname()} (holding the data dir ${dd} since 2026-12-01T00:00:00.000Z) to release ${path.join(dd, "retrace.lock")}; waiting up to 1 s (RETRACE_LOCK_TIMEOUT)`,
    );
    expect(r.stderr).toContain(`is locked by process ${process.pid} on ${os.hostname()}`);
  });

  it("a data dir on a full file system (tmpfs, root only): exit 3 with the cause, no lock file left", async (ctx) => {
    const mnt = path.join(tmp.dir, "full");
    await mountSmallTmpfs(mnt, "64k", ctx);
    try {
      await writeFile(path.join(mnt, "filler"), Buffer.alloc(1024 * 1024)).catch(() => undefined); // ENOSPC: full now
      const r = await evalCli(mnt, "5");
      expect(r.exitCode, r.stderr).toBe(3);
      expect(r.stderr).toContain(`retrace: could not write ${path.join(mnt, "retrace.lock")}: no space left on device`);
      expect(await readdir(mnt)).toEqual(["filler"]);
    } finally {
      unmountTmpfs(mnt);
    }
  });
});
