/**
 * The trace formats `--traces` reads, one line each (docs/architecture.md
 * §9, "…a trace format"). A record is of the first format whose `detect`
 * says so; the names, in this order, are `--traces-format`'s choices
 * (`TRACE_FORMATS`).
 */
import type { TraceFormatModule } from "./format.js";
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
