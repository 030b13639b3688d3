/**
 * OTLP spans as Langfuse's OTLP endpoint ingests them (docs/recorded-traces.md,
 * "Langfuse"): the spans Langfuse's JS SDK (`@langfuse/tracing` with
 * `@langfuse/otel`'s span processor) and its LangChain callback handler
 * write, `langfuse.observation.*` attributes, the metadata flattened one key
 * an attribute (`langfuse.observation.metadata.thread_id`). The handler
 * records a retriever run as an observation of type `span` (there is no
 * retriever marker): a Langfuse observation is read as a retriever call when
 * its type is `retriever`, or when it is a `span` whose input is a plain
 * query string (not a JSON object or array) and whose output is a JSON array
 * of LangChain documents (`pageContent` on each; `[]` is an empty retrieval)
 * — or which has no output and level ERROR (the retriever threw: the
 * handler records `level` and `status_message` only).
 */
import type { RawDocument } from "./raw-document.js";

/** The `langfuse.*` attributes of one span that reading needs (as attribute values: strings). */
export interface LangfuseAttributes {
  type?: string;
  input?: unknown;
  output?: unknown;
  level?: unknown;
  statusMessage?: unknown;
  /** `langfuse.observation.metadata.<key>` values, by key. */
  metadata: Record<string, unknown>;
}

export const LANGFUSE_METADATA_PREFIX = "langfuse.observation.metadata.";

function json(v: unknown): unknown {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return undefined;
  }
}

/** The error of a Langfuse observation of level ERROR (its status message's first line), else null. */
export function langfuseError(a: LangfuseAttributes): string | null {
  if (a.level !== "ERROR") return null;
  const m =
    typeof a.statusMessage === "string" && a.statusMessage !== ""
      ? a.statusMessage
      : "the observation's level is ERROR";
  return m.split("\n")[0]!;
}

/** A Langfuse observation read as a retriever call (its query and documents), or null when it is none (see the module comment). */
export function langfuseRetrieverCall(a: LangfuseAttributes): { query: string; documents: RawDocument[] } | null {
  if (a.type !== "retriever" && a.type !== "span") return null;
  const input = a.input;
  const parsedInput = json(input);
  const plainQuery = typeof input === "string" && (typeof parsedInput !== "object" || parsedInput === null);
  const output = a.output === undefined ? undefined : json(a.output);
  const isDocuments =
    Array.isArray(output) &&
    output.every(
      (d) => typeof d === "object" && d !== null && typeof (d as { pageContent?: unknown }).pageContent === "string",
    );
  const threw = a.output === undefined && a.level === "ERROR";
  if (a.type === "span" && !(plainQuery && (isDocuments || threw))) return null;
  if (a.type === "retriever" && !(isDocuments || threw || a.output === undefined)) return null;
  const documents: RawDocument[] = isDocuments
    ? (output as Record<string, unknown>[]).map((d) => ({
        content: d.pageContent as string,
        ...(typeof d.metadata === "object" && d.metadata !== null ? { metadata: JSON.stringify(d.metadata) } : {}),
        ...(typeof d.id === "string" && d.id !== "" ? { id: d.id } : {}),
      }))
    : [];
  return { query: typeof input === "string" ? input : "", documents };
}

/** LangGraph's step of a Langfuse observation (its metadata's `langgraph_step`, a number or its decimal text). */
export function langfuseStep(a: LangfuseAttributes): number | undefined {
  const s = a.metadata.langgraph_step;
  const n = typeof s === "number" ? s : typeof s === "string" && /^\d+$/.test(s) ? Number(s) : undefined;
  return n !== undefined && Number.isFinite(n) ? n : undefined;
}
