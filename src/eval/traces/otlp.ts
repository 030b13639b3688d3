/**
 * OTLP/JSON trace exports (docs/recorded-traces.md, "OpenTelemetry /
 * OpenInference"): `{"resourceSpans": [{resource, scopeSpans: [{spans}]}]}`
 * records, as the OTLP/HTTP exporter sends them and collectors' file
 * exporters write them (one a line). Read, per span, only what scoring
 * needs — the attribute names are OpenInference's and OpenTelemetry GenAI's,
 * written out here so that reading needs neither package:
 *
 * - a root span (no `parentSpanId`) is a turn; its `input.value` (the graph
 *   input: its last user message) is the user text, `session.id` /
 *   `gen_ai.conversation.id` / metadata `thread_id` the conversation;
 * - `openinference.span.kind = RETRIEVER` spans: documents from
 *   `retrieval.documents.N.document.{id,content,metadata,score}` (metadata a
 *   JSON string; an empty retrieval has none), the query from `input.value`;
 * - `gen_ai.operation.name = retrieval` spans: documents from
 *   `gen_ai.retrieval.documents` (`[{id, score}]`), the query from
 *   `gen_ai.retrieval.query.text`, else `input.value`;
 * - `openinference.span.kind = RERANKER` spans: two stages, the input
 *   (`reranker.input_documents.N.document.*`, a child stage) and the output
 *   (`reranker.output_documents.N.document.*`), query `reranker.query`;
 * - span status code 2 (ERROR) is a failed call, its message the error.
 *
 * Every other span keeps only its parent link (the tree is needed to find a
 * call's turn and whether a retriever is nested in another).
 */
import { DataValidationError } from "../../errors.js";
import { THREAD_KEYS } from "../../kb/conversations.js";
import { whereOf, type TraceRecord } from "./records.js";
import type { RecordedDocument, RecordedRun, RecordedTurn } from "./types.js";

/** Where a record was read: one object per record, shared by its spans (the parsed record itself is not kept). */
type RecordAt = Pick<TraceRecord, "file" | "line" | "index">;

/** What is kept of a span until the turns are assembled: its parent, where it was read, and a retriever-like span's call(s). */
interface SpanLink {
  parent: string | null;
  at: RecordAt;
  /** Set for retriever-like spans: the recorded call(s). */
  runs?: RecordedRun[];
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
}

function valueOf(v: AnyValue | undefined): unknown {
  if (v === undefined || v === null) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

/** Nanoseconds (a decimal string or number) → microseconds. */
export function nanosToMicros(ns: unknown): number {
  if (typeof ns === "string" && /^\d+$/.test(ns)) return Number(BigInt(ns) / 1000n);
  if (typeof ns === "number" && Number.isFinite(ns)) return Math.floor(ns / 1000);
  return 0;
}

const DOC_KEY =
  /^(retrieval\.documents|reranker\.input_documents|reranker\.output_documents)\.(\d+)\.document\.(id|content|metadata|score)$/;

function parseJsonObject(text: unknown): Record<string, unknown> | undefined {
  if (typeof text !== "string") return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The role of a message: `role` (`{role, content}`), `type` (a LangChain
 * message's dict form), or the class name of LangChain's serialized form
 * (`{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs": {...}}`),
 * whose `type` is "constructor", not a role.
 */
function roleOf(m: Record<string, unknown> | undefined): unknown {
  const className = Array.isArray(m?.id) ? (m.id as unknown[])[(m.id as unknown[]).length - 1] : undefined;
  return m?.type === "constructor" ? className : (m?.role ?? m?.type ?? className);
}

/** The user text of a graph input: its last user message's content, else the text itself. */
export function userTextOf(input: unknown): string {
  const parsed = typeof input === "string" ? (parseJsonObject(input) ?? input) : input;
  if (typeof parsed === "string") return parsed;
  const messages = (parsed as { messages?: unknown })?.messages;
  if (Array.isArray(messages)) {
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i] as Record<string, unknown>;
      const role = roleOf(m);
      const content = (m?.content ?? (m?.kwargs as Record<string, unknown> | undefined)?.content) as unknown;
      if ((role === "user" || role === "human" || role === "HumanMessage") && typeof content === "string")
        return content;
    }
  }
  for (const key of ["input", "question", "query"]) {
    const v = (parsed as Record<string, unknown> | null)?.[key];
    if (typeof v === "string") return v;
  }
  return typeof input === "string" ? input : JSON.stringify(input ?? "");
}

/** The last AI message of a graph output, if any. */
export function answerOf(output: unknown): string | undefined {
  const parsed = typeof output === "string" ? (parseJsonObject(output) ?? output) : output;
  const messages = (parsed as { messages?: unknown })?.messages;
  if (!Array.isArray(messages)) return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Record<string, unknown>;
    const role = roleOf(m);
    const content = (m?.content ?? (m?.kwargs as Record<string, unknown> | undefined)?.content) as unknown;
    if ((role === "assistant" || role === "ai" || role === "AIMessage") && typeof content === "string") return content;
  }
  return undefined;
}

function firstLine(s: string): string {
  const i = s.indexOf("\n");
  return i < 0 ? s : s.slice(0, i);
}

/** Accumulates the spans of OTLP records; `turns()` assembles them. */
export class OtlpReader {
  private readonly spans = new Map<string, SpanLink>();
  private readonly roots: RecordedTurn[] = [];
  /** Conversation ids seen on any span, by trace (a root without one takes its trace's). */
  private readonly traceConversation = new Map<string, string>();
  spanCount = 0;
  /**
   * A recording retrieves the same documents again and again: one copy of
   * each document text, and one parsed (frozen) object of each metadata JSON,
   * kept for the whole run instead of one per retrieval (docs/recorded-traces.md, "Scale").
   */
  private readonly texts = new Map<string, string>();
  private readonly metadata = new Map<string, Readonly<Record<string, unknown>>>();

  private intern(text: string): string {
    const known = this.texts.get(text);
    if (known !== undefined) return known;
    this.texts.set(text, text);
    return text;
  }

  private metadataOf(json: unknown): Record<string, unknown> {
    if (typeof json !== "string") return {};
    let m = this.metadata.get(json);
    if (m === undefined) {
      m = Object.freeze(parseJsonObject(json) ?? {});
      this.metadata.set(json, m);
    }
    return m as Record<string, unknown>;
  }

  add(record: TraceRecord): void {
    const rs = (record.value as { resourceSpans?: unknown }).resourceSpans;
    if (!Array.isArray(rs))
      throw new DataValidationError([
        {
          file: record.file,
          line: record.line,
          field: "resourceSpans",
          message: "expected an array of resource spans",
        },
      ]);
    const at: RecordAt = {
      file: record.file,
      line: record.line,
      ...(record.index !== undefined ? { index: record.index } : {}),
    };
    for (const r of rs as {
      resource?: { attributes?: { key: string; value: AnyValue }[] };
      scopeSpans?: { spans?: unknown[] }[];
    }[]) {
      let service: string | undefined;
      for (const a of r.resource?.attributes ?? []) if (a.key === "service.name") service = String(valueOf(a.value));
      for (const ss of r.scopeSpans ?? [])
        for (const s of ss.spans ?? []) this.addSpan(s as Record<string, unknown>, record, at, service);
    }
  }

  private addSpan(s: Record<string, unknown>, record: TraceRecord, at: RecordAt, service: string | undefined): void {
    const spanId = s.spanId;
    const traceId = s.traceId;
    if (typeof spanId !== "string" || spanId === "" || typeof traceId !== "string")
      throw new DataValidationError([
        {
          file: record.file,
          line: record.line,
          field: "spanId",
          message: "expected a span with spanId and traceId strings",
        },
      ]);
    this.spanCount++;
    const parent = typeof s.parentSpanId === "string" && s.parentSpanId !== "" ? s.parentSpanId : null;
    let kind: string | undefined;
    let operation: string | undefined;
    let input: unknown;
    let output: unknown;
    let conversation: string | undefined;
    let metadata: unknown;
    let genAiDocs: unknown;
    let genAiQuery: unknown;
    let rerankerQuery: unknown;
    const docs = new Map<string, Map<number, Record<string, unknown>>>();
    for (const a of (s.attributes ?? []) as { key: string; value: AnyValue }[]) {
      switch (a.key) {
        case "openinference.span.kind":
          kind = String(valueOf(a.value));
          break;
        case "gen_ai.operation.name":
          operation = String(valueOf(a.value));
          break;
        case "input.value":
          input = valueOf(a.value);
          break;
        case "output.value":
          output = valueOf(a.value);
          break;
        case "session.id":
        case "gen_ai.conversation.id":
          conversation ??= String(valueOf(a.value));
          break;
        case "metadata":
          metadata = valueOf(a.value);
          break;
        case "gen_ai.retrieval.documents":
          genAiDocs = valueOf(a.value);
          break;
        case "gen_ai.retrieval.query.text":
          genAiQuery = valueOf(a.value);
          break;
        case "reranker.query":
          rerankerQuery = valueOf(a.value);
          break;
        default: {
          if (!a.key.includes("documents.")) break;
          const m = DOC_KEY.exec(a.key);
          if (m === null) break;
          const list = docs.get(m[1]!) ?? new Map<number, Record<string, unknown>>();
          docs.set(m[1]!, list);
          const i = Number(m[2]);
          list.set(i, { ...(list.get(i) ?? {}), [m[3]!]: valueOf(a.value) });
        }
      }
    }
    // The metadata JSON gives the conversation (a root's own, else its trace's first) and a call's graph step: parsed only where one of them can come of it.
    const retrieverLike = kind === "RETRIEVER" || kind === "RERANKER" || operation === "retrieval";
    const meta =
      parent === null || retrieverLike || (conversation === undefined && !this.traceConversation.has(traceId))
        ? parseJsonObject(metadata)
        : undefined;
    if (conversation === undefined) {
      // The keys and value types `retrace cases import` reads (src/kb/conversations.ts THREAD_KEYS): a number is its decimal text.
      for (const key of THREAD_KEYS) {
        const v = meta?.[key];
        if ((typeof v === "string" && v !== "") || (typeof v === "number" && Number.isFinite(v)))
          conversation ??= String(v);
      }
    }
    if (conversation !== undefined && !this.traceConversation.has(traceId))
      this.traceConversation.set(traceId, conversation);
    const startUs = nanosToMicros(s.startTimeUnixNano);
    const endUs = nanosToMicros(s.endTimeUnixNano);
    const status = s.status as { code?: number | string; message?: string } | undefined;
    const failed = status?.code === 2 || status?.code === "STATUS_CODE_ERROR";
    const error = failed ? firstLine(status?.message ?? "the span's status is ERROR") : null;
    const name = typeof s.name === "string" ? s.name : "span";
    const link: SpanLink = { parent, at };
    const step = typeof meta?.langgraph_step === "number" ? meta.langgraph_step : undefined;
    const base = {
      parentRunId: parent,
      retrieverParentRunId: null,
      name,
      tags: [] as string[],
      startUs,
      endUs,
      ...(step !== undefined ? { langgraphStep: step } : {}),
      error,
    };
    const docsOf = (key: string): RecordedDocument[] =>
      [...(docs.get(key) ?? new Map<number, Record<string, unknown>>()).entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([, d]) => ({
          pageContent: typeof d.content === "string" ? this.intern(d.content) : "",
          metadata: this.metadataOf(d.metadata),
          ...(d.id !== undefined && d.id !== null && d.id !== "" ? { id: String(d.id) } : {}),
        }));
    if (kind === "RETRIEVER") {
      link.runs = [
        {
          ...base,
          runId: spanId,
          query: typeof input === "string" ? input : "",
          documents: failed ? null : docsOf("retrieval.documents"),
        },
      ];
    } else if (operation === "retrieval") {
      let list: unknown = genAiDocs;
      if (typeof list === "string") {
        try {
          list = JSON.parse(list);
        } catch {
          throw new DataValidationError([
            {
              file: record.file,
              line: record.line,
              field: "gen_ai.retrieval.documents",
              message: `span ${spanId}: expected a JSON array of {id, score}, got ${JSON.stringify(String(list).slice(0, 60))}`,
            },
          ]);
        }
      }
      const documents = Array.isArray(list)
        ? list.map((d) => ({
            pageContent: "",
            metadata: {},
            ...(d !== null && typeof d === "object" && (d as { id?: unknown }).id !== undefined
              ? { id: String((d as { id: unknown }).id) }
              : {}),
          }))
        : [];
      link.runs = [
        {
          ...base,
          runId: spanId,
          query: typeof genAiQuery === "string" ? genAiQuery : typeof input === "string" ? input : "",
          documents: failed ? null : documents,
        },
      ];
    } else if (kind === "RERANKER") {
      const query = typeof rerankerQuery === "string" ? rerankerQuery : typeof input === "string" ? input : "";
      // The reranker's input as a child stage of its output: the stage funnel says which side lost a document.
      link.runs = [
        {
          ...base,
          runId: `${spanId}:input`,
          name: `${name} (input)`,
          retrieverParentRunId: spanId,
          query,
          documents: docsOf("reranker.input_documents"),
          error: null,
        },
        { ...base, runId: spanId, query, documents: failed ? null : docsOf("reranker.output_documents") },
      ];
    }
    if (this.spans.has(spanId))
      throw new DataValidationError([
        {
          file: record.file,
          line: record.line,
          field: "spanId",
          message: `span ${spanId} appears twice (also at ${whereOf(this.spans.get(spanId)!.at)}); export each span once`,
        },
      ]);
    this.spans.set(spanId, link);
    if (parent === null) {
      const answer = answerOf(output);
      this.roots.push({
        where: whereOf(at),
        rootId: spanId,
        traceId,
        conversationId: conversation ?? null,
        user: input === undefined ? "" : userTextOf(input),
        ...(answer !== undefined ? { answer } : {}),
        startUs,
        endUs,
        ...(service !== undefined ? { service } : {}),
        runs: [],
        error,
      });
    }
  }

  /** The turns, each with its recorded calls; a span whose parent is not in the files is an error naming it. */
  turns(): RecordedTurn[] {
    const byRoot = new Map(this.roots.map((t) => [t.rootId, t]));
    const rootOf = new Map<string, string>();
    const findRoot = (id: string): string => {
      const chain: string[] = [];
      let cur: string = id;
      for (;;) {
        const known = rootOf.get(cur);
        if (known !== undefined) {
          for (const c of chain) rootOf.set(c, known);
          return known;
        }
        const link = this.spans.get(cur)!;
        chain.push(cur);
        if (link.parent === null) {
          for (const c of chain) rootOf.set(c, cur);
          return cur;
        }
        if (!this.spans.has(link.parent))
          throw new DataValidationError([
            {
              file: link.at.file,
              line: link.at.line,
              field: "parentSpanId",
              message: `span ${cur} names the parent span ${link.parent}, which is in none of the files read (an export cut short, or a trace split across files not all given); give every file of the trace, or export whole traces`,
            },
          ]);
        cur = link.parent;
      }
    };
    for (const [spanId, link] of this.spans) {
      const root = findRoot(spanId);
      if (link.runs === undefined) continue;
      const turn = byRoot.get(root)!;
      for (const run of link.runs) {
        // The nearest enclosing recorded call (a reranker's input side already names its output).
        if (run.retrieverParentRunId === null) {
          for (let p = link.parent; p !== null; p = this.spans.get(p)?.parent ?? null) {
            const pl = this.spans.get(p);
            if (pl?.runs !== undefined) {
              run.retrieverParentRunId = pl.runs[pl.runs.length - 1]!.runId;
              break;
            }
          }
        }
        turn.runs.push(run);
      }
    }
    for (const t of this.roots) {
      if (t.conversationId === null) t.conversationId = this.traceConversation.get(t.traceId) ?? null;
      t.runs.sort(
        (a, b) => a.startUs - b.startUs || a.endUs - b.endUs || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0),
      );
    }
    return this.roots;
  }
}
