/**
 * The agent's state, declared once (docs/architecture.md §5). Every channel lists its
 * reducer (how a node's partial update is merged) and its default (the value
 * before any node wrote it). With a checkpointer, every channel persists per
 * thread across turns; the caller sends one turn at a time as
 * `{ messages: [new HumanMessage(text)], locale }`.
 *
 * Channel names must not collide with node names (`contextualize`,
 * `retrieve`, `generate`): LangGraph rejects a node named like a state key.
 * The nodes (src/nodes, one layer below) declare the subset of these channels
 * they read as plain structural types, so they work in any graph whose state
 * has those channels.
 */
import { Annotation, messagesStateReducer, type Messages } from "@langchain/langgraph";
import type { BaseMessage } from "@langchain/core/messages";
import type { Locale } from "../kb/types.js";
import type { RetrievalTrace } from "../retrieval/types.js";

/** Appends one trace or a list of traces; never mutates either side. */
export function appendTraces(
  left: readonly RetrievalTrace[],
  right: RetrievalTrace | readonly RetrievalTrace[],
): RetrievalTrace[] {
  return left.concat(right as RetrievalTrace | RetrievalTrace[]);
}

/** Last write wins (LangGraph's LastValue semantics, spelled out so the default can be given). */
function replace<T>(_left: T, right: T): T {
  return right;
}

/**
 * The channels the exported retrieve node reads and writes. Spread
 * `RetrievalAnnotation.spec` into your own `Annotation.Root` to embed
 * `retrieveNode` in another graph (all channels are optional for the node
 * except `retrieval`, which it writes; see src/nodes/retrieve.ts).
 */
export const RetrievalAnnotation = Annotation.Root({
  /**
   * The conversation. Reducer: `messagesStateReducer` (appends, replaces a
   * message with the same id, handles RemoveMessage). Default `[]`.
   */
  messages: Annotation<BaseMessage[], Messages>({ reducer: messagesStateReducer, default: () => [] }),
  /**
   * Locale of the thread (`en`, `es-419`, `pt-BR`), set by the caller with the
   * turn's input; filters retrieval to that locale's cards. Reducer: last
   * write wins. Default `undefined` (no filter: every locale is searched).
   */
  locale: Annotation<Locale | undefined>({ reducer: replace, default: () => undefined }),
  /**
   * 0-based index of the current user turn (the index of the latest human
   * message among the thread's human messages), written by `contextualize`.
   * Reducer: last write wins. Default `-1` (no user turn yet).
   */
  turn: Annotation<number>({ reducer: replace, default: () => -1 }),
  /**
   * This turn's retrieval query, written by `contextualize` (a follow-up
   * carries the earlier subject). Reducer: last write wins. Default `""`.
   */
  query: Annotation<string>({ reducer: replace, default: () => "" }),
  /**
   * Every retrieval trace of the thread, one per retrieval (docs/architecture.md §5):
   * `retrievedIds` of each is what the evaluator scores for that turn.
   * Reducer: `appendTraces` (appends one trace or a list). Default `[]`.
   * Stays `[]` in the store-less graph.
   */
  retrieval: Annotation<RetrievalTrace[], RetrievalTrace | RetrievalTrace[]>({
    reducer: appendTraces,
    default: () => [],
  }),
});

/** The full state of the retrace agent: the retrieval channels plus the answer of the turn. */
export const RetraceState = Annotation.Root({
  ...RetrievalAnnotation.spec,
  /**
   * This turn's answer text (a refusal message when `refused`). Also appended
   * to `messages` as an AIMessage. Reducer: last write wins. Default `""`.
   */
  answer: Annotation<string>({ reducer: replace, default: () => "" }),
  /**
   * Card ids cited by this turn's answer, in citation order, without
   * duplicates; `[]` on a refusal. Replaced every turn (not accumulated).
   * Reducer: last write wins. Default `[]`.
   */
  citedIds: Annotation<string[]>({ reducer: replace, default: () => [] }),
  /**
   * True when this turn's answer declines (policy, weak evidence, no
   * retrieval). Reducer: last write wins. Default `false`.
   */
  refused: Annotation<boolean>({ reducer: replace, default: () => false }),
});

export type RetraceStateType = typeof RetraceState.State;
export type RetraceUpdateType = typeof RetraceState.Update;
export type RetrievalStateType = typeof RetrievalAnnotation.State;
export type RetrievalUpdateType = typeof RetrievalAnnotation.Update;
