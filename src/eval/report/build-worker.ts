/**
 * The worker thread of `buildReportOffThread` (./build-thread.ts): receives
 * the turns in chunks, then builds the report with the very `buildReport`
 * the calling thread would run, and sends it back without its turns and run
 * (the caller puts its own objects back in their places).
 */
import { parentPort, workerData } from "node:worker_threads";
import { serializeError } from "../../thread-errors.js";
import { buildReport } from "./aggregate.js";
import { standInEvaluators, type BuildMessage, type BuildWorkerData, type BuildReply } from "./build-protocol.js";
import type { TurnReport } from "./types.js";

const data = workerData as BuildWorkerData;
const turns: TurnReport[] = [];
const reply = (m: BuildReply) => parentPort!.postMessage(m);

parentPort!.on("message", (m: BuildMessage) => {
  if (m.turns !== undefined) {
    for (const t of m.turns) turns.push(t);
    return;
  }
  try {
    const report = buildReport({ ...data.input, turns, evaluators: standInEvaluators(data.evaluators) });
    reply({ report: { ...report, run: null, turns: null, gate: null } });
  } catch (e) {
    reply({ error: serializeError(e) });
  }
  parentPort!.close();
});
