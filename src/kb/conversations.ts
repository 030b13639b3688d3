/**
 * Conversations read from a user's logs and traces, turned into cases to
 * label (`retrace cases import`; docs/synthetic-cases.md#importing-conversations).
 * Two shapes, detected per record:
 *
 * - **chat messages**: `{"messages": [{"role": …, "content": …}, …], "locale"?: …}`,
 *   OpenAI roles (`user`, `assistant`, `system`, `developer`, `tool`,
 *   `function`) or LangChain ones (`human`, `ai`, `system`, `tool`), and
 *   serialized LangChain messages (below); the user messages become the turns;
 * - **LangSmith root runs** (`listRuns()` runs or `runs.query()` v2 runs), read
 *   by the one trace reader (src/eval/traces/langsmith.ts: parent links,
 *   threads as LangSmith groups them, turn order, the answer) as `eval
 *   --traces` reads them; this module reads only what an import adds of a
 *   root run (`rootRunTurn`: the last human message of `inputs.messages`,
 *   also nested `[[…]]`, checked field by field, the assistant messages
 *   before it, the locale).
 *
 * A message is `{role, content}`, `{type: "human", content}` or
 * `{type, data: {content}}` (LangChain's message dicts), or the serialized
 * constructor form `{lc: 1, type: "constructor", id: [..., "HumanMessage"],
 * kwargs: {content}}`. Content is a string or an array of content parts, of
 * which the text parts (`"…"`, `{type: "text" | "input_text", text}`) are
 * joined with a line break; other parts (images, tool calls) are left out.
 *
 * Turns have no gold: `must_cite_one_of` and `expect` are absent, so they run
 * and score nothing until labelled (src/kb/schemas.ts). Case ids are
 * `conv-` + 16 hex digits of sha256 over the locale and the user turns, so
 * importing the same conversation again gives the same id.
 */
import { createHash } from "node:crypto";
import type { DataIssue } from "../errors.js";
import { canonicalLocale, isBlankText } from "./schemas.js";

/** A conversation read from a file: where it starts, its locale (if it names one) and its user turns, in order. */
export interface Conversation {
  /** Where it came from, for messages: `file:line` or `file[i]`. */
  where: { file: string; line?: number; field?: string };
  source: "chat" | "langsmith" | "otlp";
  /** LangSmith / OTLP: the thread key's value, without the key; for a root run or root span with none, its own id (the conversation `eval --traces` names by its root). Absent for chat records. */
  thread?: string;
  locale?: string;
  turns: string[];
  /** Per turn, what the assistant said before it (since the previous user turn); empty when nothing. */
  contexts: string[][];
}

/** An imported case line (turns to label; `context`: the assistant's messages before the turn, when there were any). */
export interface ImportedCase {
  id: string;
  locale: string;
  kind: "golden";
  turns: { user: string; context?: { role: "assistant"; content: string }[] }[];
}

type Json = Record<string, unknown>;
const isObject = (x: unknown): x is Json => typeof x === "object" && x !== null && !Array.isArray(x);

/** The thread keys of `extra.metadata`, in the order they are looked for. */
export const THREAD_KEYS = ["thread_id", "session_id", "conversation_id"] as const;

type Role = "user" | "assistant" | "system" | "tool";

const ROLE_OF: Readonly<Record<string, Role>> = {
  user: "user",
  human: "user",
  assistant: "assistant",
  ai: "assistant",
  system: "system",
  developer: "system",
  tool: "tool",
  function: "tool",
};

const CLASS_ROLE: Readonly<Record<string, Role>> = {
  HumanMessage: "user",
  HumanMessageChunk: "user",
  AIMessage: "assistant",
  AIMessageChunk: "assistant",
  SystemMessage: "system",
  SystemMessageChunk: "system",
  ToolMessage: "tool",
  ToolMessageChunk: "tool",
  FunctionMessage: "tool",
  FunctionMessageChunk: "tool",
};

/** The text of a message content: a string, or the text parts of a content-part array joined by "\n"; null when it holds no text. */
export function contentText(content: unknown): string | null | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part === "string") texts.push(part);
    else if (isObject(part) && (part.type === "text" || part.type === "input_text") && typeof part.text === "string") texts.push(part.text);
  }
  return texts.length === 0 ? null : texts.join("\n");
}

/** A message's role and content, or a reason why it is not a message. */
export function readMessage(m: unknown): { role: Role; content: unknown } | { error: string } {
  if (!isObject(m)) return { error: `expected a message object, got ${JSON.stringify(m) ?? typeof m}` };
  if (m.lc === 1 && m.type === "constructor" && Array.isArray(m.id)) {
    const cls = String(m.id[m.id.length - 1]);
    const kwargs = isObject(m.kwargs) ? m.kwargs : {};
    const role = cls === "ChatMessage" || cls === "ChatMessageChunk" ? ROLE_OF[String(kwargs.role)] : CLASS_ROLE[cls];
    if (role === undefined) return { error: `expected a LangChain message class (HumanMessage, AIMessage, …), got ${JSON.stringify(cls)}` };
    return { role, content: kwargs.content };
  }
  if (typeof m.role === "string") {
    const role = ROLE_OF[m.role];
    if (role === undefined) return { error: `expected a role among ${Object.keys(ROLE_OF).join(", ")}, got ${JSON.stringify(m.role)}` };
    return { role, content: m.content };
  }
  if (typeof m.type === "string") {
    const role = ROLE_OF[m.type];
    if (role === undefined) return { error: `expected a message type among human, ai, system, tool, got ${JSON.stringify(m.type)}` };
    return { role, content: isObject(m.data) && "content" in m.data ? m.data.content : m.content };
  }
  return { error: "expected a message with a `role` (user, assistant, …), a `type` (human, ai, …) or LangChain's serialized form" };
}

/** A record's shape: a chat conversation, a LangSmith run, or neither. */
export function recordShape(r: unknown): "chat" | "langsmith" | null {
  if (!isObject(r)) return null;
  if (Array.isArray(r.messages)) return "chat";
  if (isObject(r.inputs) && ("run_type" in r || "parent_run_id" in r || "start_time" in r || "trace_id" in r)) return "langsmith";
  return null;
}

function localeOf(value: unknown, where: Conversation["where"], field: string, issues: DataIssue[]): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || canonicalLocale(value) !== value) {
    const c = typeof value === "string" ? canonicalLocale(value) : null;
    issues.push({ ...where, field, message: `expected a canonical BCP-47 tag${c !== null && c !== value ? ` (did you mean "${c}"?)` : ""}, got ${JSON.stringify(value)}` });
    return undefined;
  }
  return value;
}

const fieldAt = (where: Conversation["where"], f: string) => (where.field === undefined ? f : `${where.field}.${f}`);

/** The text of an assistant message worth showing as context (its text parts), or null (tool calls only, empty). */
function assistantText(content: unknown): string | null {
  const text = contentText(content);
  return typeof text === "string" && !isBlankText(text) ? text : null;
}

/** A chat record's conversation: its user messages in order, each with the assistant's messages before it as context (system and tool messages are left out). */
export function chatConversation(r: Json, where: Conversation["where"], issues: DataIssue[]): Conversation | null {
  const before = issues.length;
  const turns: string[] = [];
  const contexts: string[][] = [];
  let pending: string[] = [];
  (r.messages as unknown[]).forEach((m, i) => {
    const msg = readMessage(m);
    if ("error" in msg) {
      issues.push({ ...where, field: fieldAt(where, `messages[${i}]`), message: msg.error });
      return;
    }
    if (msg.role === "assistant") {
      const said = assistantText(msg.content);
      if (said !== null) pending.push(said);
      return;
    }
    if (msg.role !== "user") return;
    const text = contentText(msg.content);
    if (text === undefined) issues.push({ ...where, field: fieldAt(where, `messages[${i}].content`), message: `expected a string or an array of content parts, got ${JSON.stringify(msg.content) ?? "nothing"}` });
    else if (text !== null && !isBlankText(text)) {
      turns.push(text);
      contexts.push(pending);
      pending = [];
    }
  });
  if (issues.length > before) return null;
  if (turns.length === 0) {
    issues.push({ ...where, field: fieldAt(where, "messages"), message: "expected at least one user message with text; this conversation has none" });
    return null;
  }
  const locale = localeOf(r.locale, where, fieldAt(where, "locale"), issues);
  return { where, source: "chat", turns, contexts, ...(locale !== undefined ? { locale } : {}) };
}

/** `messages` of a graph input or output (a run's `inputs` / `outputs`, an OTLP span's `input.value`), flattened one level when nested (`[[…]]`, as LangChain chat-model runs record them). */
export function messagesOf(o: unknown): unknown[] | undefined {
  if (!isObject(o)) return undefined;
  const m = o.messages;
  if (!Array.isArray(m)) return undefined;
  return m.length > 0 && m.every((x) => Array.isArray(x)) ? (m as unknown[][]).flat() : m;
}

/**
 * The text of the last user message with text in `messages` (content parts
 * joined as `contentText` joins them), or undefined; a message that cannot
 * be read is passed over. The user text of a recorded turn, for `eval
 * --traces` and `cases import` alike (src/eval/traces/otlp-values.ts `userTextOf`).
 */
export function lastUserText(messages: readonly unknown[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const msg = readMessage(messages[i]);
    if ("error" in msg || msg.role !== "user") continue;
    const text = contentText(msg.content);
    if (typeof text === "string" && !isBlankText(text)) return text;
  }
  return undefined;
}

/** The text of the last assistant message with text in `messages` (tool calls only, empty: passed over), or undefined. */
export function lastAssistantText(messages: readonly unknown[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const msg = readMessage(messages[i]);
    if ("error" in msg || msg.role !== "assistant") continue;
    const said = assistantText(msg.content);
    if (said !== null) return said;
  }
  return undefined;
}

/** What `cases import` takes of a LangSmith root run beyond what the trace reader reads of it. */
export interface RootRunTurn {
  where: Conversation["where"];
  /** The last human message of `inputs.messages` (the reader's user text: `lastUserText`). */
  text: string;
  /** The assistant messages of `inputs.messages` between the previous human message and this one. */
  context: string[];
  /** `extra.metadata.locale` (listRuns) or `metadata.locale` (v2), else `inputs.locale`. */
  locale?: string;
}

/**
 * A LangSmith root run read as a conversation turn, strictly (issues name
 * the field): `inputs.messages` present, readable down to its last human
 * message with text, the assistant messages before it as context, a
 * canonical locale. Its thread, order, parent links and answer are the trace
 * reader's (src/eval/traces/langsmith.ts), as `eval --traces` reads them.
 */
export function rootRunTurn(r: Json, where: Conversation["where"], issues: DataIssue[]): RootRunTurn | null {
  const inputs = isObject(r.inputs) ? r.inputs : {};
  const messages = messagesOf(inputs);
  if (messages === undefined) {
    issues.push({ ...where, field: fieldAt(where, "inputs.messages"), message: "expected the run's chat messages (a list); this root run has none, so it is not a conversation turn" });
    return null;
  }
  let text: string | null = null;
  let at = -1;
  for (let i = messages.length - 1; i >= 0 && text === null; i--) {
    const msg = readMessage(messages[i]);
    if ("error" in msg) {
      issues.push({ ...where, field: fieldAt(where, `inputs.messages[${i}]`), message: msg.error });
      return null;
    }
    if (msg.role !== "user") continue;
    const t = contentText(msg.content);
    if (t === undefined) {
      issues.push({ ...where, field: fieldAt(where, `inputs.messages[${i}].content`), message: `expected a string or an array of content parts, got ${JSON.stringify(msg.content) ?? "nothing"}` });
      return null;
    }
    if (t !== null && !isBlankText(t)) [text, at] = [t, i];
  }
  if (text === null) {
    issues.push({ ...where, field: fieldAt(where, "inputs.messages"), message: "expected a human message with text; this run has none" });
    return null;
  }
  const context: string[] = [];
  for (let i = at - 1; i >= 0; i--) {
    const msg = readMessage(messages[i]);
    if ("error" in msg || msg.role === "user") break;
    const said = msg.role === "assistant" ? assistantText(msg.content) : null;
    if (said !== null) context.unshift(said);
  }
  // listRuns() runs carry `extra.metadata`, runs.query() v2 runs a top-level `metadata`.
  const metadata = isObject(r.extra) && isObject(r.extra.metadata) ? r.extra.metadata : isObject(r.metadata) ? r.metadata : {};
  const locale = localeOf(metadata.locale ?? inputs.locale, where, metadata.locale !== undefined ? fieldAt(where, isObject(r.extra) && isObject(r.extra.metadata) ? "extra.metadata.locale" : "metadata.locale") : fieldAt(where, "inputs.locale"), issues);
  return { where, text, context, ...(locale !== undefined ? { locale } : {}) };
}

/** The stable id of a conversation: `conv-` + 16 hex digits of sha256 over its locale and user turns. */
export function conversationId(locale: string, turns: readonly string[]): string {
  return `conv-${createHash("sha256").update(JSON.stringify([locale, turns])).digest("hex").slice(0, 16)}`;
}

const CASE_ID = /^[a-z0-9][a-z0-9-]*$/;

/**
 * The case id of a recorded conversation (docs/recorded-traces.md): the
 * thread / session / conversation id itself when it is a valid case id
 * (`[a-z0-9][a-z0-9-]*`), else its lowercase letters and digits joined by
 * `-` plus the first 8 hex digits of its sha256 (so two ids that read alike
 * never share a case). The one rule `retrace cases import` and `retrace eval
 * --traces` (src/eval/traces/join.ts) use, so recorded turns find their case.
 */
export function threadCaseId(thread: string): string {
  if (CASE_ID.test(thread)) return thread;
  const base = thread
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48);
  const hash = createHash("sha256").update(thread).digest("hex").slice(0, 8);
  return base === "" ? `conv-${hash}` : `${base}-${hash}`;
}

/**
 * The case of a conversation: every user turn (the first `maxTurns` when
 * given: `cases import --max-turns`), no gold (turns to label), each with the
 * assistant's messages before it as `context`. The id: a recorded
 * conversation's thread id (`threadCaseId`: what `eval --traces` joins on),
 * else a hash of the locale and user turns.
 */
export function conversationCase(conv: Conversation, locale: string, maxTurns?: number): ImportedCase {
  const turns = maxTurns === undefined ? conv.turns : conv.turns.slice(0, maxTurns);
  return {
    id: conv.thread !== undefined ? threadCaseId(conv.thread) : conversationId(locale, turns),
    locale,
    kind: "golden",
    turns: turns.map((user, i) => {
      const said = conv.contexts[i] ?? [];
      return said.length > 0 ? { user, context: said.map((content) => ({ role: "assistant" as const, content })) } : { user };
    }),
  };
}
