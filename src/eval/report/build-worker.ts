/**
 * The worker thread of `buildReportOffThread` (./build-thread.ts): builds the
 * report of the turns it is sent with the very `buildReport` the calling
 * thread would run, and answers without its run, turns and gate (the caller
 * puts its own objects back in their places).
 */
import { workerData } from "node:worker_threads";
import { serveJob } from "../../thread-job.js";
import { buildReport } from "./aggregate.js";
import { standInEvaluators, type BuildResult, type BuildWorkerData } from "./build-protocol.js";
import type { TurnReport } from "./types.js";

const data = workerData as BuildWorkerData;
serveJob<TurnReport, BuildResult>((turns) => {
  const report = buildReport({ ...data.input, turns, evaluators: standInEvaluators(data.evaluators) });
  return { ...report, run: null, turns: null, gate: null };
});
