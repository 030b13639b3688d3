/**
 * OTLP/JSON trace exports (docs/recorded-traces.md, "OpenTelemetry /
 * OpenInference"): `{"resourceSpans": [{resource, scopeSpans: [{spans}]}]}`
 * records, as the OTLP/HTTP exporter sends them and collectors' file
 * exporters write them (one a line). Each span is read on its own
 * (./otlp-span.ts `spanFacts`: what scoring takes of it, by OpenInference's
 * and OpenTelemetry GenAI's attribute names); `OtlpReader` keeps each span's
 * parent link and a retriever-like span's calls, and assembles the turns:
 * a root span is a turn, a retriever-like span below it a recorded call.
 */
import { DataValidationError } from "../../errors.js";
import { whereOf, type TraceRecord } from "./records.js";
import type { RawDocument } from "./raw-document.js";
import { parseJsonObject } from "./otlp-values.js";
import { forEachSpan, spanFacts, type SpanDetail, type SpanFacts } from "./otlp-span.js";
import { rootFinder } from "./tree.js";
import type { RecordedDocument, RecordedRun, RecordedTurn } from "./types.js";

/** Where a record was read: one object per record, shared by its spans (the parsed record itself is not kept). */
type RecordAt = Pick<TraceRecord, "file" | "line" | "index">;

/** What is kept of a span until the turns are assembled: its parent, where it was read, and a retriever-like span's call(s). */
interface SpanLink {
  parent: string | null;
  at: RecordAt;
  /** Set for retriever-like spans: the recorded call(s). */
  runs: RecordedRun[] | undefined;
  /** The walk's memo (./tree.ts), declared here so that every link has one shape. */
  root: string | undefined;
  depth: number;
}

export type { RawDocument } from "./raw-document.js";
export { answerOf, nanosToMicros, userTextOf } from "./otlp-values.js";

export { recordFacts, spanFacts, type SpanDetail, type SpanFacts } from "./otlp-span.js";

/** The entries of each of the reader's document caches (texts, metadata objects) before it is emptied. */
const INTERN_MAX = 1 << 16;

/** Spans assembled between two pauses of `turnsInSteps`. */
const STEP_SPANS = 1 << 15;

/**
 * One recorded call of a retriever-like span, built as one object literal:
 * every call then has one hidden class (spreading a shared base object into
 * each call gave V8 a hidden class per call, which made the reader and every
 * later reader of the calls slower; docs/recorded-traces.md, "Scale").
 */
function callRun(
  detail: SpanDetail,
  parent: string | null,
  runId: string,
  query: string,
  documents: RecordedDocument[] | null,
): RecordedRun {
  const run: RecordedRun = {
    parentRunId: parent,
    retrieverParentRunId: null,
    name: detail.name,
    tags: [],
    startUs: detail.startUs,
    endUs: detail.endUs,
    error: detail.error,
    runId,
    query,
    documents,
  };
  if (detail.step !== undefined) run.langgraphStep = detail.step;
  if (detail.namespace !== undefined) run.langgraphNamespace = detail.namespace;
  return run;
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
  /** Whether some root span is a retriever-like call (`detachOrphans` has work only then). */
  private rootCalls = false;
  /**
   * A recording retrieves the same documents again and again: one copy of
   * each document text, and one parsed (frozen) object of each metadata JSON,
   * shared by the retrievals that return it instead of one per retrieval
   * (docs/recorded-traces.md, "Scale"). Each cache is bounded (INTERN_MAX
   * entries, then emptied and refilled): a real recording's documents are
   * mostly distinct (their metadata names a chunk, an offset, a revision), and
   * an unbounded cache kept a million-entry map, and every metadata JSON
   * string, alive for the whole read. Hits only share memory; what a
   * retrieval reads is the same either way.
   */
  private readonly texts = new Map<string, string>();
  private readonly metadata = new Map<string, Readonly<Record<string, unknown>>>();
  private readonly knowsConversation = (traceId: string) => this.traceConversation.has(traceId);

  private intern(text: string): string {
    const known = this.texts.get(text);
    if (known !== undefined) return known;
    if (this.texts.size >= INTERN_MAX) this.texts.clear();
    this.texts.set(text, text);
    return text;
  }

  private metadataOf(json: unknown): Record<string, unknown> {
    if (typeof json !== "string") return {};
    let m = this.metadata.get(json);
    if (m === undefined) {
      m = Object.freeze(parseJsonObject(json) ?? {});
      if (this.metadata.size >= INTERN_MAX) this.metadata.clear();
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
    const link: SpanLink = { parent, at, runs: undefined, root: undefined, depth: -1 };
    const call = detail?.call;
    if (detail !== undefined && call !== undefined) {
      const failed = detail.error !== null;
      if (call.kind === "retriever" || call.kind === "genai") {
        link.runs = [callRun(detail, parent, spanId, call.query, failed ? null : this.documentsOf(call.documents))];
      } else {
        // The reranker's input as a child stage of its output: the stage funnel says which side lost a document.
        const input = callRun(detail, parent, `${spanId}:input`, call.query, this.documentsOf(call.input));
        input.name = `${detail.name} (input)`;
        input.retrieverParentRunId = spanId;
        input.error = null;
        link.runs = [input, callRun(detail, parent, spanId, call.query, failed ? null : this.documentsOf(call.output))];
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
      if (link.runs !== undefined) this.rootCalls = true;
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
    if (!this.rootCalls) return; // no retriever call is a root: nothing to detach
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
    const steps = this.assemble();
    for (;;) {
      const r = steps.next();
      if (r.done === true) return r.value;
    }
  }

  /**
   * `turns()`, back to the event loop every STEP_SPANS spans, so that an
   * interrupt (SIGINT / SIGTERM) ends a large recording's assembly at once
   * rather than after it (docs/recorded-traces.md, "Bad recordings").
   */
  async turnsInSteps(): Promise<RecordedTurn[]> {
    const steps = this.assemble();
    for (;;) {
      const r = steps.next();
      if (r.done === true) return r.value;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** The turns' assembly (`turns()`), pausing (a `yield`) every STEP_SPANS spans. */
  private *assemble(): Generator<void, RecordedTurn[]> {
    this.detachOrphans();
    const byRoot = new Map(this.roots.map((t) => [t.rootId, t]));
    const findRoot = rootFinder(this.spans, (l) => ({ file: l.at.file, line: l.at.line }), {
      thing: "span",
      parentField: "parentSpanId",
      missingHint:
        "(an export cut short, or a trace split across files not all given); give every file of the trace, or export whole traces",
    });
    let walked = 0;
    for (const [spanId, link] of this.spans) {
      if (++walked % STEP_SPANS === 0) yield;
      const root = findRoot(spanId, link);
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
