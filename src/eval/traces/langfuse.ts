/**
 * Langfuse trace exports (docs/recorded-traces.md, "Langfuse"), as its public
 * API and JS SDK return them (`@langfuse/client`: `langfuse.api.trace.get(id)`
 * / `trace.list()` traces, `langfuse.api.observations.getMany()`
 * observations), one JSON object a line (or a JSON array):
 *
 * - a **trace** (`id`, `timestamp`, `sessionId`, `input`, `output`,
 *   `metadata`, `observations`) is a turn: one graph invocation, as the
 *   Langfuse LangChain callback handler records one. Its conversation is
 *   `sessionId`, else a `thread_id` / `session_id` / `conversation_id` of its
 *   metadata; its user text the last user message of `input` (the graph
 *   input), its answer the last AI message of `output`. `observations` holds
 *   the observations themselves (`trace.get`) or only their ids
 *   (`trace.list`: then export the observations too);
 * - an **observation** (`id`, `traceId`, `type`, `startTime`,
 *   `parentObservationId`, `input`, `output`, `level`, `statusMessage`) of
 *   `type: "RETRIEVER"` is a retriever call: its documents are `output` (the
 *   LangChain documents, `[{pageContent, metadata, id?}]`, or
 *   `{documents: [...]}`), its query `input` (a string, or `{query}`);
 *   `level: "ERROR"` is a failed call. Other observations keep their parent
 *   link, and the root observation (no parent) is where scores attach.
 *
 * A trace that lists observation ids of which some were not read lost
 * them in the export: it is unattached (listed, never scored as a miss), as
 * is a retriever observation whose trace was not read.
 */
import { DataValidationError } from "../../errors.js";
import { THREAD_KEYS } from "../../kb/conversations.js";
import { timeToMicros } from "./langsmith.js";
import { answerOf, userTextOf } from "./otlp.js";
import { recordIssue, whereOf, type TraceRecord } from "./records.js";
import type { RecordedDocument, RecordedRun, RecordedTurn } from "./types.js";

interface Observation {
  id: string;
  traceId: string;
  parent: string | null;
  where: string;
  run?: RecordedRun;
}

const obj = (v: unknown): Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** A LangChain document as Langfuse stores it (`pageContent` / `page_content`, `metadata`, `id`). */
function documentOf(d: unknown): RecordedDocument {
  const o = obj(d);
  const text =
    typeof o.pageContent === "string" ? o.pageContent : typeof o.page_content === "string" ? o.page_content : "";
  return {
    pageContent: text,
    metadata: obj(o.metadata),
    ...(typeof o.id === "string" && o.id !== "" ? { id: o.id } : {}),
  };
}

/** Accumulates Langfuse traces and observations; `turns()` assembles them. */
export class LangfuseReader {
  private readonly traces = new Map<string, { turn: RecordedTurn; listed: string[] }>();
  private readonly observations = new Map<string, Observation>();
  readonly unattached: { id: string; traceId: string; where: string }[] = [];
  runCount = 0;

  add(record: TraceRecord): void {
    const o = record.value as Record<string, unknown>;
    const issue = (field: string, message: string) => recordIssue(record, field, message);
    if (typeof o.traceId === "string" && typeof o.type === "string") {
      this.addObservation(o, whereOf(record), issue);
      return;
    }
    if (typeof o.id !== "string" || o.id === "") throw issue("id", "expected a Langfuse trace id string");
    const startUs = timeToMicros(o.timestamp);
    if (Number.isNaN(startUs))
      throw issue("timestamp", `trace ${o.id}: expected an ISO 8601 time, got ${JSON.stringify(o.timestamp)}`);
    if (this.traces.has(o.id)) throw issue("id", `trace ${o.id} appears twice; export each trace once`);
    this.runCount++;
    const meta = obj(o.metadata);
    const ok = (v: unknown) => (typeof v === "string" && v !== "") || (typeof v === "number" && Number.isFinite(v));
    let conversation: string | null = ok(o.sessionId) ? String(o.sessionId) : null;
    for (const key of THREAD_KEYS) if (conversation === null && ok(meta[key])) conversation = String(meta[key]);
    const answer = o.output !== undefined && o.output !== null ? answerOf(o.output) : undefined;
    const latency = typeof o.latency === "number" && Number.isFinite(o.latency) ? o.latency : 0;
    const listed: string[] = [];
    for (const x of Array.isArray(o.observations) ? o.observations : []) {
      if (typeof x === "string") listed.push(x);
      else if (typeof x === "object" && x !== null) {
        const ob = { traceId: o.id, ...(x as Record<string, unknown>) };
        this.addObservation(ob, whereOf(record), issue);
      }
    }
    this.traces.set(o.id, {
      listed,
      turn: {
        where: whereOf(record),
        rootId: o.id,
        traceId: o.id,
        conversationId: conversation,
        user: o.input === undefined || o.input === null ? "" : userTextOf(o.input),
        ...(answer !== undefined ? { answer } : {}),
        startUs,
        endUs: startUs + Math.round(latency * 1e6),
        ...(typeof o.environment === "string" ? { service: o.environment } : {}),
        runs: [],
        error: null,
      },
    });
  }

  private addObservation(
    o: Record<string, unknown>,
    where: string,
    issue: (field: string, message: string) => DataValidationError,
  ): void {
    if (typeof o.id !== "string" || o.id === "") throw issue("id", "expected an observation id string");
    if (this.observations.has(o.id))
      throw issue("id", `observation ${o.id} appears twice; export each observation once`);
    const startUs = timeToMicros(o.startTime);
    if (Number.isNaN(startUs))
      throw issue("startTime", `observation ${o.id}: expected an ISO 8601 time, got ${JSON.stringify(o.startTime)}`);
    const endParsed = timeToMicros(o.endTime);
    const parent =
      typeof o.parentObservationId === "string" && o.parentObservationId !== "" ? o.parentObservationId : null;
    const ob: Observation = { id: o.id, traceId: o.traceId as string, parent, where };
    if (typeof o.type === "string" && o.type.toUpperCase() === "RETRIEVER") {
      const error =
        o.level === "ERROR"
          ? (typeof o.statusMessage === "string" && o.statusMessage !== ""
              ? o.statusMessage
              : "the observation's level is ERROR"
            ).split("\n")[0]!
          : null;
      const out = o.output;
      const docs = Array.isArray(out)
        ? out
        : Array.isArray(obj(out).documents)
          ? (obj(out).documents as unknown[])
          : [];
      const input = o.input;
      const query =
        typeof input === "string" ? input : typeof obj(input).query === "string" ? (obj(input).query as string) : "";
      const meta = obj(o.metadata);
      ob.run = {
        runId: o.id,
        parentRunId: parent,
        retrieverParentRunId: null,
        name: typeof o.name === "string" && o.name !== "" ? o.name : "retriever",
        tags: [],
        query,
        startUs,
        endUs: Number.isNaN(endParsed) ? startUs : endParsed,
        ...(typeof meta.langgraph_step === "number" ? { langgraphStep: meta.langgraph_step } : {}),
        ...(typeof meta.langgraph_checkpoint_ns === "string" && meta.langgraph_checkpoint_ns !== ""
          ? { langgraphNamespace: meta.langgraph_checkpoint_ns }
          : {}),
        documents: error !== null ? null : docs.map(documentOf),
        error,
      };
    }
    this.runCount++;
    this.observations.set(o.id, ob);
  }

  /** The turns (traces), each with its retriever observations; the root observation becomes the turn's `rootId` (where scores attach). */
  turns(): RecordedTurn[] {
    const missing = new Map<string, number>();
    for (const { turn, listed } of this.traces.values()) {
      const lost = listed.filter((id) => !this.observations.has(id)).length;
      if (lost > 0) missing.set(turn.traceId, lost);
    }
    for (const ob of this.observations.values()) {
      const t = this.traces.get(ob.traceId)?.turn;
      if (ob.parent === null && t !== undefined && t.rootId === t.traceId) t.rootId = ob.id;
      if (ob.run === undefined) continue;
      for (let p = ob.parent, depth = 0; p !== null && depth < 10_000; depth++) {
        const po = this.observations.get(p);
        if (po === undefined) break;
        if (po.run !== undefined) {
          ob.run.retrieverParentRunId = po.run.runId;
          break;
        }
        p = po.parent;
      }
      if (t !== undefined) t.runs.push(ob.run);
      else this.unattached.push({ id: ob.id, traceId: ob.traceId, where: ob.where });
    }
    const turns = [...this.traces.values()].map((x) => x.turn);
    for (const t of turns) {
      const n = missing.get(t.traceId);
      if (n !== undefined) t.unattachedCalls = n;
      t.runs.sort(
        (a, b) => a.startUs - b.startUs || a.endUs - b.endUs || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0),
      );
    }
    return turns;
  }
}
