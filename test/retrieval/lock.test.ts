/**
 * The data-dir lock (docs/reliability.md, "Concurrent runs on one data dir"): exclusive,
 * created atomically, waits for a live holder saying who and how long,
 * takes over a dead one and an empty or unreadable leftover with one line,
 * never lets two holders in, times out naming the holder; a lock that
 * cannot be written (a full tmpfs) is exit 3 and leaves no file.
 */
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { acquireDirLock, isStale, LOCK_FILE } from "../../src/retrieval/lock.js";
import { mountSmallTmpfs, unmountTmpfs } from "../helpers/fixtures.js";

const dirs: string[] = [];
async function dir(): Promise<string> {
  const d = await mkdtemp(path.join(os.tmpdir(), "retrace-lock-"));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

/** A pid that existed and has exited (a finished child). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((r) => child.on("exit", r));
  return child.pid!;
}

describe("acquireDirLock", () => {
  it("creates the lock file with pid and host, and removes it on release", async () => {
    const d = await dir();
    const lock = await acquireDirLock(d, { waitMs: 1_000 });
    const holder = JSON.parse(await readFile(path.join(d, LOCK_FILE), "utf8"));
    expect(holder).toMatchObject({ pid: process.pid, host: os.hostname() });
    await lock.release();
    expect(existsSync(path.join(d, LOCK_FILE))).toBe(false);
  });

  it("makes a second holder wait until the first releases", async () => {
    const d = await dir();
    const first = await acquireDirLock(d, { waitMs: 1_000 });
    const order: string[] = [];
    const second = acquireDirLock(d, { waitMs: 5_000, pollMs: 20 }).then((l) => {
      order.push("second acquired");
      return l;
    });
    await new Promise((r) => setTimeout(r, 150));
    order.push("first releases");
    await first.release();
    await (await second).release();
    expect(order).toEqual(["first releases", "second acquired"]);
  });

  it("takes over the lock of a process that is gone (same host)", async () => {
    const d = await dir();
    const pid = await deadPid();
    await writeFile(path.join(d, LOCK_FILE), JSON.stringify({ pid, host: os.hostname(), token: "old", since: "x" }));
    const lock = await acquireDirLock(d, { waitMs: 1_000, pollMs: 20 });
    expect(JSON.parse(await readFile(path.join(d, LOCK_FILE), "utf8")).pid).toBe(process.pid);
    await lock.release();
  });

  it("gives up after waitMs on a live holder with exit 3, naming the file and the holder", async () => {
    const d = await dir();
    await writeFile(
      path.join(d, LOCK_FILE),
      JSON.stringify({ pid: process.ppid, host: os.hostname(), token: "t", since: "2026-01-01" }),
    );
    const err = await acquireDirLock(d, { waitMs: 200, pollMs: 20 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ exitCode: 3 });
    expect(String(err)).toContain(`locked by process ${process.ppid} on ${os.hostname()}`);
    expect(String(err)).toContain(path.join(d, LOCK_FILE));
  });

  it("never judges another host's lock stale", async () => {
    expect(isStale({ pid: await deadPid(), host: "elsewhere", token: "t", since: "" })).toBe(false);
    expect(isStale({ pid: await deadPid(), host: os.hostname(), token: "t", since: "" })).toBe(true);
    expect(isStale({ pid: process.pid, host: os.hostname(), token: "t", since: "" })).toBe(false);
  });

  it("takes over an empty lock and one that is not a lock (a leftover), with one line each saying so", async () => {
    for (const [content, why] of [
      ["", "it was empty"],
      ['{"pid": 12', "it was not a lock retrace writes"],
    ] as const) {
      const d = await dir();
      await writeFile(path.join(d, LOCK_FILE), content);
      const lines = await stderrLines(async () => (await acquireDirLock(d, { waitMs: 2_000, pollMs: 20 })).release());
      expect(lines.filter((l) => l.startsWith("Took over"))).toEqual([
        `Took over the stale lock ${path.join(d, LOCK_FILE)}: ${why}${why.endsWith("writes") ? " (no pid, host and token)" : ""}`,
      ]);
      expect(await readdir(d)).toEqual([]); // released, no temporary or takeover file left
    }
  });

  it("says once who holds a live lock and how long it will wait", async () => {
    const d = await dir();
    await writeFile(
      path.join(d, LOCK_FILE),
      JSON.stringify({ pid: process.ppid, host: os.hostname(), token: "t", since: "2026-01-01T00:00:00.000Z" }),
    );
    const lines = await stderrLines(() => acquireDirLock(d, { waitMs: 1_000, pollMs: 20 }).catch(() => undefined));
    expect(lines.filter((l) => l.startsWith("Waiting"))).toEqual([
      `Waiting for process ${process.ppid} on ${os.hostname()} (holding the data dir ${d} since 2026-01-01T00:00:00.000Z) to release ${path.join(d, LOCK_FILE)}; waiting up to 1 s (RETRACE_LOCK_TIMEOUT)`,
    ]);
  });

  it("never lets two of many concurrent takers of a stale leftover hold the dir at once", async () => {
    const d = await dir();
    writeFileSync(path.join(d, LOCK_FILE), "");
    let holding = 0;
    let most = 0;
    let turns = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        const lock = await acquireDirLock(d, { waitMs: 10_000, pollMs: 5 });
        holding++;
        turns++;
        most = Math.max(most, holding);
        await new Promise((r) => setTimeout(r, 15));
        holding--;
        await lock.release();
      }),
    );
    expect(turns).toBe(8);
    expect(most).toBe(1);
    expect(await readdir(d)).toEqual([]);
  });
});

describe("acquireDirLock on a full file system (tmpfs, root only)", () => {
  it("a lock that cannot be written: exit 3 with the cause, and no lock or temporary file left", async (ctx) => {
    const mnt = path.join(await dir(), "mnt");
    await mountSmallTmpfs(mnt, "64k", ctx);
    try {
      // Fill it: a file as large as the tmpfs takes, written until ENOSPC.
      try {
        writeFileSync(path.join(mnt, "filler"), Buffer.alloc(1024 * 1024));
      } catch {
        // ENOSPC: full now
      }
      const err = await acquireDirLock(mnt, { waitMs: 1_000 }).catch((e: unknown) => e);
      expect(err).toMatchObject({ exitCode: 3, errno: "ENOSPC" });
      expect(String((err as Error).message)).toBe(
        `could not write ${path.join(mnt, LOCK_FILE)}: no space left on device`,
      );
      expect(await readdir(mnt)).toEqual(["filler"]);
    } finally {
      unmountTmpfs(mnt);
    }
  });
});

/** The stderr lines written while `fn` runs, with the logger at info. */
async function stderrLines(fn: () => Promise<unknown>): Promise<string[]> {
  const before = process.env.RETRACE_LOG;
  process.env.RETRACE_LOG = "info";
  const chunks: string[] = [];
  const spy = vi.spyOn(process.stderr, "write").mockImplementation((c: string | Uint8Array) => {
    chunks.push(String(c));
    return true;
  });
  try {
    await fn();
  } finally {
    spy.mockRestore();
    if (before === undefined) delete process.env.RETRACE_LOG;
    else process.env.RETRACE_LOG = before;
  }
  return chunks
    .join("")
    .split("\n")
    .filter((l) => l !== "");
}
