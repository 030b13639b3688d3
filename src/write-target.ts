/**
 * Where a write goes and how it failed (docs/reliability.md, "Outputs"),
 * for ./atomic.ts and ./run-inputs.ts: a path followed to its target
 * (`resolveTarget`: a file, a descriptor, a device or FIFO, a socket) and a
 * failed write in words (`describeWriteFailure`) and as an exit-3 error
 * (`OutputWriteError`). Importable from every layer.
 */
import type { Stats } from "node:fs";
import { lstat, readlink, realpath } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { ServiceUnavailableError, thrownMessage } from "./errors.js";

/** What a failed write said, in words (`no space left on device`), by errno code. */
const REASONS: Readonly<Record<string, string>> = {
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  EISDIR: "is a directory",
  ENOTDIR: "a component of the path is not a directory",
  ENOENT: "no such file or directory",
  ELOOP: "too many levels of symbolic links",
  ENAMETOOLONG: "file name too long",
  EPIPE: "the reader closed the pipe (EPIPE)",
  ECONNRESET: "the reader closed the connection",
  ECONNREFUSED: "nothing is listening on the socket",
  ENXIO: "no such device or address",
  EBADF: "the file descriptor is not open for writing",
  EFBIG: "file too large",
  EIO: "input/output error",
};

/** The errno code of a failed system call (`ENOSPC`), if it has one. */
export function errnoCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** `no space left on device` for an ENOSPC error; the error's message for an unknown code. */
export function describeWriteFailure(e: unknown): string {
  const code = errnoCode(e);
  if (code !== undefined && REASONS[code] !== undefined) return REASONS[code];
  return thrownMessage(e);
}

/**
 * A file retrace was asked to write could not be written (disk full,
 * permission denied, a directory, a reader that went away): exit 3, like
 * any unavailable resource, with `could not write <path>: <reason>`.
 */
export class OutputWriteError extends ServiceUnavailableError {
  /** The errno code (`ENOSPC`), when the system gave one. */
  readonly errno: string | undefined;
  constructor(
    /** The path as the user named it. */
    readonly path: string,
    cause: unknown,
    /** Where the path led (a symlink's target), when that differs. */
    readonly target?: string,
  ) {
    const via = target !== undefined && target !== path ? ` (→ ${target})` : "";
    super("filesystem", `could not write ${path}${via}: ${describeWriteFailure(cause)}`, { cause });
    this.errno = errnoCode(cause);
  }
}

/** An errno-style error (`code`, `path`) for a failure found without a system call (a directory as target, a link cycle). */
export function errnoError(code: string, path: string): NodeJS.ErrnoException {
  const e = new Error(`${code}: ${REASONS[code] ?? code}, ${path}`) as NodeJS.ErrnoException;
  e.code = code;
  e.path = path;
  return e;
}

/** Where a write goes once symlinks are followed. */
export type Target =
  | { kind: "fd"; fd: number; path: string }
  | { kind: "stream"; path: string }
  | { kind: "socket"; path: string }
  | { kind: "file"; path: string; stats?: Stats };

/** `-`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N` (or this process's pid): the file descriptor, else undefined. */
export function fdOfPath(p: string): number | undefined {
  if (p === "-" || p === "/dev/stdout") return 1;
  if (p === "/dev/stderr") return 2;
  const m = /^\/(?:dev|proc\/(?:self|thread-self|(\d+)))\/fd\/(\d+)$/.exec(p);
  if (m === null || (m[1] !== undefined && Number(m[1]) !== process.pid)) return undefined;
  return Number(m[2]);
}

const MAX_SYMLINKS = 40;

/**
 * Follows `path` to what a write must go into: symlinks resolved one hop at a
 * time (relative targets against the link's real directory), so a dangling
 * link gives its target path. A directory is EISDIR; a link cycle ELOOP.
 */
export async function resolveTarget(path: string): Promise<Target> {
  let p = path;
  for (let hops = 0; ; hops++) {
    const fd = fdOfPath(p);
    if (fd !== undefined) return { kind: "fd", fd, path: p };
    if (hops > MAX_SYMLINKS) throw errnoError("ELOOP", path);
    let st: Stats;
    try {
      st = await lstat(p);
    } catch (e) {
      // A new path (its folders are created by the write; a file among them fails it there).
      if (errnoCode(e) === "ENOENT" || errnoCode(e) === "ENOTDIR") return { kind: "file", path: p };
      throw e;
    }
    if (st.isSymbolicLink()) {
      p = resolve(await realpath(dirname(p)), await readlink(p));
      continue;
    }
    if (st.isDirectory()) throw errnoError("EISDIR", p);
    if (st.isFile()) return { kind: "file", path: p, stats: st };
    if (st.isSocket()) return { kind: "socket", path: p };
    return { kind: "stream", path: p }; // character or block device, FIFO
  }
}
