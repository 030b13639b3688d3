/**
 * The recorded-traces source of a sweep (`retrace eval --traces`;
 * docs/recorded-traces.md): turns read from OTLP / LangSmith exports
 * (../traces/) and joined to the cases by conversation (../traces/join.ts)
 * are scored by the very step a `--graph` run uses (`scoreCapturedTurn`,
 * ./external-graph.ts): `RecordedCapture` gives `selectRetrieval` the
 * recorded retriever calls as a `RetrieverCapture` gives a live run's, so the
 * step rule, `--retrieval-call`, the id rule, the stages and everything after
 * them are one code path. Nothing is re-run.
 *
 * Time: a call's start and end give the step rule its order
 * (`retrievalSteps`) when nothing better is recorded. LangGraph's own step
 * decides when it is (docs/recorded-traces.md, "Which call is scored"):
 * calls recorded with `langgraph_step` are ordered by it first, and the
 * calls of one step are one step whatever their timing (within a step every
 * start comes before every end), so calls of two graph steps never count as
 * parallel even when OTel's whole-millisecond start times make them look
 * overlapping, and two calls of one step started 25 ms apart are one step;
 * calls of one `langgraph_checkpoint_ns` (one task) are one step too.
 */
import type { EvalCase } from "../../kb/types.js";
import type { RetrievalTrace } from "../../contract/trace.js";
import type { TraceJoin } from "../traces/join.js";
import type { RecordedRun, RecordedTurn } from "../traces/types.js";
import { scoredCalls, type CapturedRetrieverRun, type IdOptions, type RetrieverRuns } from "./capture.js";
import { scoreCapturedTurn, type GraphSweepOptions, type GraphTurn } from "./external-graph.js";
import type { DocumentInterface } from "@langchain/core/documents";

/** Turns scored between two returns to the event loop (`runRecordedSweep`). */
const YIELD_EVERY = 512;

/** A recorded turn's retriever calls, read as `selectRetrieval` reads a live capture. */
export class RecordedCapture implements RetrieverRuns {
  private readonly all: CapturedRetrieverRun[];
  constructor(runs: readonly RecordedRun[]) {
    // Calls of one LangGraph checkpoint namespace (one task) are one step: each spans its namespace's first start to last end.
    const hull = new Map<string, { start: number; end: number }>();
    for (const r of runs) {
      if (r.langgraphNamespace === undefined) continue;
      const h = hull.get(r.langgraphNamespace);
      const end = Math.max(r.endUs, r.startUs);
      if (h === undefined) hull.set(r.langgraphNamespace, { start: r.startUs, end });
      else [h.start, h.end] = [Math.min(h.start, r.startUs), Math.max(h.end, end)];
    }
    // The event clock: every start and end in time order (graph step first, an end before a start at the same instant).
    // Calls recorded with LangGraph's step: within a step every start comes before every end, so the step's calls are one step whatever their timing.
    const events: { run: number; at: number; step: number; stepped: boolean; end: boolean }[] = [];
    runs.forEach((r, i) => {
      const step = r.langgraphStep ?? 0;
      const stepped = r.langgraphStep !== undefined;
      const h = r.langgraphNamespace !== undefined ? hull.get(r.langgraphNamespace) : undefined;
      events.push(
        { run: i, at: h?.start ?? r.startUs, step, stepped, end: false },
        { run: i, at: h?.end ?? Math.max(r.endUs, r.startUs), step, stepped, end: true },
      );
    });
    events.sort(
      (a, b) =>
        a.step - b.step ||
        (a.stepped && b.stepped ? Number(a.end) - Number(b.end) : 0) ||
        a.at - b.at ||
        Number(b.end) - Number(a.end) ||
        a.run - b.run,
    );
    const startSeq = new Array<number>(runs.length).fill(0);
    const endSeq = new Array<number>(runs.length).fill(0);
    events.forEach((e, seq) => ((e.end ? endSeq : startSeq)[e.run] = seq));
    this.all = runs.map((r, i) => ({
      runId: r.runId,
      parentRunId: r.parentRunId,
      retrieverParentRunId: r.retrieverParentRunId,
      name: r.name,
      tags: r.tags,
      query: r.query,
      order: i,
      startSeq: startSeq[i]!,
      endSeq: endSeq[i]!,
      documents: r.documents === null ? null : (r.documents as DocumentInterface[]),
      error: r.error,
    }));
    this.all.sort((a, b) => a.startSeq - b.startSeq);
    this.all.forEach((r, i) => (r.order = i));
  }
  runs(): CapturedRetrieverRun[] {
    return [...this.all];
  }
  topLevel(): CapturedRetrieverRun[] {
    return this.all.filter((r) => r.retrieverParentRunId === null);
  }
  childrenOf(runId: string): CapturedRetrieverRun[] {
    return this.all.filter((r) => r.retrieverParentRunId === runId);
  }
  retraceTraces(): RetrievalTrace[] {
    return [];
  }
}

/** One scored turn of a recorded sweep: a graph turn plus where it was recorded (for the write-back files). */
export interface RecordedGraphTurn extends GraphTurn {
  recorded: {
    rootId: string;
    traceId: string;
    where: string;
    conversationId: string;
    /** The LangSmith project's id (`RecordedTurn.projectId`), when recorded: feedback's `session_id`. */
    projectId?: string;
  };
}

/** What a report's header reads of a sweep's captures (src/app/graph-eval.ts): the scored retrievers and the scored documents' metadata keys. */
export interface CaptureSummary {
  retrievers: Set<string>;
  metadataKeys: Set<string>;
}

export type RecordedSweepOptions = Pick<GraphSweepOptions, "evaluators" | "knownIds" | "k" | "retrievalCall"> & {
  ids: IdOptions;
  /**
   * Given (`retrace eval --traces`), the sweep is the recording's one pass:
   * as soon as a turn is scored its capture is let go (its `retrieval` null,
   * what the header reads of it added here) and so are its recorded runs (the
   * join's turn keeps an empty `runs`: the join is spent). A large
   * recording's runs and captures were a third of its heap at the sweep's end
   * (docs/recorded-traces.md, "Scale"). Without it every turn keeps both
   * (`retrace label` pools the captures' lists, queries and texts).
   */
  summary?: CaptureSummary;
};

/** The error of a recorded turn, when it failed: its root's error, else a scored retriever call's (naming its span or run). */
function recordedError(rec: RecordedTurn, capture: RecordedCapture, o: RecordedSweepOptions): string | undefined {
  if (rec.error !== null) return `the recorded turn failed: ${rec.error} (root ${rec.rootId}, ${rec.where})`;
  const failed = capture.topLevel().filter((r) => r.error !== null);
  if (failed.length === 0) return undefined;
  // Only the calls --retrieval-call scores make the turn an error (an unscored step's failure is shown, not scored).
  const scored = new Set(scoredCalls(capture.topLevel(), o.retrievalCall ?? "last").map((r) => r.runId));
  const bad = failed.find((r) => scored.has(r.runId));
  return bad === undefined
    ? undefined
    : `the scored retriever call ${bad.name} (span or run ${bad.runId}) failed: ${bad.error} (${rec.where}); nothing it retrieved is scored — gate such turns with --gate max-errors=N`;
}

/** Scores every joined turn, in case order. A document with no id under the id rule is exit 2 naming the turn's root and file:line. */
export async function runRecordedSweep(
  join: TraceJoin,
  cases: readonly EvalCase[],
  o: RecordedSweepOptions,
): Promise<RecordedGraphTurn[]> {
  const out: RecordedGraphTurn[] = [];
  for (const j of join.joined) {
    // Back to the event loop now and then: an interrupt (SIGINT / SIGTERM) ends a long sweep at once, not after it (docs/recorded-traces.md, "Bad recordings").
    if (out.length % YIELD_EVERY === YIELD_EVERY - 1) await new Promise<void>((r) => setImmediate(r));
    const c = cases[j.caseIndex]!;
    const rec = j.recorded;
    const where = `case ${c.id} turn ${j.turnIndex} (recorded root ${rec.rootId}, ${rec.where})`;
    const capture = new RecordedCapture(rec.runs);
    const error = recordedError(rec, capture, o);
    const turn = await scoreCapturedTurn(
      c,
      j.turnIndex,
      capture,
      { ...(error !== undefined ? { error } : {}), state: { answer: rec.answer ?? "" } },
      o,
      where,
    );
    if (o.summary !== undefined) {
      for (const r of turn.retrieval?.retrievers ?? []) o.summary.retrievers.add(r);
      for (const k of turn.retrieval?.metadataKeys ?? []) o.summary.metadataKeys.add(k);
      rec.runs = [];
    }
    out.push({
      ...turn,
      ...(o.summary !== undefined ? { retrieval: null } : {}),
      recorded: {
        rootId: rec.rootId,
        traceId: rec.traceId,
        where: rec.where,
        conversationId: rec.conversationId ?? rec.rootId,
        ...(rec.projectId !== undefined ? { projectId: rec.projectId } : {}),
      },
    });
  }
  return out;
}
