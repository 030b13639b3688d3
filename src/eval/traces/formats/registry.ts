/**
 * The trace formats `--traces` reads, one line each (docs/architecture.md
 * §9, "…a trace format"). A record is of the first format whose `detect`
 * says so; the names, in this order, are `--traces-format`'s choices
 * (`TRACE_FORMATS`).
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

/** The formats read, by name, in the registry's order: OTLP/JSON trace exports (OpenInference and OTel GenAI spans), LangSmith run exports and Langfuse trace / observation exports. */
export const TRACE_FORMATS: readonly TraceFormat[] = TRACE_FORMAT_MODULES.map((f) => f.name);

/** The format module named `name`. */
export function traceFormat(name: TraceFormat): TraceFormatModule<TraceFormat> {
  return TRACE_FORMAT_MODULES.find((f) => f.name === name)!;
}

/** The format of one record, or null when no format claims it (not an object, or none detects it). */
export function detectFormat(v: unknown): TraceFormat | null {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  return TRACE_FORMAT_MODULES.find((f) => f.detect(o))?.name ?? null;
}

/** The format module named `name`, or undefined when none is registered by that name (a report's `traces.format`). */
export function traceFormatNamed(name: string): TraceFormatModule<TraceFormat> | undefined {
  const modules: readonly TraceFormatModule<TraceFormat>[] = TRACE_FORMAT_MODULES;
  return modules.find((f) => f.name === name);
}

/** Whether `--out TARGET:` takes a recording of the format named `format` (the format's `writeBack`); false for no recording or a format not registered. */
export function writesBack(target: WriteBackTarget, format: string | undefined): boolean {
  return format !== undefined && traceFormatNamed(format)?.writeBack[target] !== undefined;
}

/**
 * The recordings `--out TARGET:` takes, in words, for its refusal: each
 * taking format's words, the target's namesake format first, then the
 * registry's order ("Langfuse trace exports or OTLP/JSON spans").
 */
export function writeBackWords(target: WriteBackTarget): string {
  const modules: readonly TraceFormatModule<TraceFormat>[] = TRACE_FORMAT_MODULES;
  const taking = modules.filter((f) => f.writeBack[target] !== undefined);
  const ordered = [...taking.filter((f) => f.name === target), ...taking.filter((f) => f.name !== target)];
  return ordered.map((f) => f.writeBack[target]!).join(" or ");
}
