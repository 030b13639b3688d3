/**
 * Entry of the thread a user's graph runs in (started by
 * ./graph-isolation.ts; docs/reliability.md, "Your graph runs in a thread of
 * its own"): loads the modules, builds the graph and runs the sweep
 * (`sweepGraphHere`), each turn scored by the main thread's evaluators
 * (`evaluate` messages). retrace's own log lines go to the main thread; this
 * thread's stdout and stderr are your code's, captured there.
 *
 * While the sweep runs, the port to the main thread does not keep this
 * thread alive (unless an evaluator's answer is awaited): when nothing is
 * left to run, `beforeExit` comes as in a process of its own — a turn
 * pending then is stalled (src/eval/sweep/turn-guard.ts), a top-level await
 * still pending while loading can never settle (`drained`).
 */
import { parentPort, workerData } from "node:worker_threads";
import { retrievalSideEvaluators, type EvaluatorSpec } from "../eval/measures/evaluators.js";
import type { EvalResult } from "../eval/measures/types.js";
import { setLogSink } from "../log.js";
import { userFrame } from "../user-module.js";
import { sweepGraphHere } from "./graph-eval.js";
import type { GraphWorkerInit, GraphWorkerMessage, GraphWorkerReply } from "./graph-isolation.js";
import { reviveError, serializeError } from "../thread-errors.js";

const port = parentPort;
if (port === null) throw new Error("src/app/graph-worker.ts runs in a worker thread (./graph-isolation.ts starts it)");
const init = workerData as GraphWorkerInit;
const post = (m: GraphWorkerMessage) => port.postMessage(m);

setLogSink((level, msg) => post({ type: "log", level, msg }));

// process.exit in your code ends this thread only; the main thread is told who called it first.
const exit = process.exit.bind(process);
process.exit = ((code?: number | string | null) => {
  const at = userFrame(new Error("process.exit"));
  post({ type: "exit", code: code ?? process.exitCode ?? 0, ...(at !== undefined ? { at } : {}) });
  return exit(code);
}) as typeof process.exit;

let loading = true;
process.on("beforeExit", () => {
  if (loading) post({ type: "drained" });
});

// The port keeps this thread alive only while an evaluator's answer is awaited (see the module comment).
const awaiting = new Map<number, { resolve: (r: EvalResult[]) => void; reject: (e: Error) => void }>();
let nextId = 0;
const keepAlive = () => (awaiting.size > 0 ? port.ref() : port.unref());
port.on("message", (m: GraphWorkerReply) => {
  const p = awaiting.get(m.id);
  if (p === undefined) return;
  awaiting.delete(m.id);
  keepAlive();
  if ("error" in m) p.reject(reviveError(m.error));
  else p.resolve(m.results as EvalResult[]);
});
keepAlive();

// retrace's retrieval evaluators (pure functions of the turn) run here, as the main thread would run them; any other (the judge) there.
const local = retrievalSideEvaluators({ k: init.options.k });
const sameSpec = (e: { name: string; keys: string[] }) =>
  local.find((l) => l.name === e.name && l.keys.join("\n") === e.keys.join("\n"));
const evaluators: EvaluatorSpec[] = init.evaluators.map((e, evaluator) => {
  const here = sameSpec(e);
  return here !== undefined ? here : remote(e, evaluator);
});

function remote(e: GraphWorkerInit["evaluators"][number], evaluator: number): EvaluatorSpec {
  return {
    name: e.name,
    keys: e.keys,
    whenEmpty: e.whenEmpty,
    evaluate: (a) =>
      new Promise<EvalResult[]>((resolve, reject) => {
        const id = nextId++;
        awaiting.set(id, { resolve, reject });
        keepAlive();
        const { knownIds: _knownIds, ...artifacts } = a;
        post({ type: "evaluate", id, evaluator, artifacts });
      }),
  };
}

try {
  const out = await sweepGraphHere(init, evaluators, {
    loaded: () => {
      loading = false;
      post({ type: "loaded" });
    },
    onTurn: (where, phase) => post({ type: "turn", where, phase }),
    onCaseDone: (done, total) => post({ type: "progress", done, total }),
  });
  post({ type: "done", ...out });
} catch (e) {
  post({ type: "failed", error: serializeError(e) });
}
