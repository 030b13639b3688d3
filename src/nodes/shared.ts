/**
 * Small helpers the nodes share: reading the conversation and finding the
 * trace of a turn. The nodes are typed against the structural state shapes
 * below (the channels each one reads), not against the graph's Annotation,
 * so they sit one layer below src/graph and work in any graph that has the
 * channels.
 */
import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { isLocale, type Locale } from "../kb/types.js";
import type { RetrievalTrace } from "../retrieval/types.js";

/** The channels of the retrace state, as the nodes see them (each node reads a subset). */
export interface ConversationState {
  messages?: BaseMessage[];
  locale?: Locale | undefined;
  turn?: number;
  query?: string;
  retrieval?: RetrievalTrace[];
}

export function isHuman(m: BaseMessage): boolean {
  return HumanMessage.isInstance(m);
}

/** Plain text of a message (text content blocks joined). */
export function messageText(m: BaseMessage): string {
  return m.text;
}

/** Text of every human message, oldest first. */
export function humanTexts(messages: readonly BaseMessage[] | undefined): string[] {
  return (messages ?? []).filter(isHuman).map(messageText);
}

/** Text of the latest human message, or undefined when there is none. */
export function lastHumanText(messages: readonly BaseMessage[] | undefined): string | undefined {
  const list = messages ?? [];
  for (let i = list.length - 1; i >= 0; i--) {
    const m = list[i];
    if (m !== undefined && isHuman(m)) return messageText(m);
  }
  return undefined;
}

/** 0-based index of the current user turn: the number of human messages minus one (−1 when there is none). */
export function currentTurnIndex(messages: readonly BaseMessage[] | undefined): number {
  return (messages ?? []).filter(isHuman).length - 1;
}

/** The state's locale when it is a valid one, else undefined. */
export function stateLocale(state: { locale?: unknown }): Locale | undefined {
  return isLocale(state.locale) ? state.locale : undefined;
}

/** The retrieval trace of `turn`, if one was recorded (the latest, should a turn have been retrieved twice). */
export function traceForTurn(traces: readonly RetrievalTrace[] | undefined, turn: number): RetrievalTrace | undefined {
  const list = traces ?? [];
  for (let i = list.length - 1; i >= 0; i--) {
    const t = list[i];
    if (t !== undefined && t.turn === turn) return t;
  }
  return undefined;
}
