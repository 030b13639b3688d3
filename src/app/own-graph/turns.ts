/**
 * retrace's own graph's turns for `retrace trace` and `retrace label`
 * (../sources/own-graph.ts `turns`): the system the options describe opened
 * once (store, embedder, reranker; over the data already read when given),
 * then one sweep of the cases per mode, each turn's trace read from the
 * graph's state, as an eval's sweep reads it (./parallel.ts
 * `ownGraphCaseOptions`).
 */
import { allEvaluators } from "../../eval/measures/evaluators.js";
import { runGraphSweep, type GraphTurn } from "../../eval/sweep/external-graph.js";
import { EVAL_DEFAULTS, type EvalOptions } from "../eval-plan.js";
import { graphDefaultsFor, openEvalSystem } from "../eval.js";
import type { TurnsRequest } from "../sources/source.js";
import { ownGraphCaseOptions } from "./parallel.js";

/** The turns of `request.cases`, one list per mode (`request.modes`, else the options' mode), over one opened system. */
export async function ownGraphTurns(o: EvalOptions, request: TurnsRequest): Promise<GraphTurn[][]> {
  const { k } = request;
  const modes = request.modes ?? [o.mode ?? EVAL_DEFAULTS.mode];
  const system = await openEvalSystem(o, undefined, request.data);
  try {
    const lists: GraphTurn[][] = [];
    for (const mode of modes)
      lists.push(
        await runGraphSweep({
          ...ownGraphCaseOptions({
            retriever: system.retriever,
            kb: system.kb,
            analyzers: system.analyzers,
            defaults: graphDefaultsFor(system, { ...o, k, mode }),
            evaluators: request.evaluators ?? allEvaluators({ k }),
            knownIds: new Set(system.kb.byId.keys()),
            // Each mode's threads apart (one checkpointer a sweep; the prefix names the mode when there are several).
            threadPrefix: modes.length > 1 || request.modes !== undefined ? `${mode}:` : "",
            k,
            ...(request.counterfactual === true ? { counterfactual: true } : {}),
            ...(o.replay !== undefined ? { replay: o.replay } : {}),
          }),
          cases: request.cases,
          concurrency: request.concurrency,
          ...(o.turnTimeout !== undefined ? { turnTimeoutMs: o.turnTimeout * 1000 } : {}),
        }),
      );
    return lists;
  } finally {
    await system.close();
  }
}
