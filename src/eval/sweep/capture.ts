/**
 * Retrieval capture for any LangGraph.js / LangChain agent (docs/evaluate-your-graph.md).
 *
 * `RetrieverCapture` is a LangChain callback handler: pass one per graph
 * invocation in `callbacks` and it records every retriever run of that
 * invocation — `handleRetrieverStart/End/Error` with run id, parent run id,
 * name, tags, query and the returned documents in order — wherever the
 * retriever runs (a node, a tool, a subgraph). It also records the parent of
 * every other run (chains, tools, models), so it can tell a top-level
 * retriever run from one nested inside another retriever (an
 * EnsembleRetriever's children). retrace's own `retrieval_trace` custom event
 * is recorded too; when present it is preferred (it carries the stage
 * breakdown of retrace's hybrid retriever).
 *
 * The pure part — documents to card ids, choosing the scored call, building
 * stages — is ./scored-call.ts, re-exported here; the capture's data types are
 * ./capture-runs.ts.
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { DocumentInterface } from "@langchain/core/documents";
import type { Serialized } from "@langchain/core/load/serializable";
import { RETRIEVAL_TRACE_EVENT, isRetrievalTraceEvent } from "../../contract/events.js";
import type { RetrievalTrace } from "../../contract/trace.js";
import { thrownMessage } from "../../errors.js";
import type { CapturedRetrieverRun, RetrieverRuns } from "./capture-runs.js";
export type { CapturedRetrieverRun, RetrieverRuns } from "./capture-runs.js";
export * from "./scored-call.js";

/** A capture with no retriever runs: only retrace traces (read from a graph's returned state: `stateTraceRuns`). */
class TraceOnlyRuns implements RetrieverRuns {
  constructor(private readonly traces: RetrievalTrace[]) {}
  runs(): CapturedRetrieverRun[] {
    return [];
  }
  topLevel(): CapturedRetrieverRun[] {
    return [];
  }
  childrenOf(): CapturedRetrieverRun[] {
    return [];
  }
  retraceTraces(): RetrievalTrace[] {
    return this.traces;
  }
}

/**
 * A turn's capture read from the state its graph run returned: the latest
 * trace of turn `turn` in the state's `retrieval` channel (retrace's
 * RetrievalAnnotation, which the retrieve node writes; one trace per turn),
 * or nothing when the channel holds none for it (a turn with no retrieval).
 */
export function stateTraceRuns(state: unknown, turn: number): RetrieverRuns {
  const channel = (state as { retrieval?: unknown } | null | undefined)?.retrieval;
  if (Array.isArray(channel))
    for (let i = channel.length - 1; i >= 0; i--) {
      const t = channel[i] as Partial<RetrievalTrace> | null;
      if (typeof t === "object" && t !== null && t.turn === turn && Array.isArray(t.retrievedIds))
        return new TraceOnlyRuns([t as RetrievalTrace]);
    }
  return new TraceOnlyRuns([]);
}

/** Start order of retriever runs; every other run only records its parent. */
export class RetrieverCapture extends BaseCallbackHandler implements RetrieverRuns {
  name = "RetrieverCapture";
  override awaitHandlers = true;
  private readonly parents = new Map<string, string | null>();
  private readonly retrieverRuns = new Map<string, CapturedRetrieverRun>();
  private readonly traceEvents: RetrievalTrace[] = [];
  /** Retriever events seen so far: the clock that tells overlapping runs apart (`retrievalSteps`). */
  private seq = 0;
  /** The instance that ran each retriever run, when a recorder tells it (`--graph --counterfactual`; ./retriever-instances.ts). */
  private readonly instances = new Map<string, object>();
  private readonly currentRetriever: (() => object | undefined) | undefined;

  /**
   * `retrievers`: a recorder of the retriever instance whose `invoke` is
   * running (./retriever-instances.ts); given, each run's instance is kept
   * (`instanceOf`), so the scored call can be re-invoked with another query.
   */
  constructor(opts: { retrievers?: { current(): object | undefined } } = {}) {
    super({ _awaitHandler: true });
    this.currentRetriever = opts.retrievers === undefined ? undefined : () => opts.retrievers!.current();
  }

  private link(runId: string, parentRunId: string | undefined): void {
    this.parents.set(runId, parentRunId ?? null);
  }

  override handleChainStart(
    _c: Serialized,
    _i: unknown,
    runId: string,
    _t?: string,
    _tags?: string[],
    _m?: Record<string, unknown>,
    _n?: string,
    parentRunId?: string,
  ): void {
    this.link(runId, parentRunId);
  }

  override handleToolStart(_t: Serialized, _i: string, runId: string, parentRunId?: string): void {
    this.link(runId, parentRunId);
  }

  override handleLLMStart(_l: Serialized, _p: string[], runId: string, parentRunId?: string): void {
    this.link(runId, parentRunId);
  }

  override handleChatModelStart(_l: Serialized, _m: unknown[][], runId: string, parentRunId?: string): void {
    this.link(runId, parentRunId);
  }

  override handleRetrieverStart(
    retriever: Serialized,
    query: string,
    runId: string,
    parentRunId?: string,
    tags?: string[],
    _metadata?: Record<string, unknown>,
    name?: string,
  ): void {
    this.link(runId, parentRunId);
    let retrieverParent: string | null = null;
    const seen = new Set<string>();
    for (let p = parentRunId ?? null; p !== null && !seen.has(p); p = this.parents.get(p) ?? null) {
      seen.add(p);
      if (this.retrieverRuns.has(p)) {
        retrieverParent = p;
        break;
      }
    }
    const className = Array.isArray(retriever?.id) ? retriever.id[retriever.id.length - 1] : undefined;
    // Awaited by LangChain inside the run's own invoke (awaitHandlers): the recorder's store is this run's instance.
    const instance = this.currentRetriever?.();
    if (instance !== undefined) this.instances.set(runId, instance);
    this.retrieverRuns.set(runId, {
      runId,
      parentRunId: parentRunId ?? null,
      retrieverParentRunId: retrieverParent,
      name: name ?? className ?? "retriever",
      tags: [...(tags ?? [])],
      query,
      order: this.retrieverRuns.size,
      startSeq: this.seq++,
      endSeq: null,
      documents: null,
      error: null,
    });
  }

  override handleRetrieverEnd(documents: DocumentInterface[], runId: string): void {
    const run = this.retrieverRuns.get(runId);
    if (run === undefined) return;
    run.documents = [...documents];
    run.endSeq = this.seq++;
  }

  override handleRetrieverError(err: Error, runId: string): void {
    const run = this.retrieverRuns.get(runId);
    if (run === undefined) return;
    run.error = thrownMessage(err);
    run.endSeq = this.seq++;
  }

  override handleCustomEvent(eventName: string, data: unknown): void {
    if (eventName === RETRIEVAL_TRACE_EVENT && isRetrievalTraceEvent(data)) this.traceEvents.push(data.trace);
  }

  /** Every retriever run, in start order. */
  runs(): CapturedRetrieverRun[] {
    return [...this.retrieverRuns.values()].sort((a, b) => a.order - b.order);
  }

  /** Retriever runs not nested in another retriever run: the scoring candidates, in start order. */
  topLevel(): CapturedRetrieverRun[] {
    return this.runs().filter((r) => r.retrieverParentRunId === null);
  }

  /** Retriever runs directly nested in `runId`, in start order. */
  childrenOf(runId: string): CapturedRetrieverRun[] {
    return this.runs().filter((r) => r.retrieverParentRunId === runId);
  }

  /** The retriever instance that ran `runId`, when a recorder was given and saw it (a BaseRetriever's `invoke`); else undefined. */
  instanceOf(runId: string): object | undefined {
    return this.instances.get(runId);
  }

  /** retrace's own `retrieval_trace` events, in arrival order. */
  retraceTraces(): RetrievalTrace[] {
    return [...this.traceEvents];
  }
}

// ------------------------------------------------------------------ documents → card ids

// The one document-id rule (src/eval/measures/doc-id.ts), shared with the LangSmith evaluators and the Vitest matchers.
export {
  DEFAULT_ID_KEYS,
  cardIdsOf,
  describeIdKeys,
  documentId,
  idKeysTried,
  missingIdMessage,
  type DocumentIdOptions,
  type DocumentLike,
} from "../measures/doc-id.js";
