/**
 * The project file (docs/configuration.md, "The project file"): what a
 * project always passes, so that `npx retrace eval`, `trace CASE` and `eval
 * --update-baseline` need no flags. `retrace.config.json`, or a `"retrace"`
 * key in package.json, found from the working folder upward (the first
 * folder holding either wins).
 *
 * ```json
 * { "version": 1,
 *   "graph": "./agent.ts", "kb": "helpcentre", "idKey": "articleId",
 *   "cases": "helpcentre/eval/cases.jsonl",
 *   "gates": ["max-flips=0"], "outputs": ["html:report.html"],
 *   "retrieval": { ... }, "run": { "concurrency": 4 } }
 * ```
 *
 * One zod schema (PROJECT_SCHEMA). The run-selecting keys (`graph`,
 * `traces`, `kb`, `catalog`, `cases`, `idKey`, `idMap`, `input`, `store`,
 * `k`, `baseline`) are the options of the same names, as defaults: a flag
 * typed overrides them. `gates` and `outputs` are `--gate` and `--out`
 * values, used when none is typed. `retrieval`, `locales` and `run` are the
 * sections of `--config` (src/cli/settings.ts), read as its first layer:
 * every `--config` value layers on top. Paths are relative to the file's
 * folder.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { DataValidationError } from "../errors.js";
import { parseJsonOrThrow } from "../kb/json.js";
import { RUN_SECTION_SCHEMA } from "../app/settings/schema.js";

/** The project file's name. */
export const PROJECT_FILE = "retrace.config.json";

/** The keys that are options of a run, as the options' attribute names; those holding paths are resolved against the file's folder. */
const PATH_KEYS = ["graph", "traces", "kb", "catalog", "cases", "idMap", "input", "baseline"] as const;

/** The project file's schema: the run-selecting keys, gates, outputs and the `--config` sections. */
export const PROJECT_SCHEMA = z
  .object({
    version: z.literal(1).optional(),
    graph: z.string().min(1).optional(),
    traces: z.string().min(1).optional(),
    kb: z.string().min(1).optional(),
    catalog: z.string().min(1).optional(),
    cases: z.string().min(1).optional(),
    idKey: z.string().min(1).optional(),
    idMap: z.string().min(1).optional(),
    input: z.string().min(1).optional(),
    store: z.string().min(1).optional(),
    k: z.number().int().positive().optional(),
    baseline: z.string().min(1).optional(),
    gates: z.array(z.string().min(1)).optional(),
    outputs: z.array(z.string().min(1)).optional(),
    retrieval: z.record(z.unknown()).optional(),
    locales: z.record(z.unknown()).optional(),
    // Checked against the one settings schema (src/app/settings/schema.ts) when the file is read, values kept as written.
    run: z
      .record(z.unknown())
      .superRefine((run, ctx) => {
        const r = RUN_SECTION_SCHEMA.safeParse(run);
        if (!r.success) for (const i of r.error.issues) ctx.addIssue(i);
      })
      .optional(),
  })
  .strict();
export type ProjectSettings = z.infer<typeof PROJECT_SCHEMA>;

/** A project file found: where, and its settings with paths relative to the working folder. */
export interface Project {
  file: string;
  settings: ProjectSettings;
}

/** The project file of `cwd`: `retrace.config.json` or package.json's `"retrace"` key in `cwd` or the nearest folder above holding one; null when none. */
export function findProject(cwd: string = process.cwd()): Project | null {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const own = path.join(dir, PROJECT_FILE);
    if (existsSync(own)) return readProject(own, null, cwd);
    const pkg = path.join(dir, "package.json");
    if (existsSync(pkg)) {
      const data = parseJsonOrThrow(readFileSync(pkg, "utf8"), { file: pkg, expected: "a package.json file" });
      if (typeof data === "object" && data !== null && "retrace" in data)
        return readProject(pkg, (data as Record<string, unknown>).retrace, cwd);
    }
    if (path.dirname(dir) === dir) return null;
  }
}

/** Reads and checks one project file (`raw`: package.json's "retrace" value); exit 2 naming the file and the key of a bad value. */
function readProject(file: string, raw: unknown, cwd: string): Project {
  const data = raw ?? parseJsonOrThrow(readFileSync(file, "utf8"), { file, expected: "a retrace project file" });
  const where = raw === null ? file : `${file} ("retrace")`;
  const parsed = PROJECT_SCHEMA.safeParse(data);
  if (!parsed.success)
    throw new DataValidationError(
      parsed.error.issues.map((i) => ({
        file: where,
        field: i.path.join(".") || "(root)",
        message:
          i.code === "unrecognized_keys"
            ? i.path.length === 0
              ? `unknown key ${i.keys.join(", ")} (keys: ${Object.keys(PROJECT_SCHEMA.shape).join(", ")}; docs/configuration.md)`
              : `unknown key ${i.keys.join(", ")} (docs/configuration.md)`
            : i.message,
      })),
    );
  const settings: ProjectSettings = { ...parsed.data };
  const dir = path.dirname(file);
  for (const key of PATH_KEYS) {
    const v = settings[key];
    if (v === undefined) continue;
    const hash = key === "graph" || key === "idMap" || key === "input" ? v.indexOf("#") : -1;
    const [p, rest] = hash < 0 ? [v, ""] : [v.slice(0, hash), v.slice(hash)];
    const rel = path.relative(cwd, path.resolve(dir, p)) || ".";
    settings[key] = `${rel.startsWith("..") || path.isAbsolute(rel) || !p.startsWith("./") ? rel : `./${rel}`}${rest}`;
  }
  return { file: where, settings };
}

/** The `--config` layer of a project: its `retrieval`, `locales` and `run` sections (null: none). */
export function projectConfigLayer(p: Project): { where: string; raw: Record<string, unknown> } | null {
  const { retrieval, locales, run } = p.settings;
  if (retrieval === undefined && locales === undefined && run === undefined) return null;
  return {
    where: p.file,
    raw: {
      version: 1,
      ...(retrieval !== undefined ? { retrieval } : {}),
      ...(locales !== undefined ? { locales } : {}),
      ...(run !== undefined ? { run } : {}),
    },
  };
}

/** The run-selecting keys, as option attributes, in the order they are applied. */
export const PROJECT_OPTION_KEYS = [...PATH_KEYS, "idKey", "store", "k"] as const;
