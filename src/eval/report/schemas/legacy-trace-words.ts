/**
 * Reports written before a `--traces` run recorded how its format names
 * itself (`run.graph.traces.label` / `recordsName`, added within report
 * version 5; docs/schema-versions.md) get the words on read, from the three
 * formats retrace read then. This is migration, not a registry: a format is
 * registered by its module (src/eval/traces/formats/), which writes its words
 * into every report it makes; this table never grows.
 */

/** The header words of the formats reports were written with before the words were recorded. */
const HISTORICAL: Readonly<Record<string, { label: string; recordsName: string }>> = {
  otlp: { label: "OTLP/JSON", recordsName: "spans" },
  langsmith: { label: "LangSmith runs", recordsName: "runs" },
  langfuse: { label: "Langfuse", recordsName: "traces and observations" },
};

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The report with `run.graph.traces.label` / `recordsName` filled in, just
 * after `format`, when it lacks them and its format is one of the historical
 * three; otherwise the same object (a report that has them, or none to fill:
 * the schema then names what is missing). Pure: the input is never mutated.
 */
export function withTraceWords<T>(report: T): T {
  if (!isObject(report) || !isObject(report.run) || !isObject(report.run.graph)) return report;
  const traces = report.run.graph.traces;
  if (!isObject(traces) || "label" in traces || "recordsName" in traces || typeof traces.format !== "string")
    return report;
  const words = Object.hasOwn(HISTORICAL, traces.format) ? HISTORICAL[traces.format] : undefined;
  if (words === undefined) return report;
  const { format, ...rest } = traces;
  return {
    ...report,
    run: { ...report.run, graph: { ...report.run.graph, traces: { format, ...words, ...rest } } },
  } as T;
}
