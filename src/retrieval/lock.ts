/**
 * A lock file in a local Chroma data dir (docs/reliability.md), so that two or
 * more retrace processes on one data dir never run Chroma servers over it at
 * the same time (two servers writing one SQLite file lose each other's
 * collections: `UNIQUE constraint failed: collections.name`).
 *
 * The lock is `<dir>/retrace.lock`, created exclusively (`wx`), holding
 * `{ pid, host, token, since }`. A process that finds it waits (polling) until
 * it is released. A lock whose holder is on this host and no longer alive is
 * stale: it is moved aside (rename, so only one waiter takes it over) and
 * the waiter tries again. After creating the lock, the holder re-reads it and
 * only proceeds when it still holds its own token.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { link, open, readFile, rename, rm } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { InvalidArgumentError, ServiceUnavailableError } from "../errors.js";
import { log } from "../log.js";

export const LOCK_FILE = "retrace.lock";
/** How long to wait for another process's lock by default (env RETRACE_LOCK_TIMEOUT, seconds). */
export const DEFAULT_LOCK_WAIT_MS = 15 * 60 * 1000;
export const LOCK_POLL_MS = 200;

export interface LockHolder {
  pid: number;
  host: string;
  token: string;
  since: string;
}

export interface DirLock {
  file: string;
  release(): Promise<void>;
}

/** Whether a process with this pid runs on this machine (signal 0; EPERM: it runs as another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function readHolder(file: string): Promise<LockHolder | null | "missing"> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw e;
  }
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    if (typeof h.pid === "number" && typeof h.host === "string" && typeof h.token === "string") {
      return { pid: h.pid, host: h.host, token: h.token, since: String(h.since ?? "") };
    }
  } catch {
    // being written right now, or garbage
  }
  return null;
}

/** Whether `holder` is gone: same host and its pid is not alive. Locks of other hosts are never judged stale. */
export function isStale(holder: LockHolder, host: string = hostname()): boolean {
  return holder.host === host && holder.pid !== process.pid && !processAlive(holder.pid);
}

function waitMsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.RETRACE_LOCK_TIMEOUT;
  if (raw === undefined || raw.trim() === "") return DEFAULT_LOCK_WAIT_MS;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError("RETRACE_LOCK_TIMEOUT", "a positive number of seconds", raw);
  return Math.round(n * 1000);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Takes the lock of `dir` (created when missing), waiting up to `waitMs`
 * for another holder; a stale holder (dead pid on this host) is taken over.
 * Times out with ServiceUnavailableError (exit 3) naming the file and holder.
 */
export async function acquireDirLock(dir: string, options: { waitMs?: number; pollMs?: number } = {}): Promise<DirLock> {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, LOCK_FILE);
  const waitMs = options.waitMs ?? waitMsFromEnv();
  const pollMs = options.pollMs ?? LOCK_POLL_MS;
  const me: LockHolder = { pid: process.pid, host: hostname(), token: randomBytes(8).toString("hex"), since: new Date().toISOString() };
  const deadline = Date.now() + waitMs;
  let announced = false;
  for (;;) {
    try {
      const fh = await open(file, "wx");
      try {
        await fh.writeFile(JSON.stringify(me));
      } finally {
        await fh.close();
      }
      await sleep(20);
      const check = await readHolder(file);
      if (check !== null && check !== "missing" && check.token === me.token) {
        return {
          file,
          release: async () => {
            const now = await readHolder(file).catch(() => null);
            if (now !== null && now !== "missing" && now.token === me.token) await rm(file, { force: true });
          },
        };
      }
      continue; // someone took it over in between: wait like everyone else
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    const holder = await readHolder(file);
    if (holder === "missing") continue;
    if (holder !== null && isStale(holder)) {
      const aside = `${file}.stale-${me.token}`;
      try {
        await rename(file, aside);
        const moved = await readHolder(aside);
        if (moved !== null && moved !== "missing" && moved.token !== holder.token) {
          // We moved a fresh lock taken between our read and our rename: put it back if the place is still free.
          await link(aside, file).catch(() => undefined);
        } else {
          log.info(`Took over the lock ${file} of process ${holder.pid}, which is gone`);
        }
      } catch {
        // another waiter moved it first
      }
      await rm(aside, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      const who = holder === null ? "another process" : `process ${holder.pid} on ${holder.host} (since ${holder.since})`;
      throw new ServiceUnavailableError(
        "chroma",
        `The data dir ${dir} is locked by ${who}; gave up after ${Math.round(waitMs / 1000)} s (delete ${file} if that process is gone, or set RETRACE_LOCK_TIMEOUT)`,
      );
    }
    if (!announced && holder !== null) {
      log.info(`Waiting for process ${holder.pid} to finish with the data dir ${dir}`);
      announced = true;
    }
    await sleep(pollMs);
  }
}
