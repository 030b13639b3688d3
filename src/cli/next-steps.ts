/**
 * The "Next:" lines that end `retrace eval` / `retrace start` (stderr, so
 * stdout stays the report): the commands that are useful after this run, with
 * the options this run was given, so each one can be pasted as printed —
 * open the report in a browser, trace the first missed turn, record a
 * baseline and gate on it, evaluate your own graph. Read from the report and
 * the options only; nothing is computed here that the report does not hold.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Report } from "../eval/report/types.js";
import { missedTurns } from "../eval/report/render/shared.js";
import { EVAL_DEFAULTS } from "../app/eval-defaults.js";
import { shellLine } from "../shell.js";
import { outFile, type OutTarget } from "./out-formats.js";
import { SETTINGS } from "../app/settings/schema.js";
import { sourceFor, sourcesNamed } from "../app/sources/registry.js";

/** The options of a run that the next commands repeat (data, graph and scoring; not the outputs or the gate). */
export interface RunArgs {
  graph?: string;
  /** `eval --traces`: the recording (the `trace` line traces the missed turn from it: `trace --traces`). */
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
  /** The `--gate` values as typed: the eval lines repeat them, so a followed line gates (and exits) as this run did. */
  gatesTyped?: readonly string[];
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
  const own = sourceFor(o).selectedBy === null; // retrace's own graph (no option selects it)
  if (own && o.store !== EVAL_DEFAULTS.store) opt("--store", o.store);
  for (const c of o.configArgs ?? []) opt("--config", c); // the embedder, mode, configurable, ... the run was given
  if (o.k !== EVAL_DEFAULTS.k) opt("-k", o.k);
  return a;
}

/** A `--config` value as JSON: inline JSON as typed, else the file it names; null when it cannot be read as a JSON object. */
function configValue(arg: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(arg.trimStart().startsWith("{") ? arg : readFileSync(arg, "utf8"));
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The settings of the schema `retrace trace` does not read (`run.concurrency`, `run.seed`, …): trace refuses them. */
const NOT_TRACE = new Set(SETTINGS.filter((s) => !s.commands.includes("trace")).map((s) => s.key));

/**
 * The run's `--config` values for its `trace` line: each as typed when trace
 * reads every setting it holds; else what trace reads of it, inline (the
 * run's `run.configurable`, history, retrieval settings, `traces` filters are
 * kept; `run.concurrency`, `run.seed`, … which `trace` refuses, left out); a
 * value left with nothing is dropped. A value that cannot be read is kept as
 * typed (the run read it: it is one).
 */
export function traceConfigArgs(configArgs: readonly string[]): string[] {
  return configArgs.flatMap((arg) => {
    const v = configValue(arg);
    if (v === null) return [arg];
    let dropped = false;
    const kept: Record<string, unknown> = {};
    for (const [section, body] of Object.entries(v)) {
      if (typeof body !== "object" || body === null || Array.isArray(body)) {
        kept[section] = body;
        continue;
      }
      const inner = Object.fromEntries(
        Object.entries(body as Record<string, unknown>).filter(([key]) => !NOT_TRACE.has(`${section}.${key}`)),
      );
      if (Object.keys(inner).length < Object.keys(body).length) dropped = true;
      if (Object.keys(inner).length > 0) kept[section] = inner;
    }
    if (!dropped) return [arg];
    return Object.keys(kept).length > 0 ? [JSON.stringify(kept)] : [];
  });
}

/**
 * The "Next:" lines after a finished run; empty for a shard (its merge comes
 * next). `baseline`: whether the run was compared with one, and whether the
 * baseline file it would compare with exists.
 */
export function nextSteps(report: Report, o: RunArgs, baseline: { compared: boolean; exists: boolean }): string[] {
  if (report.shard !== undefined) return [];
  const run = sameRun(o);
  const gates = (keep: (g: string) => boolean) => (o.gatesTyped ?? []).filter(keep).flatMap((g) => ["--gate", g]);
  const evalRun = [...run, ...gates(() => true)];
  const graphArgs = o.graph !== undefined ? ["--graph", o.graph] : [];
  // The trace line: everything but --graph (it goes before the case), with the --config values trace reads.
  const data = sameRun({ ...o, graph: undefined, configArgs: traceConfigArgs(o.configArgs ?? []) });
  const lines: string[] = [];
  const miss = missedTurns(report)[0];
  // A recorded turn is traced from the recording (`trace --traces`), as a graph's or retrace's own turn is run again.
  if (miss !== undefined)
    lines.push(
      `trace the first missed turn stage by stage: ${shellLine(["npx", "retrace", "trace", ...graphArgs, miss.caseId, "--turn", String(miss.turn), ...data])}`,
    );
  if (outFile(o.outputs, "html") === undefined)
    lines.push(
      `see every turn in a browser: ${shellLine(["npx", "retrace", "eval", ...evalRun, "--out", "html:report.html"])}`,
    );
  // With a catalog there is no KB folder: the baseline goes beside the cases (the default <kb>/eval/ would make a stray kb/eval/).
  const baselineArgs =
    o.baseline !== undefined
      ? ["--baseline", o.baseline]
      : o.catalog !== undefined && !baseline.compared
        ? ["--baseline", catalogBaseline(o)]
        : [];
  // Both baseline checks: a mean that drops beyond the default tolerance, and any turn that was hit and is now missed.
  const gateLine = shellLine([
    "npx",
    "retrace",
    "eval",
    ...run,
    ...gates((g) => !/^max-(drop|flips)\b/.test(g)), // the two below replace the run's own
    ...baselineArgs,
    "--gate",
    "max-drop=auto",
    "--gate",
    "max-flips=0",
  ]);
  const what = "fails on a mean that dropped beyond the default tolerance or a turn that was hit and is now missed";
  if (o.updateBaseline === true) lines.push(`gate later runs on the baseline just written (${what}): ${gateLine}`);
  else if (
    !baseline.compared &&
    (o.catalog !== undefined && o.baseline === undefined ? existsSync(catalogBaseline(o)) : baseline.exists)
  )
    lines.push(`gate on the baseline that is there (${what}): ${gateLine}`);
  else if (!baseline.compared)
    lines.push(
      `record this run as the baseline to gate on: ${shellLine(["npx", "retrace", "eval", ...evalRun, ...baselineArgs, "--update-baseline"])}`,
    );
  // A page to read, not a command: the graph file is the user's to write.
  if (sourceFor(o).selectedBy === null)
    lines.push("evaluate your own LangGraph.js graph: see docs/your-graph-in-five-minutes.md");
  return block(lines);
}

/** "Next: " before the first line, its indent before the others. */
const block = (lines: readonly string[]) => lines.map((l, i) => `${i === 0 ? "Next: " : "      "}${l}`);

/** The baseline a run over a catalog records: `baseline.json` beside its cases file (the run writes no KB folder). */
function catalogBaseline(o: Pick<RunArgs, "cases" | "catalog">): string {
  return path.join(path.dirname(o.cases ?? o.catalog ?? "."), "baseline.json");
}

/** What a `retrace label` run labelled with: the options that pick the source its pool came from, repeated by the merge and eval lines after it. */
export interface LabelRunArgs {
  graph?: string;
  traces?: string;
  kb?: string;
  catalog?: string;
  idKey?: string;
  idMap?: string;
  input?: string;
  retrievalCall?: string;
  /** The run's `--config` values as typed (run.configurable and the other settings its graph ran with). */
  configArgs?: string[];
}

/** The options of a label run that define its source (the defaults left out). */
function labelSource(o: LabelRunArgs): string[] {
  const a: string[] = [];
  const opt = (flag: string, v: string | undefined) => (v === undefined ? undefined : a.push(flag, v));
  opt("--graph", o.graph);
  opt("--traces", o.traces);
  opt("--kb", o.kb);
  opt("--catalog", o.catalog);
  opt("--id-key", o.idKey);
  opt("--id-map", o.idMap);
  opt("--input", o.input);
  if (o.retrievalCall !== "last") opt("--retrieval-call", o.retrievalCall);
  for (const c of o.configArgs ?? []) a.push("--config", c);
  return a;
}

/**
 * The "Next:" lines after `retrace label` wrote its page: open it, label and
 * Export, then merge the export with the options this run was given (so that
 * the merge checks its ids against the same KB or catalog, and its own next
 * lines score the same graph or recording).
 */
export function labelPageNextSteps(o: LabelRunArgs, page: string, exportName: string, cases: string): string[] {
  return block([
    `open ${page} in a browser, label with the keyboard, Export (the browser saves ${exportName})`,
    `merge the export into the cases: ${shellLine(["npx", "retrace", "label", "--merge", exportName, "--into", cases, ...labelSource(o)])}`,
  ]);
}

/**
 * The "Next:" lines after `retrace label --merge`: the dataset check against
 * the KB or catalog given, then an eval of the same source over the merged
 * cases. None that would fail: without a KB or catalog, and no `kb` folder
 * here, nothing to check against (the merge said so); a catalog without a
 * graph or recording has nothing to evaluate.
 */
export function mergeNextSteps(o: LabelRunArgs, into: string, cwd: string = process.cwd()): string[] {
  const against = o.catalog !== undefined ? ["--catalog", o.catalog] : o.kb !== undefined ? ["--kb", o.kb] : [];
  if (against.length === 0 && !existsSync(path.join(cwd, "kb"))) return [];
  const lines = [`check the merged cases: ${shellLine(["npx", "retrace", "check", ...against, "--cases", into])}`];
  // One eval line per source named: a labelling run may pool a graph and a recording (--pool graph,recorded), and eval
  // scores one source a run; retrace's own graph against a bare catalog has nothing to run.
  for (const { source, options } of sourcesNamed(o))
    if (source.selectedBy !== null || o.catalog === undefined)
      lines.push(
        `score ${source.yours} on them: ${shellLine(["npx", "retrace", "eval", ...labelSource(options), "--cases", into])}`,
      );
  return block(lines);
}
