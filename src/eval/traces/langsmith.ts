/**
 * LangSmith run exports (docs/recorded-traces.md, "LangSmith"), in both
 * shapes the client returns: `client.listRuns()` runs (`parent_run_id`,
 * `session_id`, `extra.metadata`) and `client.runs.queryV2()` v2 Run objects
 * (`parent_run_ids` from the root down, `project_id`, top-level `thread_id`
 * and `metadata`, `run_type` in capitals, `status`; only the fields
 * selected). A run's parent is `parent_run_id`, else the last of
 * `parent_run_ids`, else the one before it in `dotted_order` (LangSmith's
 * own ancestry: `<time>Z<run id>` per level); a run with none of them that is
 * not its trace's root (`trace_id` names another run) is a child whose parent
 * link is missing: unattached, listed, never scored as a miss.
 *
 * A root run is a turn: its `inputs` (the graph input: its last user
 * message) the user text; its conversation the thread LangSmith groups it
 * in (top-level `thread_id`, else metadata `thread_id` / `session_id` /
 * `conversation_id`); its project `session_name`, else `session_id` /
 * `project_id`. A `retriever` run is a recorded call: `inputs.query`, and
 * `outputs.documents[]` with `pageContent`, `metadata` (and `id` when set);
 * a run with `error` (or status ERROR) failed. Other runs keep only their
 * parent link. `start_time` is an ISO string (microseconds kept) or epoch
 * ms, `end_time` likewise.
 */
import { THREAD_KEYS } from "../../kb/conversations.js";
import { answerOf, userTextOf } from "./otlp.js";
import { recordIssue, whereOf, type TraceRecord } from "./records.js";
import { rootFinder } from "./tree.js";
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
  traceId: string;
  run?: RecordedRun;
}

/** A run's parent: `parent_run_id`, the last of `parent_run_ids`, or the level before it in `dotted_order`; "missing" for a child with none of them. */
export function runParent(r: Record<string, unknown>): string | null | "missing" {
  if (typeof r.parent_run_id === "string" && r.parent_run_id !== "") return r.parent_run_id;
  if (Array.isArray(r.parent_run_ids)) {
    const last = r.parent_run_ids[r.parent_run_ids.length - 1] as unknown;
    if (typeof last === "string" && last !== "") return last;
  }
  if (typeof r.dotted_order === "string") {
    const levels = r.dotted_order.split(".");
    if (levels.length > 1) {
      const before = levels[levels.length - 2]!;
      const id = before.slice(before.indexOf("Z") + 1);
      if (id !== "") return id;
    }
  }
  if (r.is_root === false) return "missing";
  if (typeof r.trace_id === "string" && r.trace_id !== "" && r.trace_id !== r.id) return "missing";
  return null;
}

/** A run's metadata: `extra.metadata` (listRuns) or top-level `metadata` (v2). */
export function runMetadata(r: Record<string, unknown>): Record<string, unknown> {
  const extra = r.extra as { metadata?: unknown } | undefined;
  const m = typeof extra === "object" && extra !== null ? extra.metadata : undefined;
  if (typeof m === "object" && m !== null) return m as Record<string, unknown>;
  return typeof r.metadata === "object" && r.metadata !== null ? (r.metadata as Record<string, unknown>) : {};
}

/** The thread a run is grouped in, as LangSmith groups them: top-level `thread_id` (v2), else metadata `thread_id` / `session_id` / `conversation_id`. */
export function runThread(r: Record<string, unknown>, meta: Record<string, unknown>): string | null {
  const ok = (v: unknown) => (typeof v === "string" && v !== "") || (typeof v === "number" && Number.isFinite(v));
  if (ok(r.thread_id)) return String(r.thread_id);
  // The keys and value types `retrace cases import` reads (src/kb/conversations.ts THREAD_KEYS): a number is its decimal text.
  for (const key of THREAD_KEYS) if (ok(meta[key])) return String(meta[key]);
  return null;
}

/** The project names a run carries: `session_name`, `session_id` (listRuns), `project_id` (v2); the first is the turn's service. */
function runProjects(r: Record<string, unknown>): string[] {
  return [r.session_name, r.session_id, r.project_id].filter((v): v is string => typeof v === "string" && v !== "");
}

/** The project's id a run carries (`session_id`, else `project_id`), when it is a UUID. */
function projectIdOf(r: Record<string, unknown>): string | undefined {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  return [r.session_id, r.project_id].find((v): v is string => typeof v === "string" && uuid.test(v));
}

/** Accumulates LangSmith runs; `turns()` assembles them. */
export class LangSmithReader {
  private readonly links = new Map<string, RunLink>();
  private readonly roots: RecordedTurn[] = [];
  /** Retriever runs below a run whose parent link is missing (`runParent`), filled by `turns()`: listed, and their trace's turn not scored. */
  readonly unattached: { id: string; traceId: string; where: string }[] = [];
  runCount = 0;

  /**
   * `partial`: a parent in none of the files read ends the walk (the run is
   * taken as the root of what was exported) instead of being exit 2 — for
   * `cases import`, which often reads root runs alone or a filtered export.
   */
  constructor(private readonly opts: { partial?: boolean } = {}) {}

  add(record: TraceRecord): void {
    const r = record.value as Record<string, unknown>;
    const issue = (field: string, message: string) => recordIssue(record, field, message);
    if (typeof r.id !== "string" || r.id === "") throw issue("id", "expected a run id string");
    this.runCount++;
    const parentOf = runParent(r);
    const parent = parentOf === "missing" ? null : parentOf;
    const startUs = timeToMicros(r.start_time);
    if (Number.isNaN(startUs))
      throw issue(
        "start_time",
        `run ${r.id}: expected an ISO 8601 time or epoch milliseconds, got ${JSON.stringify(r.start_time)}`,
      );
    const endParsed = timeToMicros(r.end_time);
    const endUs = Number.isNaN(endParsed) ? startUs : endParsed;
    const meta = runMetadata(r);
    const error =
      typeof r.error === "string" && r.error !== ""
        ? r.error.split("\n")[0]!
        : r.status === "ERROR" || r.status === "error"
          ? "the run's status is ERROR"
          : null;
    const name = typeof r.name === "string" ? r.name : "run";
    const traceId = typeof r.trace_id === "string" ? r.trace_id : r.id;
    const link: RunLink = { parent, file: record.file, line: record.line, traceId };
    const runType = typeof r.run_type === "string" ? r.run_type.toLowerCase() : undefined;
    if (runType === "retriever") {
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
      const ns = meta.langgraph_checkpoint_ns;
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
        ...(typeof ns === "string" && ns !== "" ? { langgraphNamespace: ns } : {}),
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
    // A child whose parent link was not exported is no turn: its retriever calls (and those below it) are unattached (`turns`).
    if (parentOf === "missing") return;
    if (parent === null) {
      const conversation = runThread(r, meta);
      const projects = runProjects(r);
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
        ...(projects.length > 0 ? { service: projects[0]!, services: projects } : {}),
        ...(projectIdOf(r) !== undefined ? { projectId: projectIdOf(r)! } : {}),
        runs: [],
        error,
      });
    }
  }

  turns(): RecordedTurn[] {
    const byRoot = new Map(this.roots.map((t) => [t.rootId, t]));
    const rootOf = rootFinder(this.links, (l) => l, {
      thing: "run",
      parentField: "parent_run_id",
      missingHint:
        this.opts.partial === true ? null : "(an export cut short); export whole traces (every run of each trace)",
    });
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
      const turn = byRoot.get(root);
      if (turn !== undefined) turn.runs.push(link.run);
      else this.unattached.push({ id, traceId: link.traceId, where: `${link.file}:${link.line}` });
    }
    const cut = new Map<string, number>();
    for (const u of this.unattached) cut.set(u.traceId, (cut.get(u.traceId) ?? 0) + 1);
    for (const t of this.roots) {
      const n = cut.get(t.traceId);
      if (n !== undefined) t.unattachedCalls = n;
    }
    for (const t of this.roots)
      t.runs.sort(
        (a, b) => a.startUs - b.startUs || a.endUs - b.endUs || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0),
      );
    return this.roots;
  }
}
