/**
 * `buildReport` that leaves the event loop free (docs/reliability.md,
 * "Interrupted runs leave nothing behind"): the build of a large run takes
 * seconds (a million-span recording's 200,000 turns: passes over the turns
 * and the bootstrap's resamples), during which a synchronous build would
 * hold off SIGINT, SIGTERM and SIGHUP. The build runs in this thread in
 * steps (`buildReportSteps`, ./aggregate.ts; src/eval/stats/steps.ts): one
 * pass over the turns or one slice of resamples a step, the loop running
 * between them, so a signal's handler ends the run within a step. The same
 * report as `buildReport`, byte for byte (test/eval/build-thread.test.ts).
 *
 * Issue 49 built it in a worker thread; issue 51 (scale) brought it back:
 * the copy of 200,000 turns into the worker took 0.6 to 0.9 GB of peak
 * memory and seconds of CPU, for a computation this thread can do in steps.
 */
import { runStepsYielding } from "../stats/steps.js";
import { buildReportSteps, type BuildReportInput } from "./aggregate.js";
import type { Report } from "./types.js";

/** The report `buildReport(input)` returns, built in steps with the event loop running between them. */
export async function buildReportYielding(input: BuildReportInput): Promise<Report> {
  return runStepsYielding(buildReportSteps(input));
}
