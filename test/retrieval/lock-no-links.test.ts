/**
 * The data-dir lock on a file system without hard links (some network and
 * FUSE file systems refuse link(2) with EPERM or ENOTSUP; none is at hand,
 * so link alone is replaced by one that fails so): the lock is created in
 * place instead, still exclusively, and released; a second taker waits.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";

vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>();
  return {
    ...real,
    link: async (from: string, to: string) => {
      throw Object.assign(new Error(`EPERM: operation not permitted, link '${from}' -> '${to}'`), {
        code: "EPERM",
        syscall: "link",
      });
    },
  };
});

const { acquireDirLock, LOCK_FILE } = await import("../../src/retrieval/lock.js");

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe("acquireDirLock where link(2) is refused", () => {
  it("creates the lock in place, exclusively: a second taker times out while the first holds it; nothing is left after release", async () => {
    const d = await mkdtemp(path.join(os.tmpdir(), "retrace-lock-nolink-"));
    dirs.push(d);
    const first = await acquireDirLock(d, { waitMs: 1_000 });
    expect(JSON.parse(await readFile(path.join(d, LOCK_FILE), "utf8"))).toMatchObject({
      pid: process.pid,
      host: os.hostname(),
    });
    const second = await acquireDirLock(d, { waitMs: 300, pollMs: 20 }).catch((e: unknown) => e);
    expect(second).toMatchObject({ exitCode: 3 });
    await first.release();
    expect(await readdir(d)).toEqual([]);
  });
});
