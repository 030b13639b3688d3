/**
 * What a command reads, declared before it runs (docs/reliability.md,
 * "Outputs: nothing the run read is replaced"): every path its options and
 * arguments name that exists — cases, cards, the KB folder, a baseline, a
 * quarantine, a configuration, traces, modules — becomes an input of the
 * run (src/atomic.ts `declareRunInput`), which the write layer refuses to
 * replace (exit 2, before anything starts). Output options are not inputs.
 */
import path from "node:path";
import type { Command } from "commander";
import { clearRunInputs, declareRunInput } from "../atomic.js";
import { findProject } from "./project.js";

/** The options that name what a command writes (or a cache it reads and writes by design), by attribute name. */
const OUTPUT_ATTRIBUTES: ReadonlySet<string> = new Set([
  "out",
  "html",
  "into",
  "junit",
  "reportJson",
  "prComment",
  "annotationsOut",
  "feedbackOut",
  "trec",
  "judgeCache",
  "dataDir",
  "runOut",
]);

/** `graph.ts#makeGraph` names the file `graph.ts`. */
const fileOf = (value: string) => value.replace(/#[^/\\]*$/, "");

/**
 * Declares the inputs of the command about to run (a commander preAction
 * hook). Runs twice: first as the program's hook, on what was typed
 * (`--config` files included), clearing the inputs of any earlier command;
 * then (`settled`) as the last hook of the command itself, once the project
 * file and the `--config` layers have set their values (a `kb`, `cases`,
 * `baseline` or module of the project file, a `run.judge` of a `--config`
 * file), adding those and the project file itself.
 */
export function declareCommandInputs(cmd: Command, o: { settled?: boolean } = {}): void {
  if (o.settled === true) {
    // The project file: retrace.config.json, or the package.json holding the "retrace" key (src/cli/project.ts).
    let project: ReturnType<typeof findProject>;
    try {
      project = findProject();
    } catch {
      project = null; // a bad project file is the settings hook's error, already thrown before this hook runs
    }
    if (project !== null) declareRunInput(project.file.replace(/ \("retrace"\)$/, ""), "the project file");
  } else clearRunInputs();
  const opts = cmd.opts<Record<string, unknown>>();
  for (const option of cmd.options) {
    const key = option.attributeName();
    if (OUTPUT_ATTRIBUTES.has(key)) continue;
    const value = opts[key];
    const values = typeof value === "string" ? [value] : Array.isArray(value) ? value : [];
    for (const v of values) {
      if (typeof v !== "string" || v === "") continue;
      // The KB folder: every file in it, and any path under cards/ (a new file there is a card of the next run).
      if (key === "kb") {
        declareRunInput(v, "the KB folder");
        declareRunInput(path.join(v, "cards"), "the KB's cards folder", { anythingInside: true });
      } else declareRunInput(fileOf(v), `the ${option.long ?? option.flags} input`);
    }
  }
  for (const arg of cmd.args) if (arg !== "") declareRunInput(fileOf(arg), "an input file");
}
