/**
 * Entry of the thread an LSA fit runs in (`fitLsaOffThread`, ./lsa-fit-thread.ts): the
 * fit is seconds of synchronous arithmetic on a KB of some size, and in
 * retrace's own thread it would hold off SIGINT/SIGTERM/SIGHUP until it ends
 * (docs/reliability.md, "Every sweep stops when asked"). Here the main
 * thread stays free to stop the run at once. Answers the state's bytes
 * (`serializeLsa`: exact, `v` is float32 already), its chance share and the
 * chance baseline's ms.
 */
import { parentPort, workerData } from "node:worker_threads";
import { createAnalyzers, type AnalyzerConfig } from "../analyzer.js";
import { serializeError } from "../../thread-errors.js";
import { fitLsaHere } from "./lsa-fit-thread.js";
import { serializeLsa, type LsaChunk, type LsaParams } from "./lsa-format.js";

const init = workerData as { chunks: LsaChunk[]; params: LsaParams; overrides: AnalyzerConfig };
const port = parentPort;
if (port === null)
  throw new Error("src/retrieval/embedders/lsa-fit-worker.ts runs in a worker thread (fitLsaOffThread starts it)");
try {
  const { state, chanceMs } = fitLsaHere(init.chunks, init.params, createAnalyzers(init.overrides));
  const bytes = serializeLsa(state);
  port.postMessage({ bytes, chanceShare: state.chanceShare, chanceMs });
} catch (e) {
  port.postMessage({ error: serializeError(e) });
}
