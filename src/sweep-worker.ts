/**
 * Entry of a sweep worker thread (started by src/app/own-graph/parallel.ts, which
 * is handed this module's URL, SWEEP_WORKER_ENTRY of the composition root):
 * opens the retriever its init describes with the composition root's one
 * retriever factory, builds the graph, says `ready`, then runs each case index
 * it is sent with the one case runner of every sweep (`graphCaseRunner`) and
 * posts the turns back. It sits beside
 * src/system.ts, outside the layers, so eval/ never imports the root.
 */
import { parentPort, workerData } from "node:worker_threads";
import { createAnalyzers } from "./retrieval/analyzer.js";
import { openRetriever, type RetrieverRecipe } from "./system.js";
import {
  ownGraphCaseOptions,
  serializeError,
  type SweepWorkerInit,
  type WorkerMessage,
} from "./app/own-graph/parallel.js";
import { graphCaseRunner } from "./eval/sweep/external-graph.js";
import { evaluatorsFor } from "./eval/measures/storeless.js";

const port = parentPort;
if (port === null)
  throw new Error("src/sweep-worker.ts runs in a worker thread (src/app/own-graph/parallel.ts starts it)");
const init = workerData as SweepWorkerInit<RetrieverRecipe>;
const post = (m: WorkerMessage) => port.postMessage(m);

try {
  const retriever = init.recipe === null ? null : await openRetriever(init.recipe, init.chunks);
  // The same options the main thread runs its share with (ownGraphCaseOptions).
  const options = ownGraphCaseOptions({
    retriever,
    kb: init.kb,
    analyzers: retriever?.analyzers ?? createAnalyzers(init.analyzers),
    defaults: init.defaults,
    evaluators: evaluatorsFor({ k: init.k, storeBacked: retriever !== null }),
    knownIds: new Set(init.knownIds),
    ...(init.partOf !== null ? { partOf: new Map(init.partOf) } : {}),
    threadPrefix: init.threadPrefix,
    k: init.k,
    counterfactual: init.counterfactual,
    ...(init.replay !== undefined ? { replay: init.replay } : {}),
  });
  const runner = graphCaseRunner({
    ...options,
    cases: init.cases,
    ...(init.turnTimeoutMs !== undefined ? { turnTimeoutMs: init.turnTimeoutMs } : {}),
  });
  port.on("message", (m: { type: "run"; index: number }) => {
    if (init.cases[m.index] === undefined) {
      post({ type: "failed", index: m.index, error: serializeError(new Error(`no case at index ${m.index}`)) });
      return;
    }
    runner.run(m.index).then(
      (result) => post({ type: "done", index: m.index, result }),
      (e: unknown) => post({ type: "failed", index: m.index, error: serializeError(e) }),
    );
  });
  post({ type: "ready" });
} catch (e) {
  post({ type: "failed", index: null, error: serializeError(e) });
}
