/**
 * What a turn's retrieval capture holds, whoever captured it: the retriever
 * runs (`CapturedRetrieverRun`) and retrace's own trace events, behind one
 * reader (`RetrieverRuns`). A graph's callbacks fill one live
 * (./capture.ts `RetrieverCapture`); recorded traces give the same
 * (./recorded.ts `RecordedCapture`).
 */
import type { DocumentInterface } from "@langchain/core/documents";
import type { RetrievalTrace } from "../../contract/trace.js";

/** One retriever run seen by the handler. */
export interface CapturedRetrieverRun {
  runId: string;
  /** The run's direct parent (any run type), or null. */
  parentRunId: string | null;
  /** The nearest enclosing retriever run, or null for a top-level retriever run. */
  retrieverParentRunId: string | null;
  /** Run name, else the retriever's class name. */
  name: string;
  tags: string[];
  query: string;
  /** 0-based start order within the capture. */
  order: number;
  /** Position of the run's start among the capture's retriever events (starts, ends, errors), 0-based. */
  startSeq: number;
  /** Position of its end or error among the same events; null while running. */
  endSeq: number | null;
  /** Returned documents in order; null while running or after an error. */
  documents: DocumentInterface[] | null;
  /** Error message when the run failed. */
  error: string | null;
}

/**
 * What `selectRetrieval` reads of a turn: its retriever runs and retrace's own
 * trace events. `RetrieverCapture` records them live from a graph's
 * callbacks; recorded traces give the same (../sweep/recorded.ts
 * `RecordedCapture`, docs/recorded-traces.md) — one capture layer, two sources.
 */
export interface RetrieverRuns {
  /** Every retriever run, in start order. */
  runs(): CapturedRetrieverRun[];
  /** Retriever runs not nested in another retriever run, in start order. */
  topLevel(): CapturedRetrieverRun[];
  /** Retriever runs directly nested in `runId`, in start order. */
  childrenOf(runId: string): CapturedRetrieverRun[];
  /** retrace's own `retrieval_trace` events, in arrival order. */
  retraceTraces(): RetrievalTrace[];
}
