/**
 * OpenTelemetry GenAI semantic conventions, as far as scoring retrieval
 * needs them (docs/recorded-traces.md, "OTel GenAI"): the `retrieval`
 * operation's documents and the user's text of the GenAI input messages.
 * The attribute names and shapes are the conventions' (gen-ai spans,
 * "Retrieval" and "Inputs and outputs"), written out here so reading needs
 * no package:
 *
 * - `gen_ai.retrieval.documents`: `[{id, score}]` (the conventions' shape;
 *   a `content` string is kept when an emitter adds it), either structured
 *   (an OTLP `arrayValue` of `kvlistValue`s, as SDKs with structured
 *   attributes write it) or a JSON string of the same array (as SDKs whose
 *   attributes are primitives, the JS API among them, must write it);
 * - `gen_ai.input.messages` / `gen_ai.output.messages`: `[{role, parts:
 *   [{type: "text", content}]}]`, structured or a JSON string; the user text
 *   of a turn is its last `user` message's text parts, the answer the last
 *   `assistant` message's.
 */
import { DataValidationError } from "../../errors.js";
import type { RawDocument } from "./raw-document.js";

/** A structured or JSON-string attribute value as a JS value; undefined when it is a string that is not JSON. */
function structured(v: unknown): unknown {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return undefined;
  }
}

/** The text of a GenAI message: its `text` parts' `content`, joined by newlines (a plain `content` string is taken too). */
function messageText(m: Record<string, unknown>): string | undefined {
  if (typeof m.content === "string") return m.content;
  if (!Array.isArray(m.parts)) return undefined;
  const texts = (m.parts as unknown[])
    .filter(
      (p): p is { type: string; content: string } =>
        typeof p === "object" &&
        p !== null &&
        (p as { type?: unknown }).type === "text" &&
        typeof (p as { content?: unknown }).content === "string",
    )
    .map((p) => p.content);
  return texts.length > 0 ? texts.join("\n") : undefined;
}

/** The text of the last message of `role` in GenAI messages (`gen_ai.input.messages` / `gen_ai.output.messages`), structured or a JSON string. */
export function genAiMessageText(messages: unknown, role: "user" | "assistant"): string | undefined {
  const list = structured(messages);
  if (!Array.isArray(list)) return undefined;
  for (let i = list.length - 1; i >= 0; i--) {
    const m = list[i] as Record<string, unknown> | null;
    if (m === null || typeof m !== "object" || m.role !== role) continue;
    const text = messageText(m);
    if (text !== undefined) return text;
  }
  return undefined;
}

/**
 * The documents of `gen_ai.retrieval.documents`, in order: each entry's `id`
 * (a string or number, as text) and, when present, its `content`.
 * @throws DataValidationError naming file, line and span when the attribute
 * is absent (it is opt-in: not recorded is not an empty retrieval) or is
 * neither an array nor a JSON string of one.
 */
export function genAiDocuments(value: unknown, at: { file: string; line: number; spanId: string }): RawDocument[] {
  if (value === undefined)
    throw new DataValidationError([
      {
        file: at.file,
        line: at.line,
        field: "gen_ai.retrieval.documents",
        message: `span ${at.spanId}: a retrieval span without gen_ai.retrieval.documents (opt-in in the conventions: what was retrieved was not recorded; an empty retrieval is []); turn on the documents' capture in the instrumentation and record again`,
      },
    ]);
  const list = structured(value);
  if (!Array.isArray(list))
    throw new DataValidationError([
      {
        file: at.file,
        line: at.line,
        field: "gen_ai.retrieval.documents",
        message: `span ${at.spanId}: expected an array of {id, score} (structured, or a JSON string of one), got ${JSON.stringify(value).slice(0, 60)}`,
      },
    ]);
  return list.map((d) => {
    const o = (typeof d === "object" && d !== null ? d : {}) as Record<string, unknown>;
    const id = o.id;
    return {
      ...((typeof id === "string" && id !== "") || (typeof id === "number" && Number.isFinite(id))
        ? { id: String(id) }
        : {}),
      ...(typeof o.content === "string" ? { content: o.content } : {}),
    };
  });
}
