/**
 * Writing into what the user names (docs/reliability.md, "Outputs"). Importable
 * from every layer, like errors.ts and log.ts.
 *
 * - A regular file, or a path that does not exist yet, is written
 *   atomically: the data goes to a temporary file in the target's directory,
 *   which is then renamed over the target, so a reader sees the old file or
 *   the new one, never half of one. The temporary file is removed if
 *   anything fails; an existing file keeps its permission bits.
 * - A symlink is followed to its final target (realpath semantics, a
 *   dangling link included: its target path is created); the target is
 *   written as above and the link stays a link. A temporary file is
 *   tracked until it is renamed or removed, so an interrupt at any point
 *   removes it (src/interrupt.ts).
 * - A character or block device, a FIFO or a socket is written by streaming
 *   into it (opened for writing without creating or truncating anything),
 *   never replaced; so are `-`, `/dev/stdout`, `/dev/stderr` and
 *   `/dev/fd/N` (`/proc/self/fd/N`), which write to that file descriptor.
 * - Text is written with every secret of the process redacted
 *   (`redactSecrets`, src/redact.ts; docs/reliability.md, "Credentials never
 *   leak"): this is the output boundary of every file retrace writes.
 * - Any failure (no space left, permission denied, a directory as target, a
 *   reader that went away) is an `OutputWriteError`: exit 3,
 *   `could not write <path>: no space left on device`.
 *
 * `checkWritable(path, option)` is the preflight for output options: called
 * before a run starts, it is a usage error (exit 2) naming the option and
 * the path when the path cannot be written.
 *
 * A command's outputs go through ./output-set.ts (`checkOutputs` before the
 * run, `writeOutputs` after it: all files of the run or none), which builds
 * on the targets and writers exported here; `writeFileAtomic` is for a
 * single file written on its own (a baseline by `writeBaseline`, a judge
 * verdict in its cache).
 */
import { randomBytes } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { access, chmod, mkdir, mkdtemp, open, rename, rm, stat, statfs, writeFile } from "node:fs/promises";
import { write as writeFd, fstat as fstatFd } from "node:fs";
import net from "node:net";
import { basename, dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { InvalidArgumentError, isRetraceError } from "./errors.js";
import { trackTemporary, untrackTemporary } from "./interrupt.js";
import { redactSecretPieces, redactSecrets } from "./redact.js";
import { refuseRunInput } from "./run-inputs.js";
import { describeWriteFailure, errnoCode, OutputWriteError, resolveTarget, type Target } from "./write-target.js";

// Where a write goes and how it failed (./write-target.ts), and the guard of the run's inputs (./run-inputs.ts): part of this module's API.
export { clearRunInputs, declareRunInput, refuseRunInput } from "./run-inputs.js";
export {
  describeWriteFailure,
  errnoCode,
  fdOfPath,
  OutputWriteError,
  resolveTarget,
  type Target,
} from "./write-target.js";

const writeToFd = promisify(writeFd);
const fstatOf = promisify(fstatFd);

/**
 * Text given in pieces, so that a large output (a `--traces` report) is
 * written to its temporary file piece by piece and its whole text never
 * exists at once: `pieces()` gives the text's pieces afresh on each call,
 * every piece but the first starting with `,` and a line break (the rule
 * of src/redact.ts `redactSecretPieces`, under which redacting each piece
 * gives the bytes redacting the whole text would).
 */
export interface TextPieces {
  readonly pieces: () => Iterable<string>;
}

/** What an output holds: text, binary data, or text in pieces. */
export type OutputData = string | Uint8Array | TextPieces;

function isPieces(data: OutputData): data is TextPieces {
  return typeof data === "object" && !(data instanceof Uint8Array);
}

/**
 * The bytes written for `data`: text as UTF-8 with every secret of the
 * process redacted (the output boundary of files, docs/reliability.md);
 * binary data as it is; text in pieces redacted piece by piece and joined.
 */
export function outputBytes(data: OutputData): Buffer {
  if (typeof data === "string") return Buffer.from(redactSecrets(data), "utf8");
  if (isPieces(data)) return Buffer.concat([...outputChunks(data)]);
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * The bytes written for `data` as a sequence of buffers, for writing a file
 * piece by piece: text in pieces gives one buffer per redacted piece; text
 * and binary data, the one buffer of `outputBytes`. Concatenated, exactly
 * `outputBytes(data)`.
 */
export function* outputChunks(data: OutputData): Generator<Buffer> {
  if (!isPieces(data)) {
    yield outputBytes(data);
    return;
  }
  for (const p of redactSecretPieces(data.pieces())) yield Buffer.from(p, "utf8");
}

/**
 * The real cause of a write that failed with ENOENT though its folders
 * were being created: Node's recursive mkdir says ENOENT where the file
 * system refused (a read-only one: EROFS; a full one: ENOSPC). A probe
 * folder created in the nearest existing ancestor of `path` gives the
 * system's own answer; any other error is returned as it is.
 */
export async function realWriteFailure(path: string, e: unknown): Promise<unknown> {
  if (errnoCode(e) !== "ENOENT") return e;
  try {
    const ancestor = await nearestExisting(dirname(resolve(path)));
    if (!ancestor.stats.isDirectory()) return e;
    const probe = await mkdtemp(join(ancestor.path, ".retrace-probe-"));
    await rm(probe, { recursive: true, force: true });
    return e;
  } catch (probeError) {
    return errnoCode(probeError) !== undefined && errnoCode(probeError) !== "ENOENT" ? probeError : e;
  }
}

/** How a write relates to the run's inputs: `inPlace` when replacing an input is the command's purpose (`--update-baseline`, `label --merge --into`). */
export interface WriteIntent {
  inPlace?: boolean;
}

async function writeAtomically(target: string, bytes: Buffer, existing: Stats | undefined): Promise<void> {
  const dir = dirname(target);
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${basename(target)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  trackTemporary(tmp); // removed should the process end before the rename (src/interrupt.ts)
  try {
    await writeFile(tmp, bytes, { flag: "wx" });
    if (existing !== undefined) await chmod(tmp, existing.mode & 0o7777);
    await rename(tmp, target);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  } finally {
    untrackTemporary(tmp);
  }
}

/** Writes all of `bytes` to an open descriptor (current position; short writes continued). */
async function writeAll(fd: number, bytes: Buffer): Promise<void> {
  for (let off = 0; off < bytes.length;) {
    const { bytesWritten } = await writeToFd(fd, bytes, off, bytes.length - off, null);
    off += bytesWritten;
  }
}

/** stdout / stderr through their Node streams (so the order with other output is kept); other descriptors directly. */
export async function writeToDescriptor(fd: number, bytes: Buffer): Promise<void> {
  const stream = fd === 1 ? process.stdout : fd === 2 ? process.stderr : undefined;
  if (stream === undefined) {
    await fstatOf(fd); // EBADF when it is not open
    await writeAll(fd, bytes);
    return;
  }
  await new Promise<void>((done, fail) => {
    const onError = (e: Error) => fail(e);
    stream.once("error", onError);
    stream.write(bytes, (e) => {
      stream.off("error", onError);
      if (e) fail(e);
      else done();
    });
  });
}

/** Streams into a device or FIFO: opened write-only, never created or truncated (a FIFO waits for its reader). */
export async function writeIntoNode(path: string, bytes: Buffer): Promise<void> {
  const handle = await open(path, constants.O_WRONLY | constants.O_NOCTTY);
  try {
    const st = await handle.stat();
    if (st.isFile()) {
      // Replaced by a regular file since we looked: write it atomically, as any file.
      await handle.close();
      await writeAtomically(path, bytes, st);
      return;
    }
    await writeAll(handle.fd, bytes);
  } finally {
    await handle.close().catch(() => {});
  }
}

/** Writes into a Unix socket: connects, sends the bytes, closes. */
export function writeIntoSocket(path: string, bytes: Buffer): Promise<void> {
  return new Promise((done, fail) => {
    const socket = net.connect({ path });
    socket.once("error", fail);
    socket.once("connect", () => socket.end(bytes));
    socket.once("finish", () => {
      socket.destroy();
      done();
    });
  });
}

/**
 * Writes `data` into `path` (see the module comment): a regular file or a
 * new path atomically, a symlink's final target atomically (the link kept),
 * a device, FIFO, socket or `-` / `/dev/stdout` by streaming into it.
 * A path that leads to a file the run reads (declareRunInput) is refused
 * unless `intent.inPlace`.
 * @throws OutputWriteError (exit 3) when the write fails; InvalidArgumentError (exit 2) for an empty path or a run's input.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  intent: WriteIntent & { option?: string } = {},
): Promise<void> {
  if (path === "") throw new InvalidArgumentError("path", "a file path", path);
  const bytes = outputBytes(data);
  let target: Target | undefined;
  try {
    target = await resolveTarget(path);
    if (intent.inPlace !== true) refuseRunInput(path, intent.option ?? "path", target);
    switch (target.kind) {
      case "fd":
        return await writeToDescriptor(target.fd, bytes);
      case "stream":
        return await writeIntoNode(target.path, bytes);
      case "socket":
        return await writeIntoSocket(target.path, bytes);
      case "file":
        return await writeAtomically(target.path, bytes, target.stats);
    }
  } catch (e) {
    if (isRetraceError(e)) throw e;
    const where = target?.path ?? (e as { path?: string } | null)?.path;
    throw new OutputWriteError(path, await realWriteFailure(where ?? path, e), where);
  }
}

// ---------------------------------------------------------------------------

/** Why the process may not write the file or node `p` (access W_OK), or undefined when it may. */
async function denied(p: string): Promise<string | undefined> {
  try {
    await access(p, constants.W_OK);
    return undefined;
  } catch (e) {
    return describeWriteFailure(e);
  }
}

/**
 * Why a file cannot be created in `dir`, or undefined when it can: a probe
 * file is created exclusively and removed at once (access() would say yes
 * to root everywhere, also where the file system refuses).
 */
async function cannotCreateIn(dir: string): Promise<string | undefined> {
  const probe = join(dir, `.retrace-probe.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    await writeFile(probe, "", { flag: "wx" });
  } catch (e) {
    return describeWriteFailure(e);
  }
  await rm(probe, { force: true });
  return undefined;
}

/** The file system of `dir` has no free block for this process. */
async function full(dir: string): Promise<boolean> {
  try {
    const s = await statfs(dir);
    const root = typeof process.getuid === "function" && process.getuid() === 0;
    return s.blocks > 0 && (root ? s.bfree : s.bavail) === 0;
  } catch {
    return false;
  }
}

/** The nearest existing ancestor of `p` (itself included) and its stats. */
async function nearestExisting(p: string): Promise<{ path: string; stats: Stats }> {
  for (let q = p; ; q = dirname(q)) {
    try {
      return { path: q, stats: await stat(q) };
    } catch (e) {
      if (dirname(q) === q || (errnoCode(e) !== "ENOENT" && errnoCode(e) !== "ENOTDIR")) throw e;
    }
  }
}

/**
 * The preflight of a file retrace appends to (GitHub's `$GITHUB_STEP_SUMMARY`):
 * an existing file, FIFO or device must be writable; a new path is checked as
 * `checkWritable` checks it (its folder can take a new file).
 * @throws InvalidArgumentError (exit 2) naming `option` and the path.
 */
export async function checkAppendable(path: string, option: string): Promise<void> {
  let target: Target;
  try {
    target = await resolveTarget(path);
  } catch {
    return checkWritable(path, option); // says why (a loop, a directory, …)
  }
  refuseRunInput(path, option, target); // appending to an input changes it as surely as replacing it
  if (target.kind !== "file" || target.stats === undefined) return checkWritable(path, option);
  if (target.stats.isDirectory())
    throw new InvalidArgumentError(option, `a path retrace can append to (${target.path} is a directory)`, path);
  const why = await denied(target.path);
  if (why !== undefined) throw new InvalidArgumentError(option, `a path retrace can append to (${why})`, path);
}

/**
 * Preflight of an output option, before a run starts (nothing is written;
 * an empty probe file is created in the directory and removed at once):
 * throws InvalidArgumentError (exit 2) naming `option` and `path` when the
 * path is empty, is (or leads through symlinks to) a directory, is a file or
 * node the process may not write, or is a new path whose nearest existing
 * directory is not writable or not a directory (missing folders in between
 * are created by the write), or when its file system has no free space left.
 * Symlinks are followed (a dangling one to its target path); `-`,
 * `/dev/stdout` and `/dev/fd/N` pass when that descriptor is open.
 */
export async function checkWritable(path: string, option: string, intent: WriteIntent = {}): Promise<void> {
  const refuse = (why: string): never => {
    throw new InvalidArgumentError(option, `a path retrace can write (${why})`, path);
  };
  if (path === "") throw new InvalidArgumentError(option, "a file path", path);
  let target: Target;
  try {
    target = await resolveTarget(path);
  } catch (e) {
    const code = errnoCode(e);
    if (code === "EISDIR") return refuse(`${(e as NodeJS.ErrnoException).path ?? path} is a directory`);
    return refuse(describeWriteFailure(e));
  }
  if (intent.inPlace !== true) refuseRunInput(path, option, target);
  const via = target.path !== path && target.kind !== "fd" ? `${target.path}: ` : "";
  switch (target.kind) {
    case "fd":
      try {
        await fstatOf(target.fd);
      } catch {
        refuse(`file descriptor ${target.fd} is not open`);
      }
      return;
    case "stream":
    case "socket": {
      const why = await denied(target.path);
      if (why !== undefined) refuse(`${via}${why}`);
      return;
    }
    case "file": {
      if (target.stats !== undefined) {
        const why = await denied(target.path);
        if (why !== undefined) refuse(`${via}${why}`);
      }
      let ancestor: { path: string; stats: Stats };
      try {
        ancestor = await nearestExisting(dirname(target.path));
      } catch (e) {
        return refuse(`${via}${describeWriteFailure(e)}`);
      }
      if (!ancestor.stats.isDirectory()) refuse(`${ancestor.path} is not a directory`);
      const why = await cannotCreateIn(ancestor.path);
      if (why !== undefined) refuse(`cannot create a file in ${ancestor.path}: ${why}`);
      if (await full(ancestor.path)) refuse(`no space left on device at ${ancestor.path}`);
      return;
    }
  }
}
