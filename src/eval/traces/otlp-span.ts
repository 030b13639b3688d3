/**
 * One span of an OTLP/JSON trace export (docs/recorded-traces.md,
 * "OpenTelemetry / OpenInference"), read on its own; ./otlp.ts assembles
 * the turns. Read, per span, only what scoring
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
import type { TraceRecord } from "./records.js";
import { genAiDocuments, genAiMessageText } from "./genai.js";
import type { RawDocument } from "./raw-document.js";
import {
  LANGFUSE_METADATA_PREFIX,
  langfuseError,
  langfuseRetrieverCall,
  langfuseStep,
  type LangfuseAttributes,
} from "./langfuse-otlp.js";
import { answerOf, nanosToMicros, parseJsonObject, userTextOf, valueOf, type AnyValue } from "./otlp-values.js";

const DOC_KEY =
  /^(retrieval\.documents|reranker\.input_documents|reranker\.output_documents)\.(\d+)\.document\.(id|content|metadata|score)$/;

function firstLine(s: string): string {
  const i = s.indexOf("\n");
  return i < 0 ? s : s.slice(0, i);
}

/**
 * What scoring takes of one span, read without any other span
 * (`spanFacts`): plain data, so that a second thread can read half of a
 * large export (./read.ts) and hand its spans to the reader of the first.
 * Of a span that is neither a root nor a retriever-like call only its links
 * are kept (`detail` is absent).
 */
export interface SpanFacts {
  spanId: string;
  traceId: string;
  parent: string | null;
  /** The span's own conversation id (attribute or metadata), if it names one. */
  conversation?: string;
  /** A span below the root with GenAI input messages (`gen_ai.input.messages`): the last user message's text, for a root that records none (./genai.ts). */
  genAiUser?: { text: string; startUs: number };
  /** A root's or a retriever-like span's. */
  detail?: SpanDetail;
}

/** What a root (a turn) or a retriever-like span (a call) gives besides its links. */
export interface SpanDetail {
  service?: string;
  name: string;
  startUs: number;
  endUs: number;
  /** The status message's first line when the status is ERROR, else null. */
  error: string | null;
  /** LangGraph's `langgraph_step` from the metadata, for a retriever-like span. */
  step?: number;
  /** LangGraph's `langgraph_checkpoint_ns` from the metadata, for a retriever-like span. */
  namespace?: string;
  /** A retriever-like span's call: RETRIEVER, gen_ai retrieval, or RERANKER (input and output). */
  call?:
    | { kind: "retriever"; query: string; documents: RawDocument[] }
    | { kind: "genai"; query: string; documents: RawDocument[] }
    | { kind: "reranker"; query: string; input: RawDocument[]; output: RawDocument[] };
  /** A root span's turn: the user text and the reply on its output. */
  root?: { user: string; answer?: string };
}

/**
 * The spans of one OTLP record, each read on its own (`spanFacts`).
 * `knowsConversation(traceId)` says a trace's conversation is known already
 * (then a non-root span's metadata need not be parsed for it; saying false
 * is never wrong, only slower).
 * @throws DataValidationError naming file and line.
 */
export function recordFacts(
  record: Pick<TraceRecord, "value" | "file" | "line">,
  knowsConversation: (traceId: string) => boolean,
): SpanFacts[] {
  const out: SpanFacts[] = [];
  forEachSpan(record, (s, service) => out.push(spanFacts(s, record, service, knowsConversation)));
  return out;
}

/** Calls `onSpan` with each span of an OTLP record and its resource's `service.name`. @throws DataValidationError when `resourceSpans` is no array. */
export function forEachSpan(
  record: Pick<TraceRecord, "value" | "file" | "line">,
  onSpan: (s: Record<string, unknown>, service: string | undefined) => void,
): void {
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
  for (const r of rs as {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeSpans?: { spans?: unknown[] }[];
  }[]) {
    let service: string | undefined;
    for (const a of r.resource?.attributes ?? []) if (a.key === "service.name") service = String(valueOf(a.value));
    for (const ss of r.scopeSpans ?? []) for (const s of ss.spans ?? []) onSpan(s as Record<string, unknown>, service);
  }
}

/** One span's facts (`SpanFacts`). @throws DataValidationError naming file and line. */
export function spanFacts(
  s: Record<string, unknown>,
  record: Pick<TraceRecord, "file" | "line">,
  service: string | undefined,
  knowsConversation: (traceId: string) => boolean,
): SpanFacts {
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
  const parent = typeof s.parentSpanId === "string" && s.parentSpanId !== "" ? s.parentSpanId : null;
  let kind: string | undefined;
  let operation: string | undefined;
  let input: unknown;
  let output: unknown;
  let conversation: string | undefined;
  let metadata: unknown;
  let genAiDocs: unknown;
  let genAiQuery: unknown;
  let inputMessages: unknown;
  let dataSource: unknown;
  // Langfuse's own attributes (spans as its OTLP endpoint ingests them: ./langfuse-otlp.ts).
  let lf: LangfuseAttributes | undefined;
  let outputMessages: unknown;
  let rerankerQuery: unknown;
  // Created at a span's first document attribute: most spans have none.
  let docs: Map<string, Map<number, Record<string, unknown>>> | undefined;
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
      case "langfuse.observation.type":
        (lf ??= { metadata: {} }).type = String(valueOf(a.value));
        break;
      case "langfuse.observation.input":
        (lf ??= { metadata: {} }).input = valueOf(a.value);
        break;
      case "langfuse.observation.output":
        (lf ??= { metadata: {} }).output = valueOf(a.value);
        break;
      case "langfuse.observation.level":
        (lf ??= { metadata: {} }).level = valueOf(a.value);
        break;
      case "langfuse.observation.status_message":
        (lf ??= { metadata: {} }).statusMessage = valueOf(a.value);
        break;
      case "session.id":
      case "langfuse.session.id":
      case "gen_ai.conversation.id":
        conversation ??= String(valueOf(a.value));
        break;
      case "metadata":
        metadata = valueOf(a.value);
        break;
      case "gen_ai.retrieval.documents":
        genAiDocs = valueOf(a.value);
        break;
      case "gen_ai.data_source.id":
        dataSource = valueOf(a.value);
        break;
      case "gen_ai.input.messages":
        inputMessages = valueOf(a.value);
        break;
      case "gen_ai.output.messages":
        outputMessages = valueOf(a.value);
        break;
      case "gen_ai.retrieval.query.text":
        genAiQuery = valueOf(a.value);
        break;
      case "reranker.query":
        rerankerQuery = valueOf(a.value);
        break;
      default: {
        if (a.key.startsWith(LANGFUSE_METADATA_PREFIX))
          (lf ??= { metadata: {} }).metadata[a.key.slice(LANGFUSE_METADATA_PREFIX.length)] = valueOf(a.value);
        if (!a.key.includes("documents.")) break;
        const m = DOC_KEY.exec(a.key);
        if (m === null) break;
        docs ??= new Map();
        const list = docs.get(m[1]!) ?? new Map<number, Record<string, unknown>>();
        docs.set(m[1]!, list);
        const i = Number(m[2]);
        list.set(i, { ...(list.get(i) ?? {}), [m[3]!]: valueOf(a.value) });
      }
    }
  }
  // The metadata JSON gives the conversation (a root's own, else its trace's first) and a call's graph step: parsed only where one of them can come of it.
  const lfCall = lf !== undefined && kind === undefined && operation === undefined ? langfuseRetrieverCall(lf) : null;
  const retrieverLike = kind === "RETRIEVER" || kind === "RERANKER" || operation === "retrieval" || lfCall !== null;
  // (A root's metadata is parsed for its conversation: not when an attribute named it.)
  const meta =
    (retrieverLike || (conversation === undefined && (parent === null || !knowsConversation(traceId)))
      ? parseJsonObject(metadata)
      : undefined) ?? lf?.metadata;
  if (conversation === undefined) {
    // The keys and value types `retrace cases import` reads (src/kb/conversations.ts THREAD_KEYS): a number is its decimal text.
    for (const key of THREAD_KEYS) {
      const v = meta?.[key];
      if ((typeof v === "string" && v !== "") || (typeof v === "number" && Number.isFinite(v)))
        conversation ??= String(v);
    }
  }
  const facts: SpanFacts = { spanId, traceId, parent, ...(conversation !== undefined ? { conversation } : {}) };
  if (parent !== null && !retrieverLike) {
    const text = inputMessages !== undefined ? genAiMessageText(inputMessages, "user") : undefined;
    if (text !== undefined) facts.genAiUser = { text, startUs: nanosToMicros(s.startTimeUnixNano) };
    return facts;
  }
  const status = s.status as { code?: number | string; message?: string } | undefined;
  const lfError = lf !== undefined ? langfuseError(lf) : null;
  const failed = status?.code === 2 || status?.code === "STATUS_CODE_ERROR" || lfError !== null;
  const detail: SpanDetail = {
    ...(service !== undefined ? { service } : {}),
    name: typeof s.name === "string" ? s.name : "span",
    startUs: nanosToMicros(s.startTimeUnixNano),
    endUs: nanosToMicros(s.endTimeUnixNano),
    error: failed ? (lfError ?? firstLine(status?.message ?? "the span's status is ERROR")) : null,
  };
  facts.detail = detail;
  if (retrieverLike && typeof meta?.langgraph_step === "number") detail.step = meta.langgraph_step;
  else if (retrieverLike && lf !== undefined && langfuseStep(lf) !== undefined) detail.step = langfuseStep(lf)!;
  if (retrieverLike && typeof meta?.langgraph_checkpoint_ns === "string" && meta.langgraph_checkpoint_ns !== "")
    detail.namespace = meta.langgraph_checkpoint_ns;
  const docsOf = (key: string): RawDocument[] => documentsAt(docs?.get(key));
  if (lfCall !== null) {
    detail.call = { kind: "retriever", query: lfCall.query, documents: failed ? [] : lfCall.documents };
  } else if (kind === "RETRIEVER") {
    detail.call = {
      kind: "retriever",
      query: typeof input === "string" ? input : "",
      documents: docsOf("retrieval.documents"),
    };
  } else if (operation === "retrieval") {
    const documents = failed ? [] : genAiDocuments(genAiDocs, { file: record.file, line: record.line, spanId });
    // The data source (a knowledge base's id) names the call, as the retriever's name does on other spans.
    if (typeof dataSource === "string" && dataSource !== "") detail.name = dataSource;
    detail.call = {
      kind: "genai",
      query: typeof genAiQuery === "string" ? genAiQuery : typeof input === "string" ? input : "",
      documents,
    };
  } else if (kind === "RERANKER") {
    detail.call = {
      kind: "reranker",
      query: typeof rerankerQuery === "string" ? rerankerQuery : typeof input === "string" ? input : "",
      input: docsOf("reranker.input_documents"),
      output: docsOf("reranker.output_documents"),
    };
  }
  if (parent === null) {
    // OpenInference's `input.value` / `output.value`, else OTel GenAI's input and output messages.
    // (Langfuse's observation input and output are the same graph input and output.)
    const answer = answerOf(output ?? lf?.output) ?? genAiMessageText(outputMessages, "assistant");
    const rootInput = input ?? lf?.input;
    const user = rootInput !== undefined ? userTextOf(rootInput) : (genAiMessageText(inputMessages, "user") ?? "");
    detail.root = { user, ...(answer !== undefined ? { answer } : {}) };
  }
  return facts;
}

/** The documents of one `…documents.N.document.*` list, in index order (none when the span has no such attribute). */
function documentsAt(list: Map<number, Record<string, unknown>> | undefined): RawDocument[] {
  if (list === undefined) return [];
  return [...list.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([, d]) => ({
      ...(typeof d.content === "string" ? { content: d.content } : {}),
      ...(typeof d.metadata === "string" ? { metadata: d.metadata } : {}),
      ...(d.id !== undefined && d.id !== null && d.id !== "" ? { id: String(d.id) } : {}),
    }));
}
