/**
 * Entry of the thread `retrace label --merge` merges in (started by
 * `mergeLabelFilesApart`, ./label-files.ts): reads the KB or catalog the
 * export is checked against, merges, and posts the outcome. The merge is
 * synchronous work over whole files; in a thread of its own it leaves the
 * main thread free to end the run on a signal at any point (docs/reliability.md,
 * "Interrupted runs leave nothing behind").
 */
import { parentPort, workerData } from "node:worker_threads";
import { setLogSink } from "../log.js";
import { mergeIdsOf, mergeLabelFiles, type MergeApartInit } from "./label-files.js";
import { serializeError } from "../thread-errors.js";

const port = parentPort;
if (port === null)
  throw new Error("src/app/label-merge-worker.ts runs in a worker thread (./label-files.ts starts it)");
const init = workerData as MergeApartInit;
setLogSink((level, msg) => port.postMessage({ type: "log", level, msg }));
try {
  const ids = init.ids === null ? undefined : await mergeIdsOf(init.ids);
  port.postMessage({ type: "done", outcome: await mergeLabelFiles(init.exported, init.into, ids) });
} catch (e) {
  port.postMessage({ type: "failed", error: serializeError(e) });
}
