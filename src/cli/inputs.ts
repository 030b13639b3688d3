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

/** Declares the inputs of the command about to run (a commander preAction hook). */
export function declareCommandInputs(cmd: Command): void {
  clearRunInputs();
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
