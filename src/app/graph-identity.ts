/**
 * What identifies a graph of your own in a report and a baseline
 * (docs/evaluate-your-graph.md, "One identity wherever you run from"): its
 * module relative to its project root, the export, a sha256 of the module
 * file, and the `run.configurable` it was handed (a hash and its keys).
 * A baseline written before graphs were named relative to their project is
 * migrated on read (`migrateGraphBaseline`).
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { InvalidArgumentError } from "../errors.js";
import type { Baseline } from "../eval/gate/baseline.js";
import { DEFAULT_GRAPH_EXPORT, parseModuleSpec } from "../eval/sweep/external-graph.js";
import { readTextFileOrThrow } from "../kb/text.js";
import { log } from "../log.js";
import { userModulePath } from "../user-module.js";
import type { ParsedConfigurable } from "./sweep-source.js";
import { MAX_JSON_DEPTH, parseJsonOrThrow, TOO_DEEP, tooDeepAt, valueTooDeep } from "../kb/json.js";

/**
 * The project a file belongs to (docs/evaluate-your-graph.md, "One identity
 * wherever you run from"): the nearest folder at or above the file's own that
 * holds a package.json — so each package of a monorepo is its own project —
 * else the working directory.
 */
export function projectRootOf(file: string, cwd: string = process.cwd()): string {
  const abs = path.resolve(cwd, file);
  for (let dir = path.dirname(abs); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) return cwd;
  }
}

/**
 * `file` relative to its project root (projectRootOf), `/` separators: one
 * name for `./agent.ts` from the project root, `agent.ts` from its own
 * folder and its absolute path from anywhere.
 */
export function projectPath(file: string, cwd: string = process.cwd()): string {
  const abs = path.resolve(cwd, file);
  return path.relative(projectRootOf(abs, cwd), abs).split(path.sep).join("/");
}

/**
 * Reads a `--graph` baseline's module as this run names it. A baseline
 * written before graphs were named relative to their project root named the
 * module relative to the folder it was written from (`sub/agent.mts` from
 * the project root); it is the same module when that path, resolved from
 * here, is this module, or when it is a trailing part of this module's path
 * (no `..`). Then the baseline's names are migrated in memory and a note
 * says so; otherwise the baseline is left as it is (and refused by the
 * comparison that follows).
 */
export function migrateGraphBaseline(
  baseline: Baseline,
  moduleFile: string,
  exportName: string,
  file: string,
  cwd: string = process.cwd(),
): string | undefined {
  const source = baseline.source;
  if (source.kind !== "graph") return undefined;
  const written = source.module;
  const writtenExport = source.exportName;
  const now = projectPath(moduleFile, cwd);
  if (writtenExport !== exportName || written === now) return undefined;
  const abs = path.resolve(cwd, moduleFile);
  const parts = written.split(/[\\/]+/).filter((p) => p !== "" && p !== ".");
  const trailing =
    !path.isAbsolute(written) &&
    !parts.includes("..") &&
    abs.split(path.sep).slice(-parts.length).join("/") === parts.join("/");
  if (path.resolve(cwd, written) !== abs && !trailing) return undefined;
  baseline.source = { kind: "graph", module: now, exportName };
  if (baseline.graph !== undefined) baseline.graph.module = now;
  return `${file} names the graph module ${written} (relative to the folder it was written from); read as ${now}, relative to its project ${path.relative(cwd, projectRootOf(abs, cwd)) || "."} — \`--update-baseline\` rewrites it so`;
}

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/** sha256 of a module file named by `file[#export]`, checked as loading it checks it (userModulePath: exit 2 naming the option). */
export async function moduleFileHash(spec: string, option: string, defaultExport: string): Promise<string> {
  const { file, exportName } = parseModuleSpec(spec, defaultExport);
  return sha256(await readFile(userModulePath(file, option, exportName)));
}

/** What identifies a graph: its module relative to the project root, the export, and a sha256 of the module file (its own bytes, not its imports). */
export interface GraphModuleIdentity {
  file: string;
  exportName: string;
  moduleHash: string;
}

/** The identity of the graph `spec` names (`file[#export]`), read without loading it. */
export async function graphModuleIdentity(spec: string): Promise<GraphModuleIdentity> {
  const { file, exportName } = parseModuleSpec(spec, DEFAULT_GRAPH_EXPORT);
  return {
    file: projectPath(file),
    exportName,
    moduleHash: await moduleFileHash(spec, "--graph", DEFAULT_GRAPH_EXPORT),
  };
}

/** JSON with object keys sorted at every level: the text a configurable is hashed by. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (typeof v === "object" && v !== null)
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(v) ?? "null";
}

const CONFIGURABLE_EXPECTED = 'a JSON object (e.g. {"user_id": "u1"}) or the path of a .json file holding one';

/**
 * Reads `run.configurable`: an object (library users), a JSON object literal
 * (text starting with `{`), or the path of a .json file holding one. Anything
 * else — not valid JSON, an array, a string, a number, a missing file — is an
 * InvalidArgumentError (exit 2) naming `run.configurable`; a file's bad JSON is a
 * DataValidationError naming the file. A `thread_id` in it is replaced by
 * retrace's (one thread per case), with a warning.
 */
export async function parseConfigurable(given: string | Record<string, unknown>): Promise<ParsedConfigurable> {
  let value: unknown = given;
  if (typeof given === "string") {
    const text = given.trim();
    if (text.startsWith("{")) {
      try {
        value = JSON.parse(text);
      } catch (e) {
        throw new InvalidArgumentError("run.configurable", `${CONFIGURABLE_EXPECTED} (${(e as Error).message})`, given);
      }
      const deep = tooDeepAt(text);
      if (deep >= 0)
        throw new InvalidArgumentError(
          "run.configurable",
          `${CONFIGURABLE_EXPECTED} (${TOO_DEEP}, at column ${deep + 1})`,
          `${text.slice(0, 20)}…`,
        );
    } else {
      if (!existsSync(given)) throw new InvalidArgumentError("run.configurable", CONFIGURABLE_EXPECTED, given);
      value = parseJsonOrThrow(await readTextFileOrThrow(given), {
        file: given,
        expected: "a JSON object for run.configurable",
      }); // file:line:column (src/kb/json.ts)
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new InvalidArgumentError(
      "run.configurable",
      CONFIGURABLE_EXPECTED,
      Array.isArray(value) ? "an array" : value === null ? "null" : typeof value,
    );
  const obj = value as Record<string, unknown>;
  // Hashed and sent to the graph by code that recurses: deeper than any JSON retrace reads is exit 2 (src/kb/json.ts).
  if (valueTooDeep(obj))
    throw new InvalidArgumentError(
      "run.configurable",
      `${CONFIGURABLE_EXPECTED}, with at most ${MAX_JSON_DEPTH} levels of nesting`,
      `an object nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
  if ("thread_id" in obj)
    log.warn(
      "run.configurable: its thread_id is replaced by retrace's own (one thread per case, so each case's turns share their history)",
    );
  return { value: obj, record: { hash: sha256(canonicalJson(obj)), keys: Object.keys(obj).sort() } };
}
