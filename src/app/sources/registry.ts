/**
 * The sources of an eval, one line each (docs/architecture.md, "Adding a
 * source"): the first whose option is given is the run's source, retrace's
 * own graph (selected by no option) last. `runEval` and `runGraphEval` (the
 * use-cases) check the source's settings and run it; the CLI reads the same
 * rules (`UNUSED_SETTINGS`, `TRACE_UNUSED_SETTINGS`) when it parses options.
 */
import { InvalidArgumentError } from "../../errors.js";
import type { EvalOutcome } from "../evaluate.js";
import type { GraphEvalOptions } from "../graph-options.js";
import type { UseCaseHooks } from "../progress.js";
import { graph } from "./graph.js";
import { ownGraph } from "./own-graph.js";
import {
  refuseUnused,
  type RunEvalOptions,
  type Source,
  type SourceKind,
  type SourceOptions,
  type SourceTrace,
  type TurnsRequest,
  type UnusedRule,
} from "./source.js";
import type { GraphTurn } from "../../eval/sweep/external-graph.js";
import { traces } from "./traces.js";

export {
  SETTING_NAMES,
  firstUnusedSetting,
  type RunEvalOptions,
  type SourceKind,
  type SourceTrace,
  type TurnsRequest,
  type UnusedRule,
} from "./source.js";

/** Every source, in the order they are tried: one line per source. */
export const SOURCES = [
  traces, // --traces FILE: recorded traces, scored as recorded
  graph, // --graph FILE[#export]: a graph module of yours
  ownGraph, // the default: retrace's own graph
] as const satisfies readonly Source[];

/** The source the options select: the first whose option is given (retrace's own graph when none is). */
export function sourceFor(o: { graph?: string | undefined; traces?: string | undefined }): (typeof SOURCES)[number] {
  return SOURCES.find((s) => s.selectedBy === null || o[s.selectedBy] !== undefined)!;
}

/**
 * Each source the options name, with the options as that source's eval takes
 * them: one for an eval (the options as given); a labelling run may pool a
 * graph and a recording (`--pool graph,recorded`), and then each gets the
 * options without the other's selecting option and without the settings its
 * eval refuses (`unused`: `--input` for a recording). Retrace's own graph
 * when they name none.
 */
export function sourcesNamed<O extends { graph?: string | undefined; traces?: string | undefined }>(
  o: O,
): { source: Source; options: O }[] {
  const named: Source[] = SOURCES.filter((s) => s.selectedBy !== null && o[s.selectedBy] !== undefined);
  if (named.length < 2) return [{ source: sourceFor(o), options: o }];
  return named.map((s) => {
    const options: Record<string, unknown> = { ...o };
    for (const other of named) if (other !== s) options[other.selectedBy!] = undefined;
    for (const rule of s.unused) for (const setting of rule.settings) options[setting] = undefined;
    return { source: s, options: options as O };
  });
}

/** What `retrace trace` does with the source the options select (`Source.trace`). */
export function sourceTrace(o: { graph?: string | undefined; traces?: string | undefined }): SourceTrace {
  return sourceFor(o).trace;
}

/** The option that selects the options' source as a command line spells it (` --traces FILE`, ` --graph FILE#export`), "" for retrace's own graph. */
export function sourceFlag(o: { graph?: string | undefined; traces?: string | undefined }): string {
  const { selectedBy } = sourceFor(o);
  return selectedBy === null ? "" : ` --${selectedBy} ${o[selectedBy]!}`;
}

/** The kind of source options select: `traces` wins over `graph`, which wins over retrace's own graph. */
export function sourceKindOf(o: { graph?: string | undefined; traces?: string | undefined }): SourceKind {
  return sourceFor(o).kind;
}

/** The options seen as their source reads them (a discriminated union on `kind`). */
export function sourceOptions(o: RunEvalOptions): SourceOptions {
  return { kind: sourceKindOf(o), options: o } as SourceOptions;
}

/**
 * The turns of the source the options select, for `retrace trace` and
 * `retrace label` (`Source.turns`): one list per `request.modes` entry for
 * retrace's own graph, else one list.
 */
export function sourceTurns(
  o: Partial<RunEvalOptions> & { graph?: string | undefined; traces?: string | undefined },
  request: TurnsRequest,
): Promise<GraphTurn[][]> {
  return (sourceFor(o).turns as (x: typeof o, r: TurnsRequest) => Promise<GraphTurn[][]>)(o, request);
}

/** Each source's unused settings for `retrace eval`, checked in this order (the first one found is the message). */
export const UNUSED_SETTINGS: Readonly<Record<SourceKind, readonly UnusedRule[]>> = Object.fromEntries(
  SOURCES.map((s) => [s.kind, s.unused]),
) as unknown as Record<SourceKind, readonly UnusedRule[]>;

/** `retrace trace`'s own rules: its sources are retrace's graph, yours and recorded traces (each source's `traceUnused`, else its eval rules). */
export const TRACE_UNUSED_SETTINGS: Readonly<Record<SourceKind, readonly UnusedRule[]>> = Object.fromEntries(
  SOURCES.map((s: Source) => [s.kind, s.traceUnused ?? s.unused]),
) as unknown as Record<SourceKind, readonly UnusedRule[]>;

/**
 * The API's check (`runEval`, `runGraphEval`): a setting the options' source
 * does not use, given a value (other than its unset one), is an
 * InvalidArgumentError (exit 2) naming the setting and why.
 */
export function checkSourceSettings(o: object, kind: SourceKind = sourceKindOf(o as { graph?: string })): void {
  refuseUnused(o, UNUSED_SETTINGS[kind]);
}

/**
 * The one eval use-case (`retrace eval`, `retrace start`): the source the
 * options select — retrace's own graph, your graph module (`graph`) or
 * recorded traces (`traces`) — swept and reported by one body
 * (../evaluate.ts). A setting the source does not use, given a value, is
 * refused (InvalidArgumentError, exit 2) before anything starts.
 */
export async function runEval(given: RunEvalOptions, hooks: UseCaseHooks = {}): Promise<EvalOutcome> {
  // Settings and `config` through the one settings schema, as the CLI reads them (src/app/settings/read.ts).
  const { resolveSettings } = await import("../settings/read.js"); // loaded on use: the CLI reads this file's rules
  const options = await resolveSettings("eval", given, "runEval options");
  const selected = sourceOptions(options);
  const source = sourceFor(options);
  refuseUnused(options, source.unused);
  return (source.run as (o: SourceOptions["options"], h: UseCaseHooks) => Promise<EvalOutcome>)(
    selected.options,
    hooks,
  );
}

/**
 * The eval of a graph of your own (`graph`) or of recorded traces
 * (`traces`): `runEval` for options that name one of them; options that name
 * neither are refused (InvalidArgumentError, exit 2). Writes nothing
 * (`updateBaseline`: write it with `writeBaseline(graphBaselineFile(options), report)`).
 */
export async function runGraphEval(given: GraphEvalOptions, hooks: UseCaseHooks = {}): Promise<EvalOutcome> {
  if (sourceKindOf(given) !== "own") return runEval(given, hooks);
  const { resolveSettings } = await import("../settings/read.js");
  const o = await resolveSettings("eval", given, "runGraphEval options"); // as the CLI reads them (src/app/settings/read.ts)
  refuseUnused(o, ownGraph.unused);
  const { checkGraphEvalOptions } = await import("../graph-eval.js");
  checkGraphEvalOptions(o);
  throw new InvalidArgumentError("--graph", "a graph module (or --traces, recorded traces)", undefined);
}
