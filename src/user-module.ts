/**
 * The one loader of the modules a user hands retrace (docs/evaluate-your-graph.md,
 * "The graph module"): `--graph`, `--input`, `--id-map`, `--judge` and
 * `cases synth --generator`. A `.ts` / `.mts` module is a module like any
 * other: tsx's module hooks (the optional peer tsx) are registered once in the
 * process, for ESM and CommonJS, without a namespace, and the module is then
 * imported with a plain `import()`. It shares Node's module cache with
 * everything else, so the `@langchain/core` it imports is the very instance
 * a `.mjs` module would get (docs/langchain-integration.md, "Your graph's
 * LangChain classes").
 *
 * Every failure names the option and the module and is exit 2: a missing
 * file, a module that throws while loading (GraphInputError), a factory that
 * throws while building what it returns (`buildWith`), tsx not installed
 * (MissingPeerError). A module or factory that throws is shown at the first
 * frame of its stack in the user's own code (`userFrame`), source-mapped
 * (docs/gates-and-exit-codes.md, "Errors in your modules").
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { didYouMeanFile } from "./edit-distance.js";
import { GraphInputError, thrownMessage } from "./errors.js";
import { missingPeerError } from "./peers.js";

/**
 * retrace's own code, whose frames are never the user's: the folders of the
 * compiled package (dist/, bin/) and of the source a checkout runs (src/).
 * This file is `dist/user-module.js` or `src/user-module.ts`.
 */
const OWN_DIRS: readonly string[] = (() => {
  const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
  return ["dist", "src", "bin"].map((d) => path.join(root, d) + path.sep);
})();

/** `/abs/file.ts:12:7` out of one stack line (`    at fn (/abs/file.ts:12:7)`, `    at file:///abs/file.ts:12:7`); undefined for a frame with no file. */
function frameLocation(line: string): { file: string; line: string; column: string } | undefined {
  const m = /^\s*at (?:.*\()?(.+?):(\d+):(\d+)\)?$/.exec(line);
  if (m === null) return undefined;
  let file = m[1]!;
  if (file.startsWith("file://")) {
    try {
      file = fileURLToPath(file);
    } catch {
      return undefined;
    }
  }
  if (!path.isAbsolute(file)) return undefined; // node:internal/…, native, <anonymous>, eval
  return { file, line: m[2]!, column: m[3]! };
}

/**
 * Where the user's code threw: the first frame of the stack of `e` (or of
 * its first cause that has one) in the user's own files — not in Node's
 * internals, a `node_modules` package or retrace itself — as `file:line:column`,
 * the path relative to `cwd` when inside it. So an error thrown inside a
 * library the user's module called (`new ChatOpenAI()` without a key) shows
 * the line of the user's file that called it. Lines and columns are the
 * user's source for a `.ts`/`.mts` module (tsx emits inline source maps and
 * source maps are enabled before any user module loads, `importUserModule`).
 * Undefined when no frame qualifies (a thrown non-Error, a stack cut short
 * by `Error.stackTraceLimit` inside a deep library).
 */
export function userFrame(e: unknown, cwd: string = process.cwd()): string | undefined {
  for (let c: unknown = e, depth = 0; c instanceof Error && depth < 5; c = c.cause, depth++) {
    for (const line of (c.stack ?? "").split("\n").slice(1)) {
      const at = frameLocation(line);
      if (at === undefined) continue;
      if (at.file.split(/[\\/]/).includes("node_modules") || OWN_DIRS.some((d) => at.file.startsWith(d))) continue;
      const rel = path.relative(cwd, at.file);
      const shown = rel !== "" && rel.split(path.sep)[0] !== ".." && !path.isAbsolute(rel) ? rel : at.file;
      return `${shown}:${at.line}:${at.column}`;
    }
  }
  return undefined;
}

/** The message of what a user module threw, with where in the user's code: `boom (at graph.ts:12:7)`. */
export function userErrorMessage(e: unknown, cwd: string = process.cwd()): string {
  const message = thrownMessage(e);
  const at = userFrame(e, cwd);
  return at === undefined ? message : `${message} (at ${at})`;
}

/** The file types a module option accepts. */
export const MODULE_EXTENSIONS = [".ts", ".mts", ".js", ".mjs"] as const;
const TYPESCRIPT_EXTENSIONS: readonly string[] = [".ts", ".mts"];

/**
 * Where the registration of tsx's hooks is kept: on the process itself (a
 * `Symbol.for` key of `globalThis`), since hooks are process-wide by nature —
 * two copies of retrace in one process register them once.
 */
const TSX_HOOKS = Symbol.for("retrace-eval.tsxHooks");

/** `option file#export` (or `option file` when the module has no one export), how messages name a module. */
export function moduleLabel(option: string, file: string, exportName?: string): string {
  return exportName !== undefined ? `${option} ${file}#${exportName}` : `${option} ${file}`;
}

/**
 * The absolute path of a module option's file (resolved against `cwd`),
 * checked without loading it: GraphInputError (exit 2) naming the module when
 * the file does not exist or is not a .ts/.mts/.js/.mjs file.
 */
export function userModulePath(file: string, option: string, exportName?: string, cwd: string = process.cwd()): string {
  const abs = path.resolve(cwd, file);
  const where = moduleLabel(option, file, exportName);
  if (!existsSync(abs))
    throw new GraphInputError(
      `${where}: the file ${file} does not exist${didYouMeanFile(file, (n) => (MODULE_EXTENSIONS as readonly string[]).includes(path.extname(n)), cwd)}`,
    );
  const ext = path.extname(abs);
  if (!(MODULE_EXTENSIONS as readonly string[]).includes(ext))
    throw new GraphInputError(`${where}: expected a ${MODULE_EXTENSIONS.join(", ")} file, got "${ext}"`);
  return abs;
}

/**
 * Registers tsx's ESM and CommonJS hooks once per process (no namespace:
 * TypeScript modules then load as ordinary modules). A MissingPeerError
 * (exit 2) naming `where` when tsx is not installed.
 */
async function typeScriptHooks(where: string): Promise<void> {
  const g = globalThis as { [TSX_HOOKS]?: Promise<void> };
  g[TSX_HOOKS] ??= (async () => {
    const [esm, cjs] = await Promise.all([import("tsx/esm/api"), import("tsx/cjs/api")]);
    // CommonJS first: a .ts file of a package without "type": "module" is CommonJS, required by the ESM hook.
    cjs.register();
    esm.register();
  })();
  try {
    await g[TSX_HOOKS];
  } catch (e) {
    delete g[TSX_HOOKS];
    // tsx is an optional peer: without it a TypeScript module is a usage problem (exit 2) with the install command.
    throw (
      missingPeerError("tsx", `${where} is TypeScript and needs`, e, "or pass the module compiled to .js/.mjs") ?? e
    );
  }
}

/**
 * The exports of a module namespace: a CommonJS module compiled from ESM
 * (tsx compiles a `.ts` file of a package without `"type": "module"` to
 * CommonJS; so do tsc and esbuild) arrives as `{ default: module.exports }`
 * with `module.exports.__esModule` set; its exports are `module.exports`.
 */
function exportsOf(ns: Record<string, unknown>): Record<string, unknown> {
  const names = Object.keys(ns).filter((k) => k !== "module.exports");
  const d = ns.default as { __esModule?: unknown } | null | undefined;
  if (names.length === 1 && names[0] === "default" && typeof d === "object" && d !== null && d.__esModule === true)
    return d as Record<string, unknown>;
  return ns;
}

/** A loaded user module: its absolute path and its exports. */
export interface UserModule {
  file: string;
  exports: Record<string, unknown>;
}

/**
 * Imports the module `file` of `option` (`exportName`: the export it is
 * wanted for, for messages). TypeScript through tsx's hooks (registered once,
 * see the module comment). A module that throws while loading is a
 * GraphInputError (exit 2) naming the option, the module, the error and
 * where in the user's code it was thrown (`userFrame`).
 */
export async function importUserModule(
  file: string,
  option: string,
  opts: { exportName?: string; cwd?: string } = {},
): Promise<UserModule> {
  const abs = userModulePath(file, option, opts.exportName, opts.cwd);
  const where = moduleLabel(option, file, opts.exportName);
  // Stacks of the user's code in the user's lines: a source map (tsx's inline ones, a compiled .js file's) is only read for modules loaded after this.
  process.setSourceMapsEnabled(true);
  if (TYPESCRIPT_EXTENSIONS.includes(path.extname(abs))) await typeScriptHooks(`${option} ${file}`);
  try {
    return { file: abs, exports: exportsOf((await import(pathToFileURL(abs).href)) as Record<string, unknown>) };
  } catch (e) {
    throw new GraphInputError(`${where}: the module threw while loading: ${userErrorMessage(e, opts.cwd)}`, {
      cause: e,
    });
  }
}

/**
 * `value` if it is not a factory (`isFactory` false), else what calling it
 * (possibly async) gives. A factory that throws is a GraphInputError (exit 2)
 * naming the module and what it was building: `--judge judge.ts: the factory
 * threw while building the chat model: …` (`threw`: the words before the
 * error, default "the factory threw while building WHAT"), and where in the
 * user's code (`userFrame`).
 */
export async function buildWith(
  value: unknown,
  isFactory: boolean,
  where: string,
  what: string,
  threw = `the factory threw while building ${what}`,
): Promise<unknown> {
  if (!isFactory) return value;
  try {
    return await (value as () => unknown)();
  } catch (e) {
    throw new GraphInputError(`${where}: ${threw}: ${userErrorMessage(e)}`, { cause: e });
  }
}

/**
 * `fn`, a function a user module exports (`--input`, `--id-map`), wrapped so
 * that a throw when retrace calls it is a GraphInputError (exit 2) naming
 * `where`, what it was called on (`on(...args)`: `case c-1 turn 0`) and where
 * in the user's code (`userFrame`), not an internal error (exit 70).
 */
export function userFunction<A extends unknown[], R>(
  fn: (...args: A) => R,
  where: string,
  on: (...args: A) => string,
): (...args: A) => R {
  return (...args: A): R => {
    try {
      return fn(...args);
    } catch (e) {
      throw new GraphInputError(`${where}: the function threw on ${on(...args)}: ${userErrorMessage(e)}`, { cause: e });
    }
  };
}
