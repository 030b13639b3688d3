/**
 * The pure part of retrieval capture (docs/evaluate-your-graph.md): documents
 * to card ids (`IdOptions`), which retriever calls of a turn are scored
 * (`retrievalCall`: `last`, `first`, `all`; `retrievalSteps`), the stages a
 * scored call is read as (`selectRetrieval`), and the documents and gold
 * positions the report keeps of it. Re-exported by ./capture.ts.
 */
import type { DocumentInterface } from "@langchain/core/documents";
import { cardIdsOf, documentId, type DocumentIdOptions } from "../measures/doc-id.js";
import type { RetrievalTrace } from "../../contract/trace.js";
import type { CapturedRetrieverRun, RetrieverRuns } from "./capture-runs.js";

/** How a retrieved LangChain document maps to a card id (`--id-key` / `--id-map`). */
export interface IdOptions extends DocumentIdOptions<DocumentInterface> {}

// ------------------------------------------------------------------ what is scored

/**
 * Which top-level retriever calls of a turn are scored: `last` (default) the
 * last retrieval **step**, `first` the first step, `all` every call. A step
 * is a group of calls that overlap in time (`retrievalSteps`): the parallel
 * calls of a `Send()` fan-out are one step; sequential calls are one step each.
 */
export const RETRIEVAL_CALLS = ["last", "first", "all"] as const;
export type RetrievalCall = (typeof RETRIEVAL_CALLS)[number];

/**
 * Top-level retriever runs grouped into retrieval steps, in start order:
 * a run that starts before every run of the current step has ended joins it
 * (the union of overlapping intervals); a run that starts after they all
 * ended opens the next step. Time is the order of the capture's retriever
 * events, so the grouping does not depend on the machine's speed. A run that
 * never ended overlaps everything after it.
 */
export function retrievalSteps(runs: readonly CapturedRetrieverRun[]): CapturedRetrieverRun[][] {
  const steps: CapturedRetrieverRun[][] = [];
  let end = -1; // the latest end of the current step's runs
  for (const run of [...runs].sort((a, b) => a.startSeq - b.startSeq)) {
    const runEnd = run.endSeq ?? Number.POSITIVE_INFINITY;
    const current = steps[steps.length - 1];
    if (current !== undefined && run.startSeq < end) {
      current.push(run);
      end = Math.max(end, runEnd);
    } else {
      steps.push([run]);
      end = runEnd;
    }
  }
  return steps;
}

/** One stage of a captured retrieval: a nested retriever run, or the top-level run itself. */
export interface CapturedStage {
  /** Unique key within the turn, e.g. `BM25Retriever`, `EnsembleRetriever`, `VectorStoreRetriever#2`. */
  key: string;
  /** "child" (nested run) or "final" (a scored top-level run). */
  role: "child" | "final";
  name: string;
  tags: string[];
  /** Card ids in rank order (first occurrence). */
  ids: string[];
  error: string | null;
  /** The retrieval step (1-based, `retrievalSteps`) of the scored call the stage belongs to; calls of one step ran in parallel. */
  step?: number;
}

/** What one turn's capture gives the evaluator. */
export interface CapturedRetrieval {
  /** "retrace" (a retrieval_trace event) or "callbacks" (retriever runs). */
  source: "retrace" | "callbacks";
  query: string;
  /** Card ids scored, in rank order. */
  retrievedIds: string[];
  /** Names of the scored top-level runs. */
  retrievers: string[];
  /** Run ids of the scored top-level runs, in start order (empty for retrace's own trace events). */
  scoredRunIds: string[];
  /** Number of top-level retriever runs in the turn (scored or not). */
  topLevelRuns: number;
  /** Number of retrieval steps they form (calls overlapping in time are one step; `retrievalSteps`). */
  steps: number;
  stages: CapturedStage[];
  /**
   * The calls that were not scored (other steps, with `--retrieval-call`
   * `last` or `first`): their child runs' lists, then each call's own, as in
   * `stages`; their keys continue the numbering of the scored ones. Shown by
   * the HTML turn view, never scored.
   */
  unscored: CapturedStage[];
  /** Stage keys of scored runs that have no child retriever runs. */
  noChildRuns: string[];
  /** The metadata keys of the scored documents, sorted (for the unknown-id message; never in a report). */
  metadataKeys?: string[];
  /** retrace's own trace, when source is "retrace". */
  trace?: RetrievalTrace;
  /**
   * With `selectRetrieval(..., { texts: true })` only (`retrace label`,
   * `--graph` sweeps): the page content of each scored document, by card id,
   * in rank order (a card returned as several documents has several texts).
   * Never in a report as such: the report keeps the top-k's, bounded
   * (`scoredDocuments`).
   */
  texts?: Record<string, string[]>;
}

/** The page contents of the documents of `runs`, by card id (first-seen order of documents). */
function textsOf(runs: readonly CapturedRetrieverRun[], ids: IdOptions): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const run of runs)
    for (const doc of run.documents ?? []) {
      const id = documentId(doc, ids);
      if (id === null || typeof doc.pageContent !== "string") continue;
      const list = (out[id] ??= []);
      if (!list.includes(doc.pageContent)) list.push(doc.pageContent);
    }
  return out;
}

/** Concatenation of id lists, first occurrence wins. */
export function concatFirst(lists: readonly (readonly string[])[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const l of lists) {
    for (const id of l) {
      if (seen.has(id)) continue;
      seen.add(id);
      out.push(id);
    }
  }
  return out;
}

function pick<T>(xs: readonly T[], call: RetrievalCall): T[] {
  if (xs.length === 0) return [];
  if (call === "first") return [xs[0]!];
  if (call === "last") return [xs[xs.length - 1]!];
  return [...xs];
}

/** The top-level runs `call` scores: every run of the last (or first) step, or all of them. */
export function scoredCalls(
  top: readonly CapturedRetrieverRun[],
  call: RetrievalCall,
  steps: CapturedRetrieverRun[][] = retrievalSteps(top),
): CapturedRetrieverRun[] {
  return call === "all" ? [...top] : pick(steps, call).flat();
}

/**
 * The retrieval of one turn, from its capture: retrace's own trace events when
 * any (one event per retrieve-node run: `last` the last, `first` the first,
 * `all` all), else the top-level retriever runs grouped into steps
 * (`retrievalSteps`): `last` (default) scores every call of the last step,
 * `first` every call of the first step, `all` every call; the scored calls'
 * lists are concatenated in start order, first occurrence of an id wins. A
 * turn whose calls ran one after another scores the same as before steps
 * existed (each call is its own step). Nested runs of each scored run become
 * `child` stages (all descendants, in start order), and the scored run itself
 * the `final` stage. Returns null when the turn made no retriever run at all.
 */
export function selectRetrieval(
  capture: RetrieverRuns,
  call: RetrievalCall,
  ids: IdOptions,
  where: string,
  opts: { texts?: boolean } = {},
): CapturedRetrieval | null {
  const traces = capture.retraceTraces();
  if (traces.length > 0) {
    const chosen = pick(traces, call);
    const last = chosen[chosen.length - 1]!;
    return {
      // retrace's own retrieve node: the documents of any retriever runs of the turn (its LangChain adapter's), if any.
      ...(opts.texts === true ? { texts: textsOf(capture.runs(), ids) } : {}),
      source: "retrace",
      query: chosen.map((t) => t.query).join(" | "),
      retrievedIds: concatFirst(chosen.map((t) => t.retrievedIds)),
      retrievers: ["retrace retrieve node"],
      scoredRunIds: [],
      topLevelRuns: traces.length,
      steps: traces.length,
      stages: [],
      unscored: [],
      noChildRuns: [],
      trace: last,
    };
  }
  const top = capture.topLevel();
  if (top.length === 0) return null;
  const steps = retrievalSteps(top);
  const scored = scoredCalls(top, call, steps);
  const stages: CapturedStage[] = [];
  const used = new Map<string, number>();
  const keyOf = (name: string) => {
    const n = (used.get(name) ?? 0) + 1;
    used.set(name, n);
    return n === 1 ? name : `${name}#${n}`;
  };
  const descendants = (runId: string): CapturedRetrieverRun[] =>
    capture
      .childrenOf(runId)
      .flatMap((c) => [c, ...descendants(c.runId)])
      .sort((a, b) => a.order - b.order);
  const stepOf = new Map<string, number>();
  steps.forEach((runs, i) => runs.forEach((r) => stepOf.set(r.runId, i + 1)));
  // A call's child runs (all descendants, in start order), then the call itself, each list with the call's step.
  const listsOf = (run: CapturedRetrieverRun): CapturedStage[] => {
    const step = stepOf.get(run.runId)!;
    const kids = descendants(run.runId).map((k): CapturedStage => ({
      key: keyOf(k.name),
      role: "child",
      name: k.name,
      tags: k.tags,
      ids: k.documents === null ? [] : cardIdsOf(k.documents, ids, where),
      error: k.error,
      step,
    }));
    return [
      ...kids,
      {
        key: keyOf(run.name),
        role: "final",
        name: run.name,
        tags: run.tags,
        ids: run.documents === null ? [] : cardIdsOf(run.documents, ids, where),
        error: run.error,
        step,
      },
    ];
  };
  const noChildRuns: string[] = [];
  const finals: string[][] = [];
  for (const run of scored) {
    const lists = listsOf(run);
    // Named by its stage key (`VectorStoreRetriever#2`), so each scored call is told apart.
    if (lists.length === 1) noChildRuns.push(lists[0]!.key);
    stages.push(...lists);
    finals.push(lists[lists.length - 1]!.ids);
  }
  const scoredRuns = new Set(scored.map((r) => r.runId));
  const unscored = top.filter((r) => !scoredRuns.has(r.runId)).flatMap(listsOf);
  return {
    source: "callbacks",
    query: scored.map((r) => r.query).join(" | "),
    retrievedIds: concatFirst(finals),
    retrievers: scored.map((r) => r.name),
    scoredRunIds: scored.map((r) => r.runId),
    topLevelRuns: top.length,
    steps: steps.length,
    stages,
    unscored,
    noChildRuns,
    metadataKeys: [
      ...new Set(
        scored.flatMap((r) =>
          (r.documents ?? []).flatMap((d) => Object.keys((d.metadata ?? {}) as Record<string, unknown>)),
        ),
      ),
    ].sort(),
    ...(opts.texts === true ? { texts: textsOf(scored, ids) } : {}),
  };
}

/**
 * The most characters (Unicode code points) of a document's page content a
 * report keeps (`captured.documents[].text`, docs/schema-versions.md): enough
 * to read what was retrieved, bounded so a report stays small.
 */
export const DOCUMENT_TEXT_MAX = 600;

/** One scored document as a report keeps it: its 1-based rank in the top-k, card id, page content cut at DOCUMENT_TEXT_MAX. */
export interface CapturedDocument {
  rank: number;
  id: string;
  text: string;
  /** Present (true) when `text` was cut at DOCUMENT_TEXT_MAX. */
  truncated?: true;
}

/**
 * The documents of the scored top-k (`topK`, in rank order) with their page
 * content (`texts`, by card id: the first text of a card returned as several
 * documents), cut at DOCUMENT_TEXT_MAX code points. An id with no text is
 * left out (its rank says where it stood). Pure; same input, same output.
 */
export function scoredDocuments(
  topK: readonly string[],
  texts: Readonly<Record<string, readonly string[]>>,
): CapturedDocument[] {
  const out: CapturedDocument[] = [];
  topK.forEach((id, i) => {
    const text = Object.prototype.hasOwnProperty.call(texts, id) ? texts[id]![0] : undefined;
    if (text === undefined) return;
    const points = Array.from(text);
    out.push(
      points.length > DOCUMENT_TEXT_MAX
        ? { rank: i + 1, id, text: points.slice(0, DOCUMENT_TEXT_MAX).join(""), truncated: true }
        : { rank: i + 1, id, text },
    );
  });
  return out;
}

/** Where each gold card stood at each captured stage: `{ gold: { stageKey: rank|null } }`, rank 1-based. */
export function capturedGoldPositions(
  stages: readonly CapturedStage[],
  gold: readonly string[],
): Record<string, Record<string, number | null>> {
  return Object.fromEntries(
    gold.map((g) => [
      g,
      Object.fromEntries(stages.map((s) => [s.key, s.ids.includes(g) ? s.ids.indexOf(g) + 1 : null])),
    ]),
  );
}
