/**
 * What the one sweep of every graph (./external-graph.ts) and the recorded
 * traces' sweep (./recorded.ts) share: the default concurrency, one turn's evaluator artifacts and turn report from
 * its case, and the case queue. Agent-free: nothing here knows retrace's graph.
 */
import { isToLabel, type EvalCase, type EvalTurn } from "../../kb/types.js";
import type { TurnReport } from "../report/types.js";
import type { EvalResult, TurnArtifacts } from "../measures/types.js";

export const DEFAULT_CONCURRENCY = 4;

/** The case turn's judgments beyond its contract, as artifacts and turn reports carry them: graded `relevant`, `judged`, and whether the turn is relevance-only (docs/metrics.md). */
function judgmentsOfTurn(t: EvalTurn): { relevant?: Record<string, number>; judged?: string[]; relevanceOnly?: true } {
  return {
    ...(t.relevant !== undefined ? { relevant: { ...t.relevant } } : {}),
    ...(t.judged !== undefined ? { judged: [...t.judged] } : {}),
    ...(t.relevant !== undefined && t.must_cite_one_of === undefined ? { relevanceOnly: true as const } : {}),
  };
}

/** One turn's artifacts for the evaluators: identity, gold and graded judgments from the case, what was retrieved, and the answer side. */
export function turnArtifacts(
  c: EvalCase,
  turn: number,
  retrievedIds: string[] | null,
  answer: Pick<TurnArtifacts, "citedIds" | "answer" | "refused" | "knownIds">,
): TurnArtifacts {
  const t = c.turns[turn] as EvalTurn;
  return {
    caseId: c.id,
    turn,
    locale: c.locale,
    kind: c.kind,
    gold: t.must_cite_one_of ?? [],
    expect: t.expect ?? "answer",
    retrievedIds,
    ...answer,
    ...judgmentsOfTurn(t),
  };
}

/** The report of one turn (before its trace, part and capture extras): its artifacts, the user's text and the results. */
export function turnReport(c: EvalCase, a: TurnArtifacts, results: EvalResult[]): TurnReport {
  return {
    caseId: a.caseId,
    turn: a.turn,
    locale: a.locale,
    kind: a.kind,
    user: (c.turns[a.turn] as EvalTurn).user,
    gold: a.gold,
    expect: a.expect,
    retrievedIds: a.retrievedIds,
    citedIds: a.citedIds,
    refused: a.refused,
    answer: a.answer,
    results,
    ...(isToLabel(c.turns[a.turn] as EvalTurn) ? { toLabel: true as const } : {}),
    ...(c.origin !== undefined ? { origin: { generator: c.origin.generator, version: c.origin.version } } : {}),
    ...judgmentsOfTurn(c.turns[a.turn] as EvalTurn),
  };
}

/**
 * The case queue of every sweep (./external-graph.ts, its worker lanes included):
 * items 0…count − 1, each lane taking the next item not yet taken until none is left (a lane starts once its `ready`
 * resolves). Stop at the first failure: once a run throws, no lane starts
 * another item and the queue rejects with that error. Results in index order.
 */
export async function runQueue<T, L>(
  count: number,
  lanes: readonly L[],
  run: (index: number, lane: L) => Promise<T>,
  o: { ready?: (lane: L) => Promise<void> | undefined; onDone?: (done: number, total: number, lane: L) => void } = {},
): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  let done = 0;
  let failed = false;
  const drain = async (lane: L) => {
    try {
      const ready = o.ready?.(lane);
      if (ready !== undefined) await ready;
      while (next < count && !failed) {
        const i = next++;
        results[i] = await run(i, lane);
        done += 1;
        o.onDone?.(done, count, lane);
      }
    } catch (e) {
      failed = true; // no lane starts another item once one has failed
      throw e;
    }
  };
  await Promise.all(lanes.map(drain));
  return results;
}
