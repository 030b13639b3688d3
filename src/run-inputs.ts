/**
 * Nothing the run read is replaced (docs/reliability.md, "Outputs"): the
 * files and folders a run reads are declared (`declareRunInput`), and an
 * output that resolves to one of them is refused (`refuseRunInput`) by the
 * preflight and by the writes of ./atomic.ts. Importable from every layer.
 * The declared inputs are process state, like the temporary files of
 * ./interrupt.ts: a process runs one command.
 */
import { lstatSync, readdirSync, realpathSync, statSync, type Stats } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import { InvalidArgumentError } from "./errors.js";
import { fdOfPath, type Target } from "./write-target.js";

/** A file or folder the run reads: an output that resolves to it (or, for a folder, into it) is refused. */
interface RunInput {
  /** What it is, for the message (`the cases file`, `the KB folder`). */
  what: string;
  /** The path as the user named it. */
  path: string;
  /** Its real path (symlinks followed). */
  real: string;
  folder: boolean;
  /** A folder whose every path is the run's (the KB: a new file in it is read by the next run), not only the files in it now. */
  anythingInside: boolean;
}

const runInputs: RunInput[] = [];
/** `dev:ino` of every file the run reads (the files in input folders too): a hardlink to one of them is the same file. */
const inputInodes = new Map<string, RunInput>();
/** How many files of an input folder are looked at for hardlinks (a larger folder is still guarded by path). */
const MAX_FOLDER_FILES = 200_000;

const inodeKey = (st: { dev: number; ino: number }) => `${st.dev}:${st.ino}`;

function walkInodes(dir: string, input: RunInput, budget: { left: number }): void {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of entries) {
    if (budget.left-- <= 0) return;
    const p = join(dir, name);
    let st: Stats;
    try {
      st = lstatSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) walkInodes(p, input, budget);
    else if (st.isFile()) inputInodes.set(inodeKey(st), input);
  }
}

/**
 * Declares a file or folder the run reads (cases, cards, the KB folder, a
 * baseline, a quarantine, a configuration, traces, a module): from now on
 * an output that resolves to it — by path, through symlinks, or as a
 * hardlink to the same file (device and inode) — is refused with exit 2,
 * by the preflight (`checkWritable`, `checkOutputs`) and by the writes
 * themselves, unless the write is the command's purpose (`inPlace`). For a
 * folder, each file in it is an input; with `anythingInside` (the KB) so is
 * every new path in it. A path that does not exist is ignored.
 */
export function declareRunInput(path: string, what: string, o: { anythingInside?: boolean } = {}): void {
  if (path === "" || fdOfPath(path) !== undefined) return;
  let real: string;
  let st: Stats;
  try {
    real = realpathSync(path);
    st = statSync(real);
  } catch {
    return;
  }
  const folder = st.isDirectory();
  if (!folder && !st.isFile()) return; // a FIFO or a device: nothing it holds can be replaced
  const input: RunInput = { what, path, real, folder, anythingInside: folder && o.anythingInside === true };
  runInputs.push(input);
  if (folder) walkInodes(real, input, { left: MAX_FOLDER_FILES });
  else inputInodes.set(inodeKey(st), input);
}

/** Forgets every declared input (tests; a process that runs several commands). */
export function clearRunInputs(): void {
  runInputs.length = 0;
  inputInodes.clear();
}

/** The real path of `p`, which may not exist yet: its nearest existing ancestor's real path, then the rest. */
function realPathOfNew(p: string): string {
  const rest: string[] = [];
  for (let q = resolve(p); ; q = dirname(q)) {
    try {
      return join(realpathSync(q), ...rest.reverse());
    } catch {
      if (dirname(q) === q) return resolve(p);
      rest.push(basename(q));
    }
  }
}

/** The input an output written to the regular file `target` (a final path, symlinks followed) would replace, if any. */
function inputAt(target: string, stats: Stats | undefined): { input: RunInput; hardlink: boolean } | undefined {
  if (runInputs.length === 0) return undefined;
  const real = realPathOfNew(target);
  for (const input of runInputs) {
    if (!input.folder) {
      if (real === input.real) return { input, hardlink: false };
      continue;
    }
    const inside = real.startsWith(input.real.endsWith(sep) ? input.real : input.real + sep);
    if (inside && (input.anythingInside || stats !== undefined)) return { input, hardlink: false };
  }
  const same = stats !== undefined ? inputInodes.get(inodeKey(stats)) : undefined;
  return same !== undefined ? { input: same, hardlink: true } : undefined;
}

/**
 * Refuses (InvalidArgumentError, exit 2, naming `option`) an output at
 * `path` that leads to a file or folder the run reads (declareRunInput).
 */
export function refuseRunInput(path: string, option: string, target: Target): void {
  if (target.kind !== "file") return;
  let stats = target.stats;
  if (stats === undefined)
    try {
      stats = statSync(target.path);
    } catch {
      stats = undefined;
    }
  const found = inputAt(target.path, stats);
  if (found === undefined) return;
  const { input, hardlink } = found;
  const link = hardlink ? "a hard link to " : "";
  const where = input.folder
    ? `it is ${hardlink ? "a hard link to a file " : ""}inside ${input.path}, ${input.what} this run reads`
    : `it is ${link}${input.path === path ? "" : `${input.path}, `}${input.what} this run reads`;
  throw new InvalidArgumentError(
    option,
    `a path that is not an input of the run (${where}; nothing read is replaced)`,
    path,
  );
}
