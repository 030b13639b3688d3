/**
 * The instrumented `retrieve` node (docs/architecture.md §5). Add it to any graph:
 *
 * ```ts
 * import { Annotation, StateGraph, START } from "@langchain/langgraph";
 * import { RetrievalAnnotation, retrieveNode } from "retrace-eval";
 *
 * const MyState = Annotation.Root({ ...RetrievalAnnotation.spec, answer: Annotation<string> });
 * const graph = new StateGraph(MyState)
 *   .addNode("retrieve", retrieveNode)
 *   .addEdge(START, "retrieve")
 *   // ...
 *   .compile()
 *   .withConfig({ configurable: { retriever } });
 * ```
 *
 * Channels it reads (all optional):
 *   - `query`: the retrieval query; when absent or empty, the text of the
 *     latest human message in `messages`;
 *   - `messages`: see `query`, and for `turn`;
 *   - `locale`: filters retrieval to one locale's cards;
 *   - `turn`: 0-based turn index written into the trace; when absent, the
 *     number of human messages minus one.
 * Channel it writes: `retrieval` (`[trace]`; give it an appending reducer,
 * as `RetrievalAnnotation` does).
 *
 * Configuration (`config.configurable`): `retriever` (required), `k`,
 * `denseK`, `bm25K`, `mode`, `rerank`, `fusion`, `rrfK`, `weights`
 * (forwarded only when set, so the retriever's own defaults apply otherwise:
 * see ./configuration.ts), `locales` (per-locale overrides of those keys for
 * the turn's locale), `thread_id`.
 *
 * The ONE trace value returned by the retriever is written three ways:
 *   1. into state: `{ retrieval: [trace] }`;
 *   2. to LangGraph's custom stream: `config.writer({ type: "retrieval_trace", threadId, trace })`
 *      (visible with `streamMode: "custom"` or `["updates", "custom"]`);
 *   3. as a LangChain custom event named `retrieval_trace` with the same
 *      payload, via `dispatchCustomEvent`, so any callback handler (LangSmith
 *      tracing, RetrievalTraceCollector) and `streamEvents` v2 see it.
 * The trace is in state for its turn whatever the answer does later (a
 * refusal does not remove it).
 */
import { dispatchCustomEvent } from "@langchain/core/callbacks/dispatch";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { InvalidArgumentError } from "../errors.js";
import { isBlankText } from "../kb/types.js";
import type { RetrievalTrace, RetrieveOptions } from "../retrieval/types.js";
import { ensureConfiguration, retrievalSettingsFor } from "./configuration.js";
import { RETRIEVAL_TRACE_EVENT, type RetrievalTraceEvent } from "../contract/events.js";
import { currentTurnIndex, lastHumanText, stateLocale, type ConversationState } from "./shared.js";

// The event contract (name, payload, guard) lives below both sides, in src/contract/events.ts.
export { RETRIEVAL_TRACE_EVENT, isRetrievalTraceEvent, type RetrievalTraceEvent } from "../contract/events.js";

export type RetrieveNodeState = Pick<ConversationState, "messages" | "locale" | "turn" | "query">;
export interface RetrieveNodeUpdate {
  retrieval: RetrievalTrace[];
}

/** The `retrieve` node: runs the configured retriever on this turn's query and records the trace. */
export async function retrieveNode(
  state: RetrieveNodeState,
  config?: LangGraphRunnableConfig,
): Promise<RetrieveNodeUpdate> {
  const conf = ensureConfiguration(config);
  if (conf.retriever === null) {
    throw new InvalidArgumentError(
      "retriever",
      "a Retriever in config.configurable.retriever (the retrieve node needs one)",
      null,
    );
  }
  // Blank = only Unicode white space and format characters (NBSP, zero-width space, ZWJ, BOM).
  const query = !isBlankText(state.query ?? "") ? (state.query as string) : (lastHumanText(state.messages) ?? "");
  if (isBlankText(query)) {
    throw new InvalidArgumentError(
      "query",
      "a non-empty query (state.query, or a human message in state.messages; not only white space or invisible format characters)",
      query,
    );
  }
  const turn =
    typeof state.turn === "number" && Number.isInteger(state.turn) && state.turn >= 0
      ? state.turn
      : Math.max(0, currentTurnIndex(state.messages));
  const locale = stateLocale(state);
  // Only the retrieval keys that are set (this locale's overrides applied): the retriever keeps its own defaults for the others.
  const options: RetrieveOptions = {
    ...retrievalSettingsFor(conf, locale),
    turn,
    ...(locale !== undefined ? { locale } : {}),
  };
  const trace = await conf.retriever.retrieve(query, options);
  const event: RetrievalTraceEvent = { type: RETRIEVAL_TRACE_EVENT, threadId: conf.threadId, trace };
  config?.writer?.(event);
  // Without a parent run (a direct call outside any runnable) there is no handler to reach: a no-op.
  await dispatchCustomEvent(RETRIEVAL_TRACE_EVENT, event, config);
  return { retrieval: [trace] };
}
