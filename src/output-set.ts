/**
 * A run's outputs, checked before the run and written together after it
 * (docs/reliability.md, "Outputs"). Importable from every layer, like
 * atomic.ts, on whose targets it builds.
 *
 * `checkOutputs` is the preflight a command calls before anything starts
 * (store, graph, sweep): each output option's path must be writable
 * (`checkWritable`: exit 2 naming the option and the path), and no two
 * options may name the same file.
 *
 * `writeOutputs` writes every output of the finished run, all or none of the
 * files:
 *
 * 1. **stage** — each regular file (a new path, or a symlink's final target)
 *    is written to a temporary file in its target's folder (missing folders
 *    created);
 * 2. **stream** — each device, FIFO, socket and `-` / `/dev/stdout` /
 *    `/dev/fd/N` gets its bytes, in the order given: these cannot be staged,
 *    so they are written at publish time;
 * 3. **publish** — each temporary file is renamed over its target.
 *
 * A failure in step 1 or 2 (no space left, a reader that went away) removes
 * every temporary file and every folder the set created, renames nothing and
 * throws `OutputWriteError` (exit 3, `could not write <path>: no space left
 * on device`): none of the run's files is written. What a stream received
 * before the failure cannot be taken back. Step 3 only renames within a
 * folder; should a rename still fail (the folder removed meanwhile), the
 * files renamed before it stay published and the other temporary files are
 * removed.
 *
 * An interrupt at any point (SIGINT while a FIFO's reader has not opened
 * it) removes every temporary file of the set: each is tracked from before
 * it is created until it is renamed or removed (src/interrupt.ts).
 */
import { randomBytes } from "node:crypto";
import type { Stats } from "node:fs";
import { fstat } from "node:fs";
import { chmod, mkdir, readFile, rename, rm, rmdir, stat, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import { basename, dirname, join, resolve } from "node:path";
import {
  checkWritable,
  errnoCode,
  outputBytes,
  outputChunks,
  OutputWriteError,
  realWriteFailure,
  refuseRunInput,
  resolveTarget,
  writeIntoNode,
  writeIntoSocket,
  writeToDescriptor,
  type OutputData,
  type Target,
} from "./atomic.js";
import { InvalidArgumentError, isRetraceError } from "./errors.js";
import { trackTemporary, untrackTemporary } from "./interrupt.js";

const fstatAsync = promisify(fstat);

/** An output a run was asked to write: the option that named it and the path as given. */
export interface OutputSpec {
  /** The option as typed (`--report-json`), for messages. */
  option: string;
  path: string;
  /** Replacing a file the run reads is this output's purpose (`--update-baseline`, `label --merge --into`): not refused (src/atomic.ts `declareRunInput`). */
  inPlace?: boolean;
}

/** An output with its content, ready to be written. */
export interface Output extends OutputSpec {
  /** Text, binary data, or text in pieces (`TextPieces`, src/atomic.ts: a large report, written to its temporary file piece by piece). */
  data: OutputData;
  /**
   * Added to the end of the file rather than replacing it (GitHub's step
   * summary): staged as the file's current content followed by the data,
   * published with the other files, so a failure leaves it as it was.
   */
  append?: boolean;
}

/**
 * The preflight of a run's outputs, before anything starts: each path is
 * checked by `checkWritable` (an empty path, a directory, a path under a
 * regular file, a folder where no file can be created, a full file system:
 * InvalidArgumentError, exit 2, naming the option and the path), and two
 * options that lead to the same regular file are refused (one would
 * silently replace the other). Writes nothing (checkWritable's probe file
 * is removed at once).
 */
export async function checkOutputs(outputs: readonly OutputSpec[], o: { stdout?: string } = {}): Promise<void> {
  const files = new Map<string, string>();
  // Stdout carries one document: a second one there (`--json` and `--out json:-`, or `json:-` and `html:/dev/stdout`) is exit 2.
  let onStdout = o.stdout;
  for (const o of outputs) {
    await checkWritable(o.path, o.option, { inPlace: o.inPlace === true }); // also refuses a file the run reads
    const target = await resolveTarget(o.path); // checkWritable resolved it already: cannot fail here but for a race
    if (await goesToStdout(target)) {
      if (onStdout !== undefined)
        throw new InvalidArgumentError(
          o.option,
          `a path other than stdout (${onStdout} prints its document there already: stdout carries one)`,
          o.path,
        );
      onStdout = o.option;
    }
    if (target.kind !== "file") continue; // several options may stream into stdout or one pipe
    const key = resolve(target.path);
    const first = files.get(key);
    if (first !== undefined)
      throw new InvalidArgumentError(
        o.option,
        `a file no other output option names (${first} writes ${key} too)`,
        o.path,
      );
    files.set(key, o.option);
  }
}

/** Whether a write to `target` lands on this process's stdout: `-`, `/dev/stdout`, `/dev/fd/1`, or the very file or pipe stdout is. */
export async function goesToStdout(target: Target): Promise<boolean> {
  if (target.kind === "fd") return target.fd === 1 || (await sameAsStdout(`/dev/fd/${target.fd}`));
  return sameAsStdout(target.path);
}

async function sameAsStdout(path: string): Promise<boolean> {
  try {
    const [out, st] = await Promise.all([fstatAsync(1), stat(path)]);
    // A pipe or a file (not a terminal or /dev/null, which any number of outputs may share harmlessly).
    return out.dev === st.dev && out.ino === st.ino && (st.isFIFO() || st.isFile());
  } catch {
    return false;
  }
}

/** The folders between `first` (created by mkdir) and `dir`, outermost first. */
function createdFolders(first: string, dir: string): string[] {
  const chain: string[] = [];
  for (let d = resolve(dir); ; d = dirname(d)) {
    chain.unshift(d);
    if (d === resolve(first) || dirname(d) === d) return chain;
  }
}

interface Staged {
  output: Output;
  target: string;
  tmp: string;
}

/** Removes the temporary files, then the folders the set created (innermost first, only while empty). */
async function cleanUp(staged: readonly Staged[], folders: readonly string[]): Promise<void> {
  await Promise.all(staged.map((s) => rm(s.tmp, { force: true }).finally(() => untrackTemporary(s.tmp))));
  for (const d of [...folders].reverse()) await rmdir(d).catch(() => {});
}

// Text with every secret redacted (the output boundary of files, docs/reliability.md).
const bytesOf = outputBytes;

/**
 * Writes every output of a finished run (see the module comment): files
 * staged, streams written, then the files published together; on a failure
 * before publishing, none of the files is written and no temporary file is
 * left.
 * @throws OutputWriteError (exit 3) when an output cannot be written; InvalidArgumentError (exit 2) for an empty path.
 */
export async function writeOutputs(outputs: readonly Output[]): Promise<void> {
  for (const o of outputs) if (o.path === "") throw new InvalidArgumentError(o.option, "a file path", o.path);
  const staged: Staged[] = [];
  const folders: string[] = [];
  const streams: { output: Output; target: Exclude<Target, { kind: "file" }> }[] = [];
  let current: { output: Output; target?: string } | undefined;
  try {
    for (const output of outputs) {
      current = { output };
      const target = await resolveTarget(output.path);
      current.target = target.path;
      if (output.inPlace !== true) refuseRunInput(output.path, output.option, target); // exit 2: nothing the run read is replaced
      if (target.kind !== "file") {
        streams.push({ output, target });
        continue;
      }
      const dir = dirname(target.path);
      const first = await mkdir(dir, { recursive: true }).catch((e: unknown) => {
        // mkdir -p says EEXIST when a component of the path is a regular file: that is ENOTDIR to the user.
        throw errnoCode(e) === "EEXIST"
          ? Object.assign(new Error(`ENOTDIR: not a directory, ${dir}`), { code: "ENOTDIR", path: dir })
          : e;
      });
      if (first !== undefined) folders.push(...createdFolders(first, dir));
      const tmp = join(dir, `.${basename(target.path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
      staged.push({ output, target: target.path, tmp });
      trackTemporary(tmp); // an interrupt before the publish removes it (src/interrupt.ts)
      // Piece by piece (one buffer for text and binary data): a large report's whole text never exists at once.
      const chunks = outputChunks(output.data);
      const before = output.append === true && target.stats !== undefined ? await readFile(target.path) : undefined;
      await writeFile(tmp, before === undefined ? chunks : [before, ...chunks], { flag: "wx" });
      const existing: Stats | undefined = target.stats;
      if (existing !== undefined) await chmod(tmp, existing.mode & 0o7777);
    }
    for (const { output, target } of streams) {
      current = { output, target: target.path };
      const bytes = bytesOf(output.data);
      if (target.kind === "fd") await writeToDescriptor(target.fd, bytes);
      else if (target.kind === "socket") await writeIntoSocket(target.path, bytes);
      else await writeIntoNode(target.path, bytes);
    }
  } catch (e) {
    await cleanUp(staged, folders);
    if (isRetraceError(e)) throw e;
    const where = current?.target ?? (e as { path?: string } | null)?.path;
    throw new OutputWriteError(current?.output.path ?? "", await realWriteFailure(where ?? "", e), where);
  }
  for (let i = 0; i < staged.length; i++) {
    const s = staged[i] as Staged;
    try {
      await rename(s.tmp, s.target);
      untrackTemporary(s.tmp);
    } catch (e) {
      await cleanUp(staged.slice(i), []);
      throw new OutputWriteError(s.output.path, e, s.target);
    }
  }
}
