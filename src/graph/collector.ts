/**
 * Trace hooks: collect every `retrieval_trace` a running graph emits, per
 * thread and turn, so an evaluator can score a graph it did not build (any
 * graph that embeds the retrieve node).
 *
 * Two ways in, same store:
 *   - as a LangChain callback handler: pass the collector in `callbacks`
 *     (`graph.invoke(input, { configurable: { thread_id }, callbacks: [collector] })`);
 *     it receives the `retrieval_trace` custom event through
 *     `handleCustomEvent`. The thread id comes from the event's metadata
 *     (LangGraph copies `configurable.thread_id` into the run metadata as
 *     `thread_id`), else from the `threadId` inside the payload, else null;
 *   - from a stream: `collectTraces(graph.stream(input, { streamMode: ["updates", "custom"] }))`
 *     reads the `["custom", payload]` chunks (also `[namespace, "custom", payload]`
 *     with subgraphs, and bare payloads of a `streamMode: "custom"` stream).
 * The handler is awaited (`awaitHandlers = true`), so the traces are in the
 * collector when `invoke` resolves.
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { RETRIEVAL_TRACE_EVENT, isRetrievalTraceEvent, type RetrievalTraceEvent } from "../nodes/retrieve.js";
import type { RetrievalTrace } from "../retrieval/types.js";

export { RETRIEVAL_TRACE_EVENT, isRetrievalTraceEvent };
export type { RetrievalTraceEvent };

/** One collected trace and where it came from. */
export interface CollectedTrace {
  threadId: string | null;
  trace: RetrievalTrace;
  /** `callback` (custom event), `stream` (custom stream chunk) or `state` (the `retrieval` channel of a returned state). */
  source: "callback" | "stream" | "state";
}

export class RetrievalTraceCollector extends BaseCallbackHandler {
  name = "RetrievalTraceCollector";
  override awaitHandlers = true;
  private readonly events: CollectedTrace[] = [];
  /** The same traces indexed by thread, so a sweep's per-turn lookups stay O(turns of the thread). */
  private readonly byThread = new Map<string | null, RetrievalTrace[]>();

  constructor() {
    super({ _awaitHandler: true });
  }

  override handleCustomEvent(
    eventName: string,
    data: unknown,
    _runId: string,
    _tags?: string[],
    metadata?: Record<string, unknown>,
  ): void {
    if (eventName !== RETRIEVAL_TRACE_EVENT || !isRetrievalTraceEvent(data)) return;
    const fromMetadata = metadata?.thread_id;
    const threadId =
      typeof fromMetadata === "string" || typeof fromMetadata === "number" ? String(fromMetadata) : data.threadId;
    this.add({ threadId, trace: data.trace, source: "callback" });
  }

  /** Records one trace (used by `collectTraces`; callers may feed traces from elsewhere). */
  add(entry: CollectedTrace): void {
    this.events.push(entry);
    const list = this.byThread.get(entry.threadId);
    if (list === undefined) this.byThread.set(entry.threadId, [entry.trace]);
    else list.push(entry.trace);
  }

  /** Every trace of a thread, in arrival order. */
  get(threadId: string | null): RetrievalTrace[] {
    return [...(this.byThread.get(threadId) ?? [])];
  }

  /** The trace of a thread's turn (the latest, should the turn have been retrieved twice), or undefined. */
  forTurn(threadId: string | null, turn: number): RetrievalTrace | undefined {
    const list = this.byThread.get(threadId) ?? [];
    for (let i = list.length - 1; i >= 0; i--) if (list[i]?.turn === turn) return list[i];
    return undefined;
  }

  /** Every collected trace, in arrival order. */
  all(): CollectedTrace[] {
    return [...this.events];
  }

  /** Thread ids seen, in order of first appearance. */
  threads(): (string | null)[] {
    return [...new Set(this.events.map((e) => e.threadId))];
  }

  get size(): number {
    return this.events.length;
  }

  clear(): void {
    this.events.length = 0;
    this.byThread.clear();
  }
}

/** The retrieval-trace payload of one stream chunk, if it carries one. */
export function traceEventOfChunk(chunk: unknown): RetrievalTraceEvent | undefined {
  if (isRetrievalTraceEvent(chunk)) return chunk;
  if (!Array.isArray(chunk)) return undefined;
  // ["custom", payload] or [namespace, "custom", payload]
  const mode = chunk.length === 3 ? chunk[1] : chunk[0];
  const payload = chunk.length === 3 ? chunk[2] : chunk[1];
  return mode === "custom" && isRetrievalTraceEvent(payload) ? payload : undefined;
}

/**
 * Drains a graph stream, collecting every retrieval trace it carries into
 * `into` (a new collector by default), and returns the collector. `onChunk`
 * sees every chunk, for callers that also want the updates.
 */
export async function collectTraces(
  stream: AsyncIterable<unknown>,
  options?: { into?: RetrievalTraceCollector; onChunk?: (chunk: unknown) => void },
): Promise<RetrievalTraceCollector> {
  const collector = options?.into ?? new RetrievalTraceCollector();
  for await (const chunk of stream) {
    options?.onChunk?.(chunk);
    const event = traceEventOfChunk(chunk);
    if (event !== undefined) collector.add({ threadId: event.threadId, trace: event.trace, source: "stream" });
  }
  return collector;
}
