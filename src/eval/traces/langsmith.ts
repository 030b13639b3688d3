/**
 * LangSmith run exports (docs/recorded-traces.md, "LangSmith"): runs as
 * `client.listRuns()` returns them, one a line (or a JSON array). A root run
 * (`parent_run_id` null) is a turn: its `inputs` (the graph input: its last
 * user message) the user text, `extra.metadata.thread_id` / `session_id` /
 * `conversation_id` the conversation, `session_name` the project. A run of
 * `run_type: "retriever"` is a recorded call: `inputs.query`, and
 * `outputs.documents[]` with `pageContent`, `metadata` (and `id` when set);
 * a run with `error` failed. Other runs keep only their parent link.
 * `start_time` is an ISO string (microseconds kept) or epoch ms, `end_time` likewise.
 */
import { DataValidationError } from "../../errors.js";
import { THREAD_KEYS } from "../../kb/conversations.js";
import { answerOf, userTextOf } from "./otlp.js";
import { whereOf, type TraceRecord } from "./records.js";
import type { RecordedDocument, RecordedRun, RecordedTurn } from "./types.js";

/** An ISO 8601 instant (fraction digits kept to the microsecond) or epoch milliseconds → microseconds; NaN when neither. */
export function timeToMicros(t: unknown): number {
  if (typeof t === "number" && Number.isFinite(t)) return Math.round(t * 1000);
  if (typeof t !== "string") return Number.NaN;
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:?\d\d)?$/.exec(t);
  if (m === null) return Number.NaN;
  const seconds = Date.parse(`${m[1]}${m[3] ?? "Z"}`);
  const micros = Number(((m[2] ?? "") + "000000").slice(0, 6));
  return seconds * 1000 + micros;
}

interface RunLink {
  parent: string | null;
  file: string;
  line: number;
  run?: RecordedRun;
}

/** Accumulates LangSmith runs; `turns()` assembles them. */
export class LangSmithReader {
  private readonly links = new Map<string, RunLink>();
  private readonly roots: RecordedTurn[] = [];
  runCount = 0;

  add(record: TraceRecord): void {
    const r = record.value as Record<string, unknown>;
    const issue = (field: string, message: string) =>
      new DataValidationError([
        {
          file: record.file,
          line: record.line,
          field: record.index !== undefined ? `[${record.index}].${field}` : field,
          message,
        },
      ]);
    if (typeof r.id !== "string" || r.id === "") throw issue("id", "expected a run id string");
    this.runCount++;
    const parent = typeof r.parent_run_id === "string" && r.parent_run_id !== "" ? r.parent_run_id : null;
    const startUs = timeToMicros(r.start_time);
    if (Number.isNaN(startUs))
      throw issue(
        "start_time",
        `run ${r.id}: expected an ISO 8601 time or epoch milliseconds, got ${JSON.stringify(r.start_time)}`,
      );
    const endParsed = timeToMicros(r.end_time);
    const endUs = Number.isNaN(endParsed) ? startUs : endParsed;
    const extra = (r.extra ?? {}) as { metadata?: Record<string, unknown> };
    const meta = extra.metadata ?? {};
    const error = typeof r.error === "string" && r.error !== "" ? r.error.split("\n")[0]! : null;
    const name = typeof r.name === "string" ? r.name : "run";
    const link: RunLink = { parent, file: record.file, line: record.line };
    if (r.run_type === "retriever") {
      const outputs = (r.outputs ?? {}) as { documents?: unknown };
      const docs = Array.isArray(outputs.documents) ? outputs.documents : [];
      const documents: RecordedDocument[] = docs.map((d) => {
        const doc = (d ?? {}) as Record<string, unknown>;
        return {
          pageContent:
            typeof doc.pageContent === "string"
              ? doc.pageContent
              : typeof doc.page_content === "string"
                ? doc.page_content
                : "",
          metadata:
            typeof doc.metadata === "object" && doc.metadata !== null ? (doc.metadata as Record<string, unknown>) : {},
          ...(typeof doc.id === "string" && doc.id !== "" ? { id: doc.id } : {}),
        };
      });
      const query = (r.inputs as { query?: unknown } | undefined)?.query;
      const step = meta.langgraph_step;
      link.run = {
        runId: r.id,
        parentRunId: parent,
        retrieverParentRunId: null,
        name,
        tags: Array.isArray(r.tags) ? r.tags.filter((t): t is string => typeof t === "string") : [],
        query: typeof query === "string" ? query : "",
        startUs,
        endUs,
        ...(typeof step === "number" ? { langgraphStep: step } : {}),
        documents: error !== null ? null : documents,
        error,
      };
    }
    if (this.links.has(r.id))
      throw issue(
        "id",
        `run ${r.id} appears twice (also at ${this.links.get(r.id)!.file}:${this.links.get(r.id)!.line}); export each run once`,
      );
    this.links.set(r.id, link);
    if (parent === null) {
      let conversation: string | null = null;
      // The keys and value types `retrace cases import` reads (src/kb/conversations.ts THREAD_KEYS): a number is its decimal text.
      for (const key of THREAD_KEYS) {
        const v = meta[key];
        if (
          conversation === null &&
          ((typeof v === "string" && v !== "") || (typeof v === "number" && Number.isFinite(v)))
        )
          conversation = String(v);
      }
      const answer = answerOf(r.outputs);
      this.roots.push({
        where: whereOf(record),
        rootId: r.id,
        traceId: typeof r.trace_id === "string" ? r.trace_id : r.id,
        conversationId: conversation,
        user: userTextOf(r.inputs),
        ...(answer !== undefined ? { answer } : {}),
        startUs,
        endUs,
        ...(typeof r.dotted_order === "string" ? { dottedOrder: r.dotted_order } : {}),
        ...(typeof r.session_name === "string" ? { service: r.session_name } : {}),
        runs: [],
        error,
      });
    }
  }

  turns(): RecordedTurn[] {
    const byRoot = new Map(this.roots.map((t) => [t.rootId, t]));
    const rootOf = (id: string): string => {
      let cur = id;
      for (;;) {
        const link = this.links.get(cur)!;
        if (link.parent === null) return cur;
        if (!this.links.has(link.parent))
          throw new DataValidationError([
            {
              file: link.file,
              line: link.line,
              field: "parent_run_id",
              message: `run ${cur} names the parent run ${link.parent}, which is in none of the files read (an export cut short); export whole traces (every run of each trace)`,
            },
          ]);
        cur = link.parent;
      }
    };
    for (const [id, link] of this.links) {
      const root = rootOf(id);
      if (link.run === undefined) continue;
      for (let p = link.parent; p !== null; p = this.links.get(p)?.parent ?? null) {
        const pl = this.links.get(p);
        if (pl?.run !== undefined) {
          link.run.retrieverParentRunId = pl.run.runId;
          break;
        }
      }
      byRoot.get(root)!.runs.push(link.run);
    }
    for (const t of this.roots)
      t.runs.sort(
        (a, b) => a.startUs - b.startUs || a.endUs - b.endUs || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0),
      );
    return this.roots;
  }
}
