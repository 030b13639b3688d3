/**
 * OTLP attribute values and the graph input / output texts of a span
 * (./otlp.ts): an `AnyValue` as plain data, span times in microseconds,
 * the user text of a graph input and the answer of its output.
 */
import { lastAssistantText, lastUserText, messagesOf } from "../../kb/conversations.js";

export interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: { key: string; value: AnyValue }[] };
}

export function valueOf(v: AnyValue | undefined): unknown {
  if (v === undefined || v === null) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(valueOf);
  // A structured attribute (OTel GenAI's `gen_ai.retrieval.documents`, messages): an object.
  if (v.kvlistValue !== undefined)
    return Object.fromEntries((v.kvlistValue.values ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
  return undefined;
}

/** Nanoseconds (a decimal string or number) → microseconds. */
export function nanosToMicros(ns: unknown): number {
  if (typeof ns === "string" && /^\d+$/.test(ns))
    // Dropping the last three digits is the integer division; up to 15 digits are left exact by Number, longer ones go through BigInt (the same rounding).
    return ns.length <= 3 ? 0 : ns.length <= 18 ? Number(ns.slice(0, -3)) : Number(BigInt(ns) / 1000n);
  if (typeof ns === "number" && Number.isFinite(ns)) return Math.floor(ns / 1000);
  return 0;
}

export function parseJsonObject(text: unknown): Record<string, unknown> | undefined {
  if (typeof text !== "string") return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The user text of a graph input: its last user message with text (any
 * message form and content parts, read by the rule `cases import` reads
 * them with: src/kb/conversations.ts `lastUserText`), else its `input` /
 * `question` / `query`, else the text itself.
 */
export function userTextOf(input: unknown): string {
  const parsed = typeof input === "string" ? (parseJsonObject(input) ?? input) : input;
  if (typeof parsed === "string") return parsed;
  const messages = messagesOf(parsed);
  const text = messages !== undefined ? lastUserText(messages) : undefined;
  if (text !== undefined) return text;
  for (const key of ["input", "question", "query"]) {
    const v = (parsed as Record<string, unknown> | null)?.[key];
    if (typeof v === "string") return v;
  }
  return typeof input === "string" ? input : JSON.stringify(input ?? "");
}

/** The last AI message with text of a graph output, if any (src/kb/conversations.ts `lastAssistantText`). */
export function answerOf(output: unknown): string | undefined {
  const parsed = typeof output === "string" ? (parseJsonObject(output) ?? output) : output;
  const messages = messagesOf(parsed);
  return messages !== undefined ? lastAssistantText(messages) : undefined;
}
