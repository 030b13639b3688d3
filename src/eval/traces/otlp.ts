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
import { rootFinder } from "./tree.js";
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

const DOC_KEY =
  /^(retrieval\.documents|reranker\.input_documents|reranker\.output_documents)\.(\d+)\.document\.(id|content|metadata|score)$/;

function firstLine(s: string): string {
  const i = s.indexOf("\n");
  return i < 0 ? s : s.slice(0, i);
}

export type { RawDocument } from "./raw-document.js";
export { answerOf, nanosToMicros, userTextOf } from "./otlp-values.js";

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
function forEachSpan(
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
  const langfuse = (): LangfuseAttributes => (lf ??= { metadata: {} });
  let outputMessages: unknown;
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
      case "langfuse.observation.type":
        langfuse().type = String(valueOf(a.value));
        break;
      case "langfuse.observation.input":
        langfuse().input = valueOf(a.value);
        break;
      case "langfuse.observation.output":
        langfuse().output = valueOf(a.value);
        break;
      case "langfuse.observation.level":
        langfuse().level = valueOf(a.value);
        break;
      case "langfuse.observation.status_message":
        langfuse().statusMessage = valueOf(a.value);
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
          langfuse().metadata[a.key.slice(LANGFUSE_METADATA_PREFIX.length)] = valueOf(a.value);
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
  const lfCall = lf !== undefined && kind === undefined && operation === undefined ? langfuseRetrieverCall(lf) : null;
  const retrieverLike = kind === "RETRIEVER" || kind === "RERANKER" || operation === "retrieval" || lfCall !== null;
  const meta =
    (parent === null || retrieverLike || (conversation === undefined && !knowsConversation(traceId))
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
  const docsOf = (key: string): RawDocument[] =>
    [...(docs.get(key) ?? new Map<number, Record<string, unknown>>()).entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([, d]) => ({
        ...(typeof d.content === "string" ? { content: d.content } : {}),
        ...(typeof d.metadata === "string" ? { metadata: d.metadata } : {}),
        ...(d.id !== undefined && d.id !== null && d.id !== "" ? { id: String(d.id) } : {}),
      }));
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

/** Accumulates the spans of OTLP records; `turns()` assembles them. */
export class OtlpReader {
  private readonly spans = new Map<string, SpanLink>();
  private readonly roots: RecordedTurn[] = [];
  /** Conversation ids seen on any span, by trace (a root without one takes its trace's). */
  private readonly traceConversation = new Map<string, string>();
  /** The earliest GenAI user text recorded below the root, by trace (a root without user text takes it). */
  private readonly traceUser = new Map<string, { text: string; startUs: number }>();
  spanCount = 0;
  /**
   * A recording retrieves the same documents again and again: one copy of
   * each document text, and one parsed (frozen) object of each metadata JSON,
   * kept for the whole run instead of one per retrieval (docs/recorded-traces.md, "Scale").
   */
  private readonly texts = new Map<string, string>();
  private readonly metadata = new Map<string, Readonly<Record<string, unknown>>>();
  private readonly knowsConversation = (traceId: string) => this.traceConversation.has(traceId);

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

  private documentsOf(raw: readonly RawDocument[]): RecordedDocument[] {
    return raw.map((d) => ({
      pageContent: d.content !== undefined ? this.intern(d.content) : "",
      metadata: d.metadata !== undefined ? this.metadataOf(d.metadata) : {},
      ...(d.id !== undefined ? { id: d.id } : {}),
    }));
  }

  /** Reads the spans of one record. @throws DataValidationError naming file and line. */
  add(record: TraceRecord): void {
    const at: RecordAt = {
      file: record.file,
      line: record.line,
      ...(record.index !== undefined ? { index: record.index } : {}),
    };
    // Each span is taken in as soon as it is read: a later span of the record sees the conversations of the earlier ones.
    forEachSpan(record, (s, service) => this.addFacts(spanFacts(s, record, service, this.knowsConversation), at));
  }

  /** Takes in one span read by `spanFacts`, `at` the record it was read from. @throws DataValidationError on a span read twice. */
  addFacts(f: SpanFacts, at: RecordAt): void {
    this.spanCount++;
    const { spanId, traceId, parent, conversation, detail } = f;
    if (conversation !== undefined && !this.traceConversation.has(traceId))
      this.traceConversation.set(traceId, conversation);
    if (f.genAiUser !== undefined) {
      const known = this.traceUser.get(traceId);
      if (known === undefined || f.genAiUser.startUs < known.startUs) this.traceUser.set(traceId, f.genAiUser);
    }
    const link: SpanLink = { parent, at };
    const call = detail?.call;
    if (detail !== undefined && call !== undefined) {
      const { name, startUs, endUs, error } = detail;
      const base = {
        parentRunId: parent,
        retrieverParentRunId: null,
        name,
        tags: [] as string[],
        startUs,
        endUs,
        ...(detail.step !== undefined ? { langgraphStep: detail.step } : {}),
        ...(detail.namespace !== undefined ? { langgraphNamespace: detail.namespace } : {}),
        error,
      };
      const failed = error !== null;
      if (call.kind === "retriever" || call.kind === "genai") {
        link.runs = [
          { ...base, runId: spanId, query: call.query, documents: failed ? null : this.documentsOf(call.documents) },
        ];
      } else {
        // The reranker's input as a child stage of its output: the stage funnel says which side lost a document.
        link.runs = [
          {
            ...base,
            runId: `${spanId}:input`,
            name: `${name} (input)`,
            retrieverParentRunId: spanId,
            query: call.query,
            documents: this.documentsOf(call.input),
            error: null,
          },
          { ...base, runId: spanId, query: call.query, documents: failed ? null : this.documentsOf(call.output) },
        ];
      }
    }
    if (this.spans.has(spanId))
      throw new DataValidationError([
        {
          file: at.file,
          line: at.line,
          field: "spanId",
          message: `span ${spanId} appears twice (also at ${whereOf(this.spans.get(spanId)!.at)}); export each span once`,
        },
      ]);
    this.spans.set(spanId, link);
    const root = detail?.root;
    if (detail !== undefined && root !== undefined) {
      this.roots.push({
        where: whereOf(at),
        rootId: spanId,
        traceId,
        conversationId: conversation ?? null,
        user: root.user,
        ...(root.answer !== undefined ? { answer: root.answer } : {}),
        startUs: detail.startUs,
        endUs: detail.endUs,
        ...(detail.service !== undefined ? { service: detail.service } : {}),
        runs: [],
        error: detail.error,
      });
    }
  }

  /** Retriever-like spans with no parent beside their trace's root (a `parentSpanId` the export lost): listed, and that turn not scored. */
  readonly unattached: { id: string; traceId: string; where: string }[] = [];

  /**
   * A trace with a root that is a retriever call and another that is not:
   * the retriever's parent link was lost (a span exported without
   * `parentSpanId`). It is no turn of its own; the trace's turn is marked
   * as missing it (`unattachedCalls`), so that it is listed, not scored.
   */
  private detachOrphans(): void {
    const byTrace = new Map<string, RecordedTurn[]>();
    for (const t of this.roots) {
      const list = byTrace.get(t.traceId);
      if (list === undefined) byTrace.set(t.traceId, [t]);
      else list.push(t);
    }
    const orphans = new Set<string>();
    for (const list of byTrace.values()) {
      if (list.length < 2) continue;
      const calls = list.filter((t) => this.spans.get(t.rootId)!.runs !== undefined);
      const turns = list.filter((t) => this.spans.get(t.rootId)!.runs === undefined);
      if (calls.length === 0 || turns.length === 0) continue;
      for (const c of calls) {
        orphans.add(c.rootId);
        this.unattached.push({ id: c.rootId, traceId: c.traceId, where: c.where });
      }
      for (const t of turns) t.unattachedCalls = calls.length;
    }
    if (orphans.size === 0) return;
    const kept = this.roots.filter((t) => !orphans.has(t.rootId));
    this.roots.length = 0;
    for (const t of kept) this.roots.push(t);
  }

  /** The turns, each with its recorded calls; a span whose parent is not in the files is an error naming it. */
  turns(): RecordedTurn[] {
    this.detachOrphans();
    const byRoot = new Map(this.roots.map((t) => [t.rootId, t]));
    const findRoot = rootFinder(this.spans, (l) => ({ file: l.at.file, line: l.at.line }), {
      thing: "span",
      parentField: "parentSpanId",
      missingHint:
        "(an export cut short, or a trace split across files not all given); give every file of the trace, or export whole traces",
    });
    for (const [spanId, link] of this.spans) {
      const root = findRoot(spanId);
      if (link.runs === undefined) continue;
      const turn = byRoot.get(root);
      if (turn === undefined) continue; // an unattached call (detachOrphans), or below one
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
      if (t.user === "") t.user = this.traceUser.get(t.traceId)?.text ?? "";
      t.runs.sort(
        (a, b) => a.startUs - b.startUs || a.endUs - b.endUs || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0),
      );
    }
    return this.roots;
  }
}
