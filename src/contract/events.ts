/**
 * The retrieval trace event (docs/architecture.md §5): the name and payload
 * with which a retrieval step publishes its trace (LangGraph's custom stream and
 * `dispatchCustomEvent`), and the guard a reader recognises it by. The agent's
 * retrieve node (src/nodes/retrieve.ts) emits it; the harness's capture
 * (src/eval/sweep/capture.ts) and trace collector read it.
 */
import type { RetrievalTrace } from "./trace.js";

/** Name of the custom event (and `type` of the custom-stream payload) carrying a retrieval trace. */
export const RETRIEVAL_TRACE_EVENT = "retrieval_trace";

/** The payload written to the custom stream and dispatched as the `retrieval_trace` event. */
export interface RetrievalTraceEvent {
  type: typeof RETRIEVAL_TRACE_EVENT;
  /** `configurable.thread_id` of the run, or null when the run has none. */
  threadId: string | null;
  trace: RetrievalTrace;
}

export function isRetrievalTraceEvent(x: unknown): x is RetrievalTraceEvent {
  if (typeof x !== "object" || x === null) return false;
  const e = x as Partial<RetrievalTraceEvent>;
  return (
    e.type === RETRIEVAL_TRACE_EVENT &&
    (e.threadId === null || typeof e.threadId === "string") &&
    typeof e.trace === "object" &&
    e.trace !== null &&
    Array.isArray(e.trace.retrievedIds) &&
    typeof e.trace.turn === "number"
  );
}
