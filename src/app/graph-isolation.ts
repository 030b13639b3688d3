/**
 * Your graph runs in a thread of its own (docs/reliability.md, "Your graph
 * runs in a thread of its own"). The modules a `--graph` run loads (`--graph`,
 * `--input`, `--id-map`) are imported, built and invoked in a worker thread
 * (./graph-worker.ts) so that nothing they do can end, hang or flood the run:
 *
 * - **memory**: the thread's heap is limited (`run.graphMemoryMb`, default
 *   DEFAULT_GRAPH_MEMORY_MB); a graph that outgrows it ends its thread, not
 *   retrace's process;
 * - **loading**: importing the modules and building the graph (a factory, a
 *   top-level await) must finish within `run.loadTimeout` seconds (default
 *   DEFAULT_LOAD_TIMEOUT_S); a top-level await that can never settle is seen
 *   at once;
 * - **turns**: the per-turn deadline (`run.turnTimeout`) is kept inside the
 *   thread as before (the turn is given up, an error turn); a turn that runs
 *   past it by WATCH_GRACE_MS without the thread ever yielding (a synchronous
 *   loop) is seen from here, and the thread is ended;
 * - **process.exit** in your code ends only its thread;
 * - **stdout and stderr** of your code are the thread's own, captured here:
 *   shown on stderr with `--verbose` (each line prefixed with the module,
 *   secrets redacted), else discarded. Never on stdout, so `--json` stays one
 *   document. retrace's own messages from the thread reach stderr as usual.
 *
 * Each way the thread can end early is one GraphInputError (exit 2): one
 * `retrace:` line naming the module, what happened and, when a turn was
 * running, which. Nothing is recorded of a run stopped so: a turn that ran
 * past its deadline is never recorded as a normal turn. retrace's retrieval
 * evaluators (pure functions of a turn) run in the graph's thread, as they
 * would here; any other (the judge) runs here, each turn's artifacts sent
 * over to be scored — so the scores are those of a sweep in one thread.
 */
import type { Replay } from "../eval/sweep/replay.js";
import type { Worker } from "node:worker_threads";
import { GraphInputError } from "../errors.js";
import type { EvaluatorSpec } from "../eval/measures/evaluators.js";
import type { TurnArtifacts } from "../eval/measures/types.js";
import type { RetrievalCall } from "../eval/sweep/capture.js";
import type { GraphTurn, SweepPhases } from "../eval/sweep/external-graph.js";
import {
  DEFAULT_GRAPH_MEMORY_MB,
  DEFAULT_LOAD_TIMEOUT_S,
  DEFAULT_TURN_TIMEOUT_S,
  secondsText,
} from "../eval/sweep/turn-guard.js";
import type { EvalCase } from "../kb/types.js";
import { log, logLine, verboseRequested, type LogLevel } from "../log.js";
import { moduleWorker, siblingModule } from "../module-worker.js";
import { InvalidArgumentError } from "../errors.js";
import { reviveError, serializeError, type SerializedError } from "../thread-errors.js";

/** How long past its deadline a turn may go without its thread yielding before the thread is ended, ms. */
export const WATCH_GRACE_MS = 2000;

/** What the graph's thread is started with (plain data). */
export interface GraphWorkerInit {
  options: {
    graph: string;
    input?: string;
    idKey?: string;
    idMap?: string;
    retrievalCall?: RetrievalCall;
    k: number;
    turnTimeoutMs: number;
    counterfactual: boolean;
    /** What earlier turns the graph sees (`run.replay`; src/eval/sweep/replay.ts). */
    replay?: Replay;
  };
  cases: readonly EvalCase[];
  knownIds: readonly string[];
  concurrency: number;
  configurable?: Record<string, unknown>;
  repeat: number;
  /** The evaluators by name and keys; each runs in the main thread (`evaluate` messages). Filled in by `isolatedGraphSweep`. */
  evaluators: readonly { name: string; keys: string[]; whenEmpty: string }[];
}

/** What the graph's thread says. */
export type GraphWorkerMessage =
  | { type: "log"; level: LogLevel; msg: string }
  | { type: "loaded" }
  | { type: "turn"; where: string; phase: "start" | "end" }
  | { type: "progress"; done: number; total: number }
  | { type: "evaluate"; id: number; evaluator: number; artifacts: Omit<TurnArtifacts, "knownIds"> }
  | { type: "exit"; code: number | string; at?: string }
  | { type: "drained" }
  | { type: "done"; runs: GraphTurn[][]; file: string; exportName: string; phases: SweepPhases }
  | { type: "failed"; error: SerializedError };

/** What this thread answers (an evaluator's results). */
export type GraphWorkerReply =
  { type: "evaluated"; id: number; results: unknown } | { type: "evaluated"; id: number; error: SerializedError };

/** The limits of a graph's thread, from the options (`run.loadTimeout`, `run.graphMemoryMb`, `run.turnTimeout`). */
export interface IsolationLimits {
  loadTimeoutMs: number;
  memoryMb: number;
  turnTimeoutMs: number;
}

export function isolationLimits(o: {
  loadTimeout?: number;
  graphMemoryMb?: number;
  turnTimeout?: number;
}): IsolationLimits {
  const load = o.loadTimeout ?? DEFAULT_LOAD_TIMEOUT_S;
  if (!(typeof load === "number" && Number.isFinite(load) && load > 0))
    throw new InvalidArgumentError("run.loadTimeout", "a positive number of seconds", load);
  const mb = o.graphMemoryMb ?? DEFAULT_GRAPH_MEMORY_MB;
  if (!(Number.isInteger(mb) && mb >= 16))
    throw new InvalidArgumentError("run.graphMemoryMb", "an integer number of MB, at least 16", mb);
  return { loadTimeoutMs: load * 1000, memoryMb: mb, turnTimeoutMs: (o.turnTimeout ?? DEFAULT_TURN_TIMEOUT_S) * 1000 };
}

/** `case c-1 turn 0` of the first turn in flight, as a message's `while running …`. */
function during(loaded: boolean, inFlight: ReadonlyMap<string, number>): string {
  const first = inFlight.keys().next();
  if (!loaded) return " while loading and building the graph";
  return first.done === true ? "" : ` while running ${first.value}`;
}

/**
 * Runs the sweep `init` describes in a thread of its own (see the module
 * comment), scoring each turn here with `evaluators`; resolves with every
 * repeat's turns, or rejects with the one error that stopped it.
 */
export function isolatedGraphSweep(
  init: GraphWorkerInit,
  o: {
    /** How messages name the module: `--graph agent.ts#graph`. */
    label: string;
    evaluators: readonly EvaluatorSpec[];
    knownIds: ReadonlySet<string>;
    limits: IsolationLimits;
    onCaseDone?: (done: number, total: number) => void;
  },
): Promise<{ runs: GraphTurn[][]; file: string; exportName: string; phases: SweepPhases }> {
  const { label, limits } = o;
  const worker: Worker = moduleWorker(
    siblingModule(import.meta.url, "graph-worker"),
    { ...init, evaluators: o.evaluators.map((e) => ({ name: e.name, keys: e.keys, whenEmpty: e.whenEmpty })) },
    { resourceLimits: { maxOldGenerationSizeMb: limits.memoryMb }, stdout: true, stderr: true },
  );
  const verbose = verboseRequested();
  // Your code's output: shown with --verbose (a line at a time, redacted by the logger), else read and dropped.
  for (const [name, stream] of [
    ["stdout", worker.stdout],
    ["stderr", worker.stderr],
  ] as const) {
    let rest = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      if (!verbose) return;
      const lines = (rest + chunk).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) log.debug(`${label} ${name}: ${line}`);
    });
    stream.on("end", () => {
      if (verbose && rest !== "") log.debug(`${label} ${name}: ${rest}`);
    });
  }
  return new Promise((resolve, reject) => {
    let loaded = false;
    let settled = false;
    let drained = false;
    let exitCalled: { code: number | string; at?: string } | undefined;
    const inFlight = new Map<string, number>();
    const loadTimer = setTimeout(() => {
      stop(
        new GraphInputError(
          `${label}: loading and building the graph did not finish within ${secondsText(limits.loadTimeoutMs)} (run.loadTimeout): a top-level await or a factory that never settles?; its thread was ended`,
        ),
      );
    }, limits.loadTimeoutMs);
    const watch = setInterval(() => {
      const now = performance.now();
      for (const [where, started] of inFlight)
        if (now - started > limits.turnTimeoutMs + WATCH_GRACE_MS) {
          stop(
            new GraphInputError(
              `${label}: ${where} ran past its ${secondsText(limits.turnTimeoutMs)} deadline (run.turnTimeout) without yielding to the event loop (a synchronous loop in your code?); its thread was ended and the run stopped`,
            ),
          );
          return;
        }
    }, 250);
    function stop(
      e: Error | null,
      value?: { runs: GraphTurn[][]; file: string; exportName: string; phases: SweepPhases },
    ) {
      if (settled) return;
      settled = true;
      clearTimeout(loadTimer);
      clearInterval(watch);
      worker.removeAllListeners("exit");
      // A failure ends the thread (it may be stuck in a loop); after a sweep that finished the thread ends by itself once
      // nothing is left to run (its `exit` listeners run, as in a process of its own), and never holds the process: what
      // your code left pending (a 24-day timer of a turn given up, a socket) does not keep retrace waiting.
      if (e !== null) void worker.terminate();
      else worker.unref();
      if (e !== null) reject(e);
      else resolve(value!);
    }
    worker.on("message", (m: GraphWorkerMessage) => {
      switch (m.type) {
        case "log":
          logLine(m.level, m.msg);
          return;
        case "loaded":
          loaded = true;
          clearTimeout(loadTimer);
          return;
        case "turn":
          if (m.phase === "start") inFlight.set(m.where, performance.now());
          else inFlight.delete(m.where);
          return;
        case "progress":
          o.onCaseDone?.(m.done, m.total);
          return;
        case "evaluate": {
          const spec = o.evaluators[m.evaluator]!;
          void (async () => {
            let reply: GraphWorkerReply;
            try {
              const results = await spec.evaluate({ ...m.artifacts, knownIds: o.knownIds });
              reply = { type: "evaluated", id: m.id, results };
            } catch (e) {
              reply = { type: "evaluated", id: m.id, error: serializeError(e) };
            }
            if (!settled) worker.postMessage(reply);
          })();
          return;
        }
        case "exit":
          exitCalled = { code: m.code, ...(m.at !== undefined ? { at: m.at } : {}) };
          return;
        case "drained":
          drained = true;
          return;
        case "done":
          stop(null, { runs: m.runs, file: m.file, exportName: m.exportName, phases: m.phases });
          return;
        case "failed":
          stop(reviveError(m.error));
          return;
      }
    });
    worker.on("error", (e: Error & { code?: string }) => {
      if (e.code === "ERR_WORKER_OUT_OF_MEMORY")
        stop(
          new GraphInputError(
            `${label}: ran out of memory${during(loaded, inFlight)}: its thread may use ${limits.memoryMb} MB (run.graphMemoryMb); the thread was ended and the run stopped`,
          ),
        );
      else
        stop(
          new GraphInputError(
            `${label}: your code threw outside any turn${during(loaded, inFlight)} (an error in a callback or timer nothing awaited): ${e.message}`,
            { cause: e },
          ),
        );
    });
    worker.on("exit", (code) => {
      if (exitCalled !== undefined)
        stop(
          new GraphInputError(
            `${label}: your code called process.exit(${String(exitCalled.code)})${exitCalled.at !== undefined ? ` at ${exitCalled.at}` : ""}${during(loaded, inFlight)}; it ended only the graph's thread, and the run is stopped (a graph may not end retrace's process)`,
          ),
        );
      else if (drained && !loaded)
        stop(
          new GraphInputError(
            `${label}: loading and building the graph never finished: a top-level await or a factory awaits a promise that nothing is left to settle`,
          ),
        );
      else stop(new GraphInputError(`${label}: the graph's thread ended (exit ${code})${during(loaded, inFlight)}`));
    });
  });
}
