/**
 * Query attribution for a graph of your own (`retrace eval --graph …
 * --counterfactual`; docs/query-attribution.md, "`--graph`"). After a
 * gold-bearing turn, the retriever instances that ran the turn's **scored**
 * top-level calls (recorded by ./retriever-instances.ts, read from the
 * turn's `RetrieverCapture`) are invoked again with the raw user message and
 * with the case's `standalone` question; their documents are mapped to card
 * ids by the same rule as the scored calls' (`--id-key` / `--id-map`), and
 * the three lists are attributed by the one rule retrace's own graph uses
 * (`attributeTurn`, src/eval/report/query-attribution.ts).
 *
 * - Several scored calls (a fan-out, `--retrieval-call all`): each distinct
 *   instance is invoked once per query, in the scored calls' order, and the
 *   lists are concatenated first occurrence first, as the scored calls' are.
 * - A query equal to the graph's query reuses the graph's list; the raw
 *   message and the oracle, when equal, are retrieved once.
 * - The calls run after the turn, with no callbacks of the turn (they never
 *   reach its capture, so never its scores), under a deadline of their own as
 *   long as the turn's (`--turn-timeout`) and the stall guard (./turn-guard.ts).
 * - A turn that cannot be attributed says why (`queriesOff`): the turn
 *   failed, made no retriever run, its scored call cannot be re-invoked, the
 *   re-invocation threw, or it was given up. Never a crash. (When the sweep's
 *   first gold-bearing turn with a retriever run cannot be re-invoked at all,
 *   the sweep refuses instead: ./external-graph.ts, `checkReinvocable`.)
 */
import type { DocumentInterface } from "@langchain/core/documents";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { EvalCase, EvalTurn } from "../../kb/types.js";
import type { RetrievalTrace } from "../../contract/trace.js";
import { attributeTurn, type TurnQueries, type UnattributedReason } from "../report/query-attribution.js";
import { cardIdsOf, type CapturedRetrieval, type IdOptions, type RetrieverCapture } from "./capture.js";
import { concatFirst } from "./scored-call.js";
import { invokeTurn, type TurnGuard } from "./turn-guard.js";

/** The run name and tag of a counterfactual retriever call (what a tracer of your own sees). */
export const COUNTERFACTUAL_RUN_NAME = "retrace counterfactual";
export const COUNTERFACTUAL_TAG = "retrace:counterfactual";

/** A turn's counterfactual outcome: its attribution, or why it has none; and the extra retriever calls made. */
export interface GraphTurnQueries {
  queries?: TurnQueries;
  off?: { reason: UnattributedReason; detail: string };
  calls: number;
}

/** What re-invoking needs besides the turn. */
export interface GraphCounterfactualContext {
  ids: IdOptions;
  k: number;
  timeoutMs: number;
  guard: TurnGuard;
  /** The `configurable` the turn ran with (thread id included): handed to the re-invocations too. */
  configurable: Record<string, unknown>;
  /** `case X turn N`, for messages. */
  where: string;
}

type Invocable = { invoke(input: string, config?: RunnableConfig): Promise<DocumentInterface[]> };

const isInvocable = (x: object): x is Invocable => typeof (x as { invoke?: unknown }).invoke === "function";

/**
 * The query attribution of one turn of a graph sweep (see the module
 * comment). `turn`: the case's turn; `error`: the turn's own error, if it
 * failed; `retrieval`: what was scored (null: no retriever run). Returns
 * null for a turn without gold (nothing to attribute, nothing called).
 */
export async function graphTurnQueries(
  turn: EvalTurn,
  retrieval: CapturedRetrieval | null,
  capture: RetrieverCapture,
  error: string | undefined,
  ctx: GraphCounterfactualContext,
): Promise<GraphTurnQueries | null> {
  const gold = turn.must_cite_one_of ?? [];
  if (gold.length === 0) return null;
  if (error !== undefined)
    return {
      off: { reason: "turn_error", detail: "the turn's graph run failed: nothing was scored to compare with" },
      calls: 0,
    };
  if (retrieval === null)
    return {
      off: { reason: "no_retrieval", detail: "the turn made no retriever run: there is no retriever to re-invoke" },
      calls: 0,
    };
  if (retrieval.source === "retrace")
    return {
      off: {
        reason: "not_reinvocable",
        detail:
          "the scored retrieval is retrace's own retrieve node (retrieval_trace events), not a LangChain retriever run",
      },
      calls: 0,
    };
  const instances: Invocable[] = [];
  const missing: string[] = [];
  retrieval.scoredRunIds.forEach((runId, i) => {
    const inst = capture.instanceOf(runId);
    if (inst === undefined || !isInvocable(inst)) missing.push(retrieval.retrievers[i] ?? "retriever");
    else if (!instances.includes(inst)) instances.push(inst);
  });
  if (missing.length > 0 || instances.length === 0)
    return {
      off: {
        reason: "not_reinvocable",
        detail: `no BaseRetriever.invoke retrace could wrap ran the scored call ${missing.join(", ")} (a retriever of a @langchain/core copy retrace did not find, a class whose invoke does not call BaseRetriever's, or a run reported through callbacks alone)`,
      },
      calls: 0,
    };
  let calls = 0;
  const retrieved = new Map<string, string[]>([[retrieval.query, retrieval.retrievedIds]]);
  const wanted = [turn.user, ...(turn.standalone !== undefined ? [turn.standalone] : [])];
  const outcome = await invokeTurn(
    async (config) => {
      for (const query of wanted) {
        if (retrieved.has(query)) continue;
        const lists: string[][] = [];
        for (const inst of instances) {
          calls += 1;
          const docs = await inst.invoke(query, config);
          lists.push(
            cardIdsOf(
              Array.isArray(docs) ? docs : [],
              ctx.ids,
              `${ctx.where} (counterfactual query ${JSON.stringify(query)})`,
            ),
          );
        }
        retrieved.set(query, concatFirst(lists));
      }
      return retrieved;
    },
    // No callbacks of the turn: these calls never reach its capture (its own are a fresh, empty list).
    { callbacks: [], configurable: ctx.configurable, runName: COUNTERFACTUAL_RUN_NAME, tags: [COUNTERFACTUAL_TAG] },
    { timeoutMs: ctx.timeoutMs, guard: ctx.guard, where: `${ctx.where} (counterfactual retrieval)` },
  );
  if (outcome.kind === "threw")
    return {
      off: { reason: "retriever_error", detail: `re-invoking the scored retriever threw: ${outcome.error}` },
      calls,
    };
  if (outcome.kind === "stuck")
    return {
      off: { reason: "given_up", detail: `the counterfactual retrieval was given up: ${outcome.error}` },
      calls,
    };
  const listOf = (q: string) => ({ query: q, ranked: retrieved.get(q) ?? [] });
  const queries = attributeTurn(
    {
      graph: { query: retrieval.query, ranked: retrieval.retrievedIds },
      raw: listOf(turn.user),
      ...(turn.standalone !== undefined ? { standalone: listOf(turn.standalone) } : {}),
    },
    gold,
    ctx.k,
  );
  return queries === null ? null : { queries, calls };
}

/**
 * Retrieval with an alternative query that a graph's source provides itself
 * (retrace's own graph: its retriever with the settings the retrieve node
 * used for the turn's locale): the card ids in rank order, at least the top k.
 * Must be deterministic and side-effect free.
 */
export type RetrieveAgain = (
  query: string,
  turn: { locale: string; turn: number; caseId: string },
) => Promise<string[]>;

/** Card ids of a trace in rank order: the parents list (full depth) when the trace has one, else the scored top-k. */
function rankedCards(trace: RetrievalTrace): string[] {
  const parents = trace.stages.parents;
  return parents !== undefined && parents.length > 0 ? parents.map((r) => r.id) : trace.retrievedIds;
}

/**
 * The query attribution of a turn scored from retrace's trace, by the
 * source's own `retrieve` (see RetrieveAgain): the trace's own ranked cards,
 * and the raw message and the `standalone` oracle retrieved again (a query
 * equal to the graph's reuses its list). Null for a turn without gold.
 */
export async function retrieveAgainQueries(
  c: EvalCase,
  turn: number,
  trace: RetrievalTrace,
  retrieve: RetrieveAgain,
): Promise<TurnQueries | null> {
  const t = c.turns[turn] as EvalTurn;
  const gold = t.must_cite_one_of ?? []; // a turn to label has none
  if (gold.length === 0) return null;
  const own = rankedCards(trace);
  const ctx = { locale: c.locale as string, turn, caseId: c.id };
  const run = async (query: string) => ({ query, ranked: query === trace.query ? own : await retrieve(query, ctx) });
  const raw = await run(t.user);
  const standalone = t.standalone !== undefined ? await run(t.standalone) : undefined;
  return attributeTurn(
    { graph: { query: trace.query, ranked: own }, raw, ...(standalone !== undefined ? { standalone } : {}) },
    gold,
    trace.k,
    t.relevant,
  );
}
