/**
 * A lock file in a local Chroma data dir (docs/reliability.md, "Concurrent
 * runs on one data dir"), so that two or more retrace processes on one data dir never run
 * Chroma servers over it at the same time (two servers writing one SQLite
 * file lose each other's collections: `UNIQUE constraint failed:
 * collections.name`).
 *
 * The lock is `<dir>/retrace.lock`, holding `{ pid, host, token, since }`.
 * It is created atomically: the holder is written to a temporary file in
 * the dir, which is then hard-linked to `retrace.lock` (link fails when the
 * name exists, so exactly one process wins) and removed. A complete lock is
 * therefore the only thing that can appear under the name; an empty or
 * unreadable `retrace.lock` is a leftover (of an older retrace, or a crash
 * of the file system) and is stale, as is a lock whose holder is on this
 * host and no longer alive. A stale lock is taken over with one line saying
 * so: under a short-lived takeover lock (`retrace.lock.takeover`, created
 * the same way), the waiter checks that the lock is still the very file it
 * judged stale (same inode and content) and removes it, then competes for
 * the free name like everyone else; so no live holder's lock is ever moved.
 * A process that finds a live lock waits (polling), saying once who holds
 * it and for how long it will wait. A lock that cannot be written (disk
 * full) is OutputWriteError, exit 3 with the cause, and leaves no file.
 * Why this is not a lock-file library (a heartbeat a blocked holder cannot
 * keep): docs/decisions/0008-data-dir-lock-stays-hand-written.md.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, type Stats } from "node:fs";
import { link, readFile, rm, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { OutputWriteError } from "../atomic.js";
import { InvalidArgumentError, ServiceUnavailableError } from "../errors.js";
import { log } from "../log.js";

export const LOCK_FILE = "retrace.lock";
/** How long to wait for another process's lock by default (env RETRACE_LOCK_TIMEOUT, seconds). */
export const DEFAULT_LOCK_WAIT_MS = 15 * 60 * 1000;
export const LOCK_POLL_MS = 200;
/** The takeover lock (held for the few milliseconds of a stale lock's removal) is itself stale after this long. */
const TAKEOVER_STALE_MS = 10_000;

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

/** What the lock file holds: a holder; `{ leftover }` when it is empty or not a lock (saying which); "missing" when there is none. */
type LockContent = LockHolder | { leftover: string; text: string } | "missing";

async function readHolder(file: string): Promise<LockContent> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw new ServiceUnavailableError("filesystem", `cannot read the lock ${file}: ${(e as Error).message}`, {
      cause: e,
    });
  }
  if (text.trim() === "") return { leftover: "it was empty", text };
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    if (typeof h.pid === "number" && typeof h.host === "string" && typeof h.token === "string") {
      return { pid: h.pid, host: h.host, token: h.token, since: String(h.since ?? "") };
    }
  } catch {
    // not JSON: a leftover (a complete lock is the only thing that can appear under the name)
  }
  return { leftover: "it was not a lock retrace writes (no pid, host and token)", text };
}

const isHolder = (c: LockContent): c is LockHolder => c !== "missing" && !("leftover" in c);

/**
 * Creates `file` holding `text`, atomically and exclusively: a temporary
 * file in the same folder, hard-linked to `file`, then removed. False when
 * `file` exists already. A write that fails (disk full) leaves no file and
 * throws OutputWriteError (exit 3, with the cause).
 */
async function createExclusively(file: string, text: string): Promise<boolean> {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(tmp, text, { flag: "wx" });
    await link(tmp, file);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code !== undefined && NO_HARD_LINKS.has(code) && (e as NodeJS.ErrnoException).syscall === "link")
      return createInPlace(file, text);
    throw new OutputWriteError(file, e);
  } finally {
    await rm(tmp, { force: true });
  }
}

/** What link(2) says on a file system without hard links (some network and FUSE file systems). */
const NO_HARD_LINKS: ReadonlySet<string> = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"]);

/**
 * Where hard links are refused: the lock created in place (`wx`) and
 * written; should the write fail, the file is removed, so a failed write
 * still leaves nothing (a crash in between leaves an empty lock, a leftover
 * the next run takes over).
 */
async function createInPlace(file: string, text: string): Promise<boolean> {
  try {
    await writeFile(file, text, { flag: "wx" });
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    await rm(file, { force: true });
    throw new OutputWriteError(file, e);
  }
}

const statOrNull = (file: string): Promise<Stats | null> => stat(file).catch(() => null);

/**
 * Removes the stale lock `file` when it is still the file judged stale
 * (`seen`: its inode; `text`: its content), under the takeover lock, so
 * that no other waiter's fresh lock is removed instead. True when it was
 * removed by this call.
 */
async function removeStale(file: string, seen: Stats, text: string): Promise<boolean> {
  const takeover = `${file}.takeover`;
  if (
    !(await createExclusively(
      takeover,
      JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() }),
    ))
  ) {
    const t = await statOrNull(takeover);
    // A takeover lock left by a process that died within its few milliseconds: removed, and tried again next round.
    if (t !== null && Date.now() - t.mtimeMs > TAKEOVER_STALE_MS) await rm(takeover, { force: true });
    return false;
  }
  try {
    const now = await statOrNull(file);
    if (now === null || now.ino !== seen.ino || now.dev !== seen.dev) return false;
    const again = await readFile(file, "utf8").catch(() => undefined);
    if (again !== text) return false;
    await rm(file, { force: true });
    return true;
  } finally {
    await rm(takeover, { force: true });
  }
}

/** Whether `holder` is gone: same host and its pid is not alive. Locks of other hosts are never judged stale. */
export function isStale(holder: LockHolder, host: string = hostname()): boolean {
  return holder.host === host && holder.pid !== process.pid && !processAlive(holder.pid);
}

function waitMsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.RETRACE_LOCK_TIMEOUT;
  if (raw === undefined || raw.trim() === "") return DEFAULT_LOCK_WAIT_MS;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0)
    throw new InvalidArgumentError("RETRACE_LOCK_TIMEOUT", "a positive number of seconds", raw);
  return Math.round(n * 1000);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Takes the lock of `dir` (created when missing), waiting up to `waitMs`
 * for another holder; a stale lock (empty, not a lock, or of a dead pid on
 * this host) is taken over with one line saying so. Times out with
 * ServiceUnavailableError (exit 3) naming the file and holder; a lock that
 * cannot be written is OutputWriteError (exit 3), leaving no file.
 */
export async function acquireDirLock(
  dir: string,
  options: { waitMs?: number; pollMs?: number } = {},
): Promise<DirLock> {
  const file = path.join(dir, LOCK_FILE);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw new OutputWriteError(dir, e);
  }
  const waitMs = options.waitMs ?? waitMsFromEnv();
  const pollMs = options.pollMs ?? LOCK_POLL_MS;
  const me: LockHolder = {
    pid: process.pid,
    host: hostname(),
    token: randomBytes(8).toString("hex"),
    since: new Date().toISOString(),
  };
  const deadline = Date.now() + waitMs;
  let announced = false;
  for (;;) {
    if (await createExclusively(file, JSON.stringify(me))) {
      return {
        file,
        release: async () => {
          const now = await readHolder(file).catch(() => "missing" as const);
          if (isHolder(now) && now.token === me.token) await rm(file, { force: true });
        },
      };
    }
    const seen = await statOrNull(file);
    const holder = await readHolder(file);
    if (holder === "missing" || seen === null) continue;
    const why = !isHolder(holder) ? holder.leftover : isStale(holder) ? `its process ${holder.pid} is gone` : undefined;
    if (why !== undefined) {
      const text = isHolder(holder) ? await readFile(file, "utf8").catch(() => "") : holder.text;
      if (await removeStale(file, seen, text)) log.info(`Took over the stale lock ${file}: ${why}`);
      else await sleep(Math.min(pollMs, 20)); // another waiter is taking it over, or it changed: look again
      continue;
    }
    if (Date.now() > deadline) {
      const h = holder as LockHolder;
      throw new ServiceUnavailableError(
        "chroma",
        `The data dir ${dir} is locked by process ${h.pid} on ${h.host} (since ${h.since}); gave up after ${Math.round(waitMs / 1000)} s (delete ${file} if that process is gone, or set RETRACE_LOCK_TIMEOUT)`,
      );
    }
    if (!announced) {
      const h = holder as LockHolder;
      log.info(
        `Waiting for process ${h.pid} on ${h.host} (holding the data dir ${dir} since ${h.since}) to release ${file}; waiting up to ${Math.round(waitMs / 1000)} s (RETRACE_LOCK_TIMEOUT)`,
      );
      announced = true;
    }
    await sleep(pollMs);
  }
}
