/**
 * The "Next:" lines that end `retrace eval` / `retrace start` (stderr, so
 * stdout stays the report): the commands that are useful after this run, with
 * the options this run was given, so each one can be pasted as printed —
 * open the report in a browser, trace the first missed turn, record a
 * baseline and gate on it, evaluate your own graph. Read from the report and
 * the options only; nothing is computed here that the report does not hold.
 */
import type { Report } from "../eval/report/types.js";
import { missedTurns } from "../eval/report/render/shared.js";
import { EVAL_DEFAULTS } from "../app/eval-defaults.js";
import { shellLine } from "../shell.js";
import { outFile, type OutTarget } from "./out-formats.js";

/** The options of a run that the next commands repeat (data, graph and scoring; not the outputs or the gate). */
export interface RunArgs {
  graph?: string;
  /** `eval --traces`: the recording (no `trace` step: a recorded turn cannot be run again). */
  traces?: string;
  kb?: string;
  cases?: string;
  catalog?: string;
  baseline?: string;
  idKey?: string;
  idMap?: string;
  input?: string;
  /** As typed (JSON text or a file); an object given through the API is not repeated. */
  configurable?: string | Record<string, unknown>;
  /** The `--config` values as typed (files or inline JSON; src/cli/settings.ts keeps them): the run's retrieval and run settings. */
  configArgs?: string[];
  retrievalCall?: string;
  store?: string;
  embedder?: string;
  k?: number;
  /** The `--out` files (an HTML page written: no "see every turn in a browser" line). */
  outputs?: readonly OutTarget[];
  updateBaseline?: boolean;
}

/** The options that select the same data, graph and scoring as this run (those at their defaults left out). */
function sameRun(o: RunArgs): string[] {
  const a: string[] = [];
  const opt = (flag: string, v: string | number | undefined) => (v === undefined ? undefined : a.push(flag, String(v)));
  opt("--graph", o.graph);
  opt("--traces", o.traces);
  if (o.kb !== "kb") opt("--kb", o.kb);
  opt("--catalog", o.catalog);
  opt("--cases", o.cases);
  opt("--id-key", o.idKey);
  opt("--id-map", o.idMap);
  opt("--input", o.input);
  if (o.retrievalCall !== "last") opt("--retrieval-call", o.retrievalCall);
  const own = o.graph === undefined && o.traces === undefined; // retrace's own graph
  if (own && o.store !== EVAL_DEFAULTS.store) opt("--store", o.store);
  for (const c of o.configArgs ?? []) opt("--config", c); // the embedder, mode, configurable, ... the run was given
  if (o.k !== EVAL_DEFAULTS.k) opt("-k", o.k);
  return a;
}

/**
 * The "Next:" lines after a finished run; empty for a shard (its merge comes
 * next). `baseline`: whether the run was compared with one, and whether the
 * baseline file it would compare with exists.
 */
export function nextSteps(report: Report, o: RunArgs, baseline: { compared: boolean; exists: boolean }): string[] {
  if (report.shard !== undefined) return [];
  const run = sameRun(o);
  const graphArgs = o.graph !== undefined ? ["--graph", o.graph] : [];
  const data = run.filter((_, i) => !(o.graph !== undefined && i < 2)); // everything but --graph
  const lines: string[] = [];
  const miss = missedTurns(report)[0];
  if (miss !== undefined && o.traces === undefined)
    lines.push(
      `trace the first missed turn stage by stage: ${shellLine(["npx", "retrace", "trace", ...graphArgs, miss.caseId, "--turn", String(miss.turn), ...data])}`,
    );
  if (outFile(o.outputs, "html") === undefined)
    lines.push(
      `see every turn in a browser: ${shellLine(["npx", "retrace", "eval", ...run, "--out", "html:report.html"])}`,
    );
  const baselineArgs = o.baseline !== undefined ? ["--baseline", o.baseline] : [];
  // Both baseline checks: a mean that drops beyond the default tolerance, and any turn that was hit and is now missed.
  const gateLine = shellLine([
    "npx",
    "retrace",
    "eval",
    ...run,
    ...baselineArgs,
    "--gate",
    "max-drop=auto",
    "--gate",
    "max-flips=0",
  ]);
  const what = "fails on a mean that dropped beyond the default tolerance or a turn that was hit and is now missed";
  if (o.updateBaseline === true) lines.push(`gate later runs on the baseline just written (${what}): ${gateLine}`);
  else if (!baseline.compared && baseline.exists)
    lines.push(`gate on the baseline that is there (${what}): ${gateLine}`);
  else if (!baseline.compared)
    lines.push(
      `record this run as the baseline to gate on: ${shellLine(["npx", "retrace", "eval", ...run, ...baselineArgs, "--update-baseline"])}`,
    );
  if (o.graph === undefined && o.traces === undefined)
    lines.push(
      "evaluate your own LangGraph.js graph: npx retrace eval --graph ./agent.ts (docs/your-graph-in-five-minutes.md)",
    );
  return lines.map((l, i) => `${i === 0 ? "Next: " : "      "}${l}`);
}
