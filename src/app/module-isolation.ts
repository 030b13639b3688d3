/**
 * The other modules a user hands retrace run in a thread of their own too
 * (docs/reliability.md, "Your graph runs in a thread of its own"): `--judge`
 * (`eval --judge`, `label --judge`) and `cases synth --generator` are loaded,
 * built and called in a worker thread (./module-host-worker.ts) with the same
 * limits as a `--graph` module (./graph-isolation.ts):
 *
 * - **memory**: the thread's heap is limited (`run.graphMemoryMb`);
 * - **loading**: importing the module and building what it exports (a
 *   factory, a top-level await) must finish within `run.loadTimeout`; a
 *   top-level await that can never settle is seen at once;
 * - **calls**: each call (a judge's `invoke`, a generator's call on a card)
 *   must answer within the per-call deadline (`run.turnTimeout`); a call that
 *   runs past it while the thread still yields is a slow model (the judge:
 *   exit 3, as any judge model failure) or a stuck generator (exit 2); one
 *   whose thread stops yielding (a synchronous loop) is exit 2;
 * - **process.exit** in the module ends only its thread;
 * - **stdout and stderr** of the module are captured: shown on stderr with
 *   `--verbose` (redacted by the logger), else discarded; never on stdout.
 *
 * Each way the thread can end early is one error naming the module: the
 * thread is ended and every call pending or made after it rejects with it.
 * Only plain data crosses: a judge gets `{ role, content }` messages (built
 * into LangChain messages in the thread) and answers its reply's text and
 * token counts; a generator gets the card and its seed (its `random` is built
 * in the thread, the same stream as before) and answers its turns.
 */
import type { Worker } from "node:worker_threads";
import { GraphInputError, ServiceUnavailableError } from "../errors.js";
import { secondsText } from "../eval/sweep/turn-guard.js";
import { log, logLine, verboseRequested, type LogLevel } from "../log.js";
import { moduleWorker, siblingModule } from "../module-worker.js";
import { reviveError, type SerializedError } from "../thread-errors.js";
import { WATCH_GRACE_MS, type IsolationLimits } from "./graph-isolation.js";

/** The kinds of module a host thread loads. */
export type HostedKind = "judge" | "generator";

/** What the host thread is started with (plain data). */
export interface ModuleHostInit {
  kind: HostedKind;
  /** The module file as the user gave it. */
  spec: string;
  cwd: string;
}

/** What the host thread says. */
export type ModuleHostMessage =
  | { type: "log"; level: LogLevel; msg: string }
  | { type: "beat" }
  | { type: "output"; stream: "stdout" | "stderr"; text: string }
  | { type: "loaded"; info: Record<string, string> }
  | { type: "exit"; code: number | string; at?: string }
  | { type: "drained" }
  | { type: "failed"; error: SerializedError }
  | { type: "result"; id: number; value: unknown }
  | { type: "result"; id: number; error: SerializedError };

/** What this thread asks. */
export interface ModuleHostCall {
  type: "call";
  id: number;
  args: unknown;
}

/** A loaded module in its thread: what it said about itself, and a way to call it. */
export interface HostedModule {
  /** What the thread reported once the module was built (a judge's `name` and `model`; a generator's `name`, `version`, `file`). */
  info: Record<string, string>;
  /** Calls the module with `args` (plain data); rejects with the one error that stopped the thread, if any. */
  call(args: unknown, what: string): Promise<unknown>;
  /** Ends the thread (idempotent). */
  close(): Promise<void>;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  started: number;
  what: string;
}

/**
 * Loads `init.spec` in a thread of its own (see the module comment) and
 * resolves once it is built, or rejects with the one error (exit 2 naming
 * `label`) that stopped the loading.
 */
export function hostModule(
  init: ModuleHostInit,
  label: string,
  limits: IsolationLimits,
  /** What sets each call's deadline, for messages (`run.turnTimeout` for a judge, `run.callTimeout` for a generator). */
  deadlineSetting = "run.turnTimeout",
): Promise<HostedModule> {
  const worker: Worker = moduleWorker(siblingModule(import.meta.url, "module-host-worker"), init, {
    resourceLimits: { maxOldGenerationSizeMb: limits.memoryMb },
    stdout: true,
    stderr: true,
  });
  const verbose = verboseRequested();
  // The module's output (posted by its thread, see ./module-host-worker.ts): shown with --verbose a line at a time,
  // redacted by the logger, else dropped. Not read from the thread's stdio streams: a listener on them would hold
  // the process between calls.
  const rest = { stdout: "", stderr: "" };
  const output = (name: "stdout" | "stderr", text: string) => {
    if (!verbose) return;
    const lines = (rest[name] + text).split("\n");
    rest[name] = lines.pop() ?? "";
    for (const line of lines) log.debug(`${label} ${name}: ${line}`);
  };
  const flushOutput = () => {
    for (const name of ["stdout", "stderr"] as const)
      if (verbose && rest[name] !== "") {
        log.debug(`${label} ${name}: ${rest[name]}`);
        rest[name] = "";
      }
  };
  let loaded = false;
  let failure: Error | undefined;
  let exitCalled: { code: number | string; at?: string } | undefined;
  let drained = false;
  let lastBeat = performance.now();
  /** The worker beats every 250 ms (./module-host-worker.ts): a second without one is a thread that has stopped yielding. */
  const BEAT_STALE_MS = 1000;
  let nextId = 0;
  const pending = new Map<number, Pending>();
  let onLoaded: ((info: Record<string, string>) => void) | undefined;
  let onLoadFailed: ((e: Error) => void) | undefined;

  // The thread holds the process only while a call is pending (or while loading).
  const keepAlive = () => (!loaded || pending.size > 0 ? worker.ref() : worker.unref());
  const during = (): string => {
    if (!loaded) return " while loading it";
    const first = pending.values().next();
    return first.done === true ? "" : ` during ${first.value.what}`;
  };

  function stop(e: Error): void {
    if (failure !== undefined) return;
    failure = e;
    flushOutput();
    clearTimeout(loadTimer);
    clearInterval(watch);
    worker.removeAllListeners("exit");
    void worker.terminate();
    onLoadFailed?.(e);
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  }

  const loadTimer = setTimeout(() => {
    stop(
      new GraphInputError(
        `${label}: loading the module and building what it exports did not finish within ${secondsText(limits.loadTimeoutMs)} (run.loadTimeout): a top-level await or a factory that never settles?; its thread was ended`,
      ),
    );
  }, limits.loadTimeoutMs);
  const watch = setInterval(() => {
    const now = performance.now();
    for (const p of pending.values()) {
      if (now - p.started <= limits.turnTimeoutMs) continue;
      const silent = now - lastBeat;
      // A thread that has not beaten for a while may be in a synchronous loop: wait out the grace to tell.
      if (silent > BEAT_STALE_MS && silent <= WATCH_GRACE_MS) continue;
      if (silent > WATCH_GRACE_MS)
        stop(
          new GraphInputError(
            `${label}: ${p.what} ran past its ${secondsText(limits.turnTimeoutMs)} deadline (${deadlineSetting}) without yielding to the event loop (a synchronous loop in your code?); its thread was ended and the run stopped`,
          ),
        );
      else if (init.kind === "judge")
        stop(
          new ServiceUnavailableError(
            `judge ${init.spec}`,
            `${label}: the judge model did not answer ${p.what} within ${secondsText(limits.turnTimeoutMs)} (${deadlineSetting}); its thread was ended and the run stopped`,
          ),
        );
      else
        stop(
          new GraphInputError(
            `${label}: ${p.what} did not finish within ${secondsText(limits.turnTimeoutMs)} (${deadlineSetting}): a promise that never settles?; its thread was ended and the run stopped`,
          ),
        );
      return;
    }
  }, 250);
  watch.unref();

  worker.on("message", (m: ModuleHostMessage) => {
    switch (m.type) {
      case "log":
        logLine(m.level, m.msg);
        return;
      case "output":
        output(m.stream, m.text);
        return;
      case "beat":
        lastBeat = performance.now();
        return;
      case "loaded":
        loaded = true;
        clearTimeout(loadTimer);
        keepAlive();
        onLoaded?.(m.info);
        return;
      case "exit":
        exitCalled = { code: m.code, ...(m.at !== undefined ? { at: m.at } : {}) };
        return;
      case "drained":
        drained = true;
        return;
      case "failed":
        stop(reviveError(m.error));
        return;
      case "result": {
        const p = pending.get(m.id);
        if (p === undefined) return;
        pending.delete(m.id);
        keepAlive();
        if ("error" in m) p.reject(reviveError(m.error));
        else p.resolve(m.value);
        return;
      }
    }
  });
  worker.on("error", (e: Error & { code?: string }) => {
    if (e.code === "ERR_WORKER_OUT_OF_MEMORY")
      stop(
        new GraphInputError(
          `${label}: ran out of memory${during()}: its thread may use ${limits.memoryMb} MB (run.graphMemoryMb); the thread was ended and the run stopped`,
        ),
      );
    else
      stop(
        new GraphInputError(
          `${label}: your code threw outside any call${during()} (an error in a callback or timer nothing awaited): ${e.message}`,
          { cause: e },
        ),
      );
  });
  worker.on("exit", (code) => {
    if (exitCalled !== undefined)
      stop(
        new GraphInputError(
          `${label}: your code called process.exit(${String(exitCalled.code)})${exitCalled.at !== undefined ? ` at ${exitCalled.at}` : ""}${during()}; it ended only the module's thread, and the run is stopped (a module may not end retrace's process)`,
        ),
      );
    else if (drained && !loaded)
      stop(
        new GraphInputError(
          `${label}: loading the module never finished: a top-level await or a factory awaits a promise that nothing is left to settle`,
        ),
      );
    else stop(new GraphInputError(`${label}: the module's thread ended (exit ${code})${during()}`));
  });

  const hosted = (info: Record<string, string>): HostedModule => ({
    info,
    call(args, what) {
      if (failure !== undefined) return Promise.reject(failure);
      return new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject, started: performance.now(), what });
        keepAlive();
        const msg: ModuleHostCall = { type: "call", id, args };
        worker.postMessage(msg);
      });
    },
    async close() {
      if (failure !== undefined) return;
      failure = new GraphInputError(`${label}: called after the run closed it`);
      flushOutput();
      clearTimeout(loadTimer);
      clearInterval(watch);
      worker.removeAllListeners("exit");
      await worker.terminate();
    },
  });
  return new Promise((resolve, reject) => {
    onLoaded = (info) => resolve(hosted(info));
    onLoadFailed = reject;
  });
}
