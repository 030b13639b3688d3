/**
 * The `repeats` section's intervals (./repeats.ts `repeatsSection`: a
 * two-stage bootstrap per key) in a worker thread for a large run, so that
 * SIGINT, SIGTERM and SIGHUP end the run while they are computed (about
 * 0.2 ms a turn and repeat here: 21,000 turns × 2 repeats took 33 s in one
 * thread). The same function computes them, so the numbers are the same
 * (test/eval/repeats-thread.test.ts); only each turn's case id, turn number
 * and scores per repeat cross (src/thread-job.ts).
 */
import { siblingModule } from "../../module-worker.js";
import { runJob } from "../../thread-job.js";
import type { RepeatsSection, TurnReport } from "../report/types.js";
import { combineRepeatTurns, repeatsSection, type CombinedRepeats } from "./repeats.js";

/** Turns × repeats from which the section is computed in a worker thread. */
export const REPEATS_OFF_THREAD_MIN = 2_000;

export type SectionOptions = Parameters<typeof repeatsSection>[1];
/** What the worker needs of a turn. */
export type RepeatTurn = Pick<TurnReport, "caseId" | "turn" | "repeatScores">;

/** `repeatsSection(turns, o)`, computed in a worker thread from `minWork` turns × repeats on (null `onWhere`: not told). */
export async function repeatsSectionOffThread(
  turns: readonly TurnReport[],
  o: SectionOptions,
  opts: { minWork?: number; onWhere?: (where: "worker" | "this thread") => void } = {},
): Promise<RepeatsSection> {
  if (!o.identical && turns.length * o.n >= (opts.minWork ?? REPEATS_OFF_THREAD_MIN)) {
    const slim: RepeatTurn[] = turns.map((t) => ({
      caseId: t.caseId,
      turn: t.turn,
      ...(t.repeatScores !== undefined ? { repeatScores: t.repeatScores } : {}),
    }));
    const section = await runJob<RepeatTurn, RepeatsSection>(siblingModule(import.meta.url, "repeats-worker"), o, slim);
    if (section !== null) {
      opts.onWhere?.("worker");
      return section;
    }
  }
  opts.onWhere?.("this thread");
  return repeatsSection(turns, o);
}

/** `combineRepeats(runs, opts)`, its section's intervals computed by `repeatsSectionOffThread`. */
export async function combineRepeatsOffThread(
  runs: readonly (readonly TurnReport[])[],
  opts: { seed: number; samples?: number },
): Promise<CombinedRepeats> {
  const { turns, ...o } = combineRepeatTurns(runs);
  const section = await repeatsSectionOffThread(turns, {
    ...o,
    seed: opts.seed,
    ...(opts.samples !== undefined ? { samples: opts.samples } : {}),
  });
  return { turns, section };
}
