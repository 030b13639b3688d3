/** The data-dir lock: exclusive, waits for a live holder, takes over a dead one, times out naming the holder. */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { acquireDirLock, isStale, LOCK_FILE } from "../../src/retrieval/lock.js";

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
    await writeFile(path.join(d, LOCK_FILE), JSON.stringify({ pid: process.ppid, host: os.hostname(), token: "t", since: "2026-01-01" }));
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
});
