/**
 * One turn scored from its capture (`scoreCapturedTurn`): the step a
 * `--graph` run (./external-graph.ts) and a recorded-traces run
 * (./recorded.ts) share. Re-exported by ./external-graph.ts.
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { isToLabel, type EvalCase } from "../../kb/types.js";
import {
  capturedGoldPositions,
  scoredDocuments,
  selectRetrieval,
  type CapturedDocument,
  type CapturedStage,
  type IdOptions,
  type RetrieverRuns,
} from "./capture.js";
import { runEvaluators } from "../measures/evaluators.js";
import { METRICS } from "../measures/metrics.js";
import { turnArtifacts, turnReport } from "./turns.js";
import { goldLostAtOf } from "../report/lost-at.js";
import { summarizeTrace } from "../report/trace-summary.js";
import { NO_RETRIEVAL } from "../report/graph-report.js";
import type { TurnReport } from "../report/types.js";
import type { GraphSweepOptions, GraphTurn } from "./graph-sweep-options.js";

function lastAnswer(state: unknown): string {
  const s = (state ?? {}) as Record<string, unknown>;
  if (typeof s.answer === "string") return s.answer;
  const messages = Array.isArray(s.messages) ? (s.messages as BaseMessage[]) : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    // By LangChain's message brand and type, whichever @langchain/core copy made it (docs/langchain-integration.md); never a method call on a plain object.
    if (m !== undefined && AIMessage.isInstance(m))
      return typeof m.content === "string" ? m.content : JSON.stringify(m.content);
  }
  return "";
}

const RETRIEVAL_KEYS: ReadonlySet<string> = new Set(METRICS.map((m) => m.key));

/** A captured list as the report keeps it (the HTML turn view shows it under its step). */
const capturedList = (st: CapturedStage) => ({
  key: st.key,
  role: st.role,
  ids: st.ids,
  error: st.error,
  ...(st.step !== undefined ? { step: st.step } : {}),
});

/** `{ documents }` of a turn's scored top-k when any of them has a page content, else nothing. */
function documentsOf(
  topK: readonly string[],
  texts: Record<string, string[]> | undefined,
): { documents?: CapturedDocument[] } {
  const documents = texts === undefined ? [] : scoredDocuments(topK, texts);
  return documents.length > 0 ? { documents } : {};
}

/** What a turn's outcome was, for `scoreCapturedTurn`: the run's error (and why it was given up), else its final state. */
export interface TurnOutcome {
  error?: string;
  givenUp?: TurnReport["givenUp"];
  /** The graph's final state (`answer`, `citedIds`, `refused`, `messages` read from it). */
  state?: unknown;
  /** The state's serialized size (a `--graph` run's --max-state-mb check), recorded on a turn that did not fail. */
  stateBytes?: number;
}

/**
 * One turn scored from its capture — the one step a `--graph` run and a
 * recorded-traces run share (docs/recorded-traces.md): the scored
 * retrieval chosen by `--retrieval-call` (`selectRetrieval`), its top k
 * scored by the evaluators, and the report's `trace` and `captured` views
 * (stages, the scored documents' text). A failed turn is an error turn
 * (nothing captured before the failure is scored); a turn with no retriever
 * run is "no retrieval" (a miss when gold-bearing).
 */
export async function scoreCapturedTurn(
  c: EvalCase,
  index: number,
  capture: RetrieverRuns,
  outcome: TurnOutcome,
  opts: Pick<
    GraphSweepOptions,
    "evaluators" | "knownIds" | "k" | "retrievalCall" | "traceSource" | "phases" | "retrieves"
  > & {
    ids: IdOptions;
  },
  where: string,
): Promise<GraphTurn> {
  const t = c.turns[index]!;
  const { error, givenUp, state } = outcome;
  // Retrieval captured before a failure is not scored: the turn is an error.
  const retrieval =
    error === undefined
      ? selectRetrieval(capture, opts.retrievalCall ?? "last", opts.ids, where, { texts: true })
      : null;
  // A graph with no retrieval at all (retrace's store-less graph) measures none: not a miss.
  const noRetrieval = error === undefined && retrieval === null && opts.retrieves !== false;
  // What is scored at k: the chosen calls' cards, cut at k (the stages keep the full lists); a turn with no retriever run retrieved nothing.
  const retrievedIds = retrieval !== null ? retrieval.retrievedIds.slice(0, opts.k) : noRetrieval ? [] : null;
  const s = (state ?? {}) as Record<string, unknown>;
  const artifacts = turnArtifacts(c, index, retrievedIds, {
    citedIds: Array.isArray(s.citedIds) ? (s.citedIds as string[]) : [],
    answer: error === undefined ? lastAnswer(state) : "",
    refused: s.refused === true,
    knownIds: opts.knownIds,
  });
  // A turn to label (no gold, no expect) runs but scores nothing (docs/synthetic-cases.md#importing-conversations).
  const t0 = performance.now();
  let results = error === undefined && !isToLabel(t) ? await runEvaluators(opts.evaluators, artifacts) : [];
  if (opts.phases !== undefined) opts.phases.evaluate += performance.now() - t0;
  // A gold-bearing turn with no retrieval is a miss, and says why in every view that shows the comment.
  if (noRetrieval)
    results = results.map((r) =>
      RETRIEVAL_KEYS.has(r.key)
        ? { ...r, comment: `${NO_RETRIEVAL} (the turn made no retriever run): ${r.comment ?? ""}`.trimEnd() }
        : r,
    );
  const report = turnReport(c, artifacts, results);
  if (error !== undefined) {
    report.error = error;
    if (givenUp !== undefined) report.givenUp = givenUp;
  } else {
    if (noRetrieval) report.noRetrieval = true;
    if (outcome.stateBytes !== undefined) report.stateBytes = outcome.stateBytes;
  }
  if (retrieval !== null) {
    if (retrieval.trace !== undefined) {
      report.trace = { ...summarizeTrace(retrieval.trace, t.must_cite_one_of ?? []), retrievedIds: retrievedIds ?? [] };
    } else {
      report.trace = {
        query: retrieval.query,
        k: opts.k,
        retrievedIds: retrievedIds ?? [],
        goldPositions: capturedGoldPositions(retrieval.stages, t.must_cite_one_of ?? []),
      };
    }
    // A trace read from the returned state is the whole capture: its stages are in `trace` (docs/evaluate-your-graph.md).
    if (opts.traceSource !== "state")
      report.captured = {
        source: retrieval.source,
        retrievers: retrieval.retrievers,
        topLevelRuns: retrieval.topLevelRuns,
        steps: retrieval.steps,
        stages: retrieval.stages.map(capturedList),
        ...(retrieval.unscored.length > 0 ? { unscored: retrieval.unscored.map(capturedList) } : {}),
        noChildRuns: retrieval.noChildRuns,
        ...(opts.knownIds.size > 0 ? { unknownIds: (retrievedIds ?? []).filter((id) => !opts.knownIds.has(id)) } : {}),
        // The scored top-k's page contents, bounded (docs/schema-versions.md): what the HTML turn view shows.
        ...documentsOf(retrievedIds ?? [], retrieval.texts),
      };
  }
  // Where each missed gold card was lost, once, for every rendering (src/eval/report/lost-at.ts; docs/html-report.md).
  const goldLostAt = goldLostAtOf(report);
  if (goldLostAt !== undefined) report.goldLostAt = goldLostAt;
  return { report, retrieval };
}
