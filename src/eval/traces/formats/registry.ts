/**
 * The trace formats `--traces` reads, one line each (docs/architecture.md
 * §9, "…a trace format"). A record is of the first format whose `detect`
 * says so; the names, in this order, are `--traces-format`'s choices
 * (`TRACE_FORMATS`). Everything that depends on the format — reading,
 * `cases import`, score write-back, the report's header words — asks this
 * registry (the lookups of `formatRegistry`), never a list of names.
 */
import type { TraceFormatModule, WriteBackTarget } from "./format.js";
import { langfuseFormat } from "./langfuse.js";
import { langsmithFormat } from "./langsmith.js";
import { otlpFormat } from "./otlp.js";

/** Every trace format: one line per format. */
export const TRACE_FORMAT_MODULES = [
  otlpFormat, // OTLP/JSON: OpenInference and OTel GenAI spans
  langsmithFormat, // LangSmith runs
  langfuseFormat, // Langfuse traces and observations
] as const satisfies readonly TraceFormatModule[];

/** A trace format's name (`--traces-format`). */
export type TraceFormat = (typeof TRACE_FORMAT_MODULES)[number]["name"];

/**
 * The registry's lookups over a list of format modules: the exports of this
 * module are those of the list above; test/eval/trace-formats.test.ts builds
 * them over the list with one format more, and every consumer follows.
 */
export function formatRegistry<N extends string>(modules: readonly TraceFormatModule<N>[]) {
  const named = (name: string) => modules.find((f) => f.name === name);
  return {
    TRACE_FORMAT_MODULES: modules,
    TRACE_FORMATS: modules.map((f) => f.name) as readonly N[],
    /** The format module named `name`. */
    traceFormat: (name: N): TraceFormatModule<N> => named(name)!,
    /** The format module named `name`, or undefined when none is registered by that name (a report's `traces.format`). */
    traceFormatNamed: (name: string): TraceFormatModule<N> | undefined => named(name),
    /** The format of one record, or null when no format claims it (not an object, or none detects it). */
    detectFormat(v: unknown): N | null {
      if (typeof v !== "object" || v === null || Array.isArray(v)) return null;
      const o = v as Record<string, unknown>;
      return modules.find((f) => f.detect(o))?.name ?? null;
    },
    /** Whether `--out TARGET:` takes a recording of the format named `format` (the format's `writeBack`); false for no recording or a format not registered. */
    writesBack: (target: WriteBackTarget, format: string | undefined): boolean =>
      format !== undefined && named(format)?.writeBack[target] !== undefined,
    /**
     * The recordings `--out TARGET:` takes, in words, for its refusal: each
     * taking format's words, the target's namesake format first, then the
     * registry's order ("Langfuse trace exports or OTLP/JSON spans").
     */
    writeBackWords: (target: WriteBackTarget): string =>
      takingFirst(modules, target)
        .map((f) => f.writeBack[target]!)
        .join(" or "),
    /** Every format's recordings named short, for help texts that take them all (`cases import`): "OTLP spans, LangSmith runs or Langfuse exports". */
    recordingsHelp: (): string => orList(modules.map((f) => f.helpName)),
    /** Every format's recordings named in full, with what writes them, for `eval --traces`'s help: "an OTLP/JSON export (…), LangSmith runs (listRuns() output) or …". */
    recordingsSourceHelp: (): string => orList(modules.map((f) => f.helpSource)),
    /** The same recordings named short, for `--out TARGET:`'s help (src/cli/out-formats.ts): "Langfuse exports or OTLP spans". */
    writeBackHelp: (target: WriteBackTarget): string =>
      takingFirst(modules, target)
        .map((f) => f.helpName)
        .join(" or "),
  };
}

/** "a, b or c" (one name alone as it is). */
function orList(names: readonly string[]): string {
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(", ")} or ${names.at(-1)!}`;
}

/** The formats whose recordings `--out TARGET:` takes: the target's namesake format first, then the registry's order. */
function takingFirst<N extends string>(modules: readonly TraceFormatModule<N>[], target: WriteBackTarget) {
  const taking = modules.filter((f) => f.writeBack[target] !== undefined);
  return [...taking.filter((f) => f.name === target), ...taking.filter((f) => f.name !== target)];
}

const REGISTRY = formatRegistry<TraceFormat>(TRACE_FORMAT_MODULES);

/** The formats read, by name, in the registry's order: OTLP/JSON trace exports (OpenInference and OTel GenAI spans), LangSmith run exports and Langfuse trace / observation exports. */
export const TRACE_FORMATS: readonly TraceFormat[] = REGISTRY.TRACE_FORMATS;

export const {
  traceFormat,
  traceFormatNamed,
  detectFormat,
  writesBack,
  writeBackWords,
  writeBackHelp,
  recordingsHelp,
  recordingsSourceHelp,
} = REGISTRY;
