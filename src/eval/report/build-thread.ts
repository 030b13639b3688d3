/**
 * `buildReport` that leaves the calling thread free (docs/reliability.md,
 * "Interrupted runs leave nothing behind"): the bootstrap of a large run
 * takes seconds (0.3 to 0.5 ms a turn here), during which a synchronous build
 * would hold off SIGINT, SIGTERM and SIGHUP. From `OFF_THREAD_MIN_TURNS`
 * turns, the report is built in a worker thread by the same `buildReport`,
 * so its bytes are those of a build in this thread (test/eval/build-thread.test.ts),
 * while this thread's event loop keeps running and its signal handlers end
 * the run at once. The turns cross in chunks, this thread yielding between
 * them (src/thread-job.ts), each as what the build reads of it
 * (`reportTurn`, ./build-protocol.ts: no texts, comments or documents, which
 * made the copy a gigabyte at a million spans); the report comes back without them, and the caller's own run, turns and gate objects are put
 * back in their places. A worker that cannot start, or an input with
 * functions the worker cannot receive (`extraSplits`), builds here.
 */
import { siblingModule } from "../../module-worker.js";
import { runJob } from "../../thread-job.js";
import { buildReport, type BuildReportInput } from "./aggregate.js";
import { evaluatorData, reportTurn, type BuildResult, type BuildWorkerData } from "./build-protocol.js";
import type { Report, TurnReport } from "./types.js";

/** Turns from which the report is built in a worker thread: below, the build takes well under a second here. */
export const OFF_THREAD_MIN_TURNS = 1_000;

export interface OffThreadOptions {
  /** Turns from which the worker builds the report (default `OFF_THREAD_MIN_TURNS`; 0: always). */
  minTurns?: number;
  /** Hears where the report was built. */
  onBuilt?: (where: "worker" | "this thread") => void;
}

/** The report `buildReport(input)` would return, built in a worker thread from `minTurns` turns on. */
export async function buildReportOffThread(input: BuildReportInput, opts: OffThreadOptions = {}): Promise<Report> {
  const here = (): Report => {
    const report = buildReport(input);
    opts.onBuilt?.("this thread");
    return report;
  };
  if (input.turns.length < (opts.minTurns ?? OFF_THREAD_MIN_TURNS) || input.extraSplits !== undefined) return here();
  const { turns, evaluators, ...rest } = input;
  const data: BuildWorkerData = { input: rest, evaluators: evaluatorData(turns, evaluators) };
  const built = await runJob<TurnReport, BuildResult>(
    siblingModule(import.meta.url, "build-worker"),
    data,
    turns,
    reportTurn,
  );
  // A worker that could not start or died builds here (the same numbers, only without the free loop).
  if (built === null) return here();
  const report = built as unknown as Report;
  // Same places (the keys exist), the caller's own objects, as a build in this thread returns them.
  report.run = input.run;
  report.turns = input.turns;
  report.gate = input.gate ?? null;
  opts.onBuilt?.("worker");
  return report;
}
