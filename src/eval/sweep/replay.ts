/**
 * What earlier turns a graph sees when a case is replayed (`run.replay`,
 * docs/configuration.md#replay-own-or-recorded-history):
 *
 * - `own` (the default): the case's turns in order on one thread, so each
 *   turn sees the graph's own earlier answers (what the checkpointer kept);
 * - `recorded`: each turn on a fresh thread fed the conversation as it was
 *   recorded up to that turn — every earlier user message and the case's
 *   recorded assistant messages (`context`) — so every turn is evaluated on
 *   the conversation that really happened.
 *
 * Agent-free: plain messages here, LangChain messages built by `historyMessages`.
 */
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { EvalCase } from "../../kb/types.js";

export { REPLAY_MODES, type Replay } from "./replay-modes.js";

/** One message of a recorded conversation. */
export interface RecordedMessage {
  role: "user" | "assistant";
  content: string;
}

/**
 * The recorded conversation before turn `index` of case `c`, oldest first:
 * for each turn up to `index` its `context` (what the assistant said before
 * it), then, for the turns before `index`, the user's message. Turn `index`'s
 * own `context` is included (the assistant spoke last); its user message is not.
 */
export function recordedHistory(c: Pick<EvalCase, "turns">, index: number): RecordedMessage[] {
  const out: RecordedMessage[] = [];
  for (let i = 0; i <= index && i < c.turns.length; i++) {
    const t = c.turns[i]!;
    for (const m of t.context ?? []) out.push({ role: "assistant", content: m.content });
    if (i < index) out.push({ role: "user", content: t.user });
  }
  return out;
}

/** Recorded messages as LangChain messages (HumanMessage, AIMessage). */
export function historyMessages(history: readonly RecordedMessage[] | undefined): BaseMessage[] {
  return (history ?? []).map((m) => (m.role === "user" ? new HumanMessage(m.content) : new AIMessage(m.content)));
}
