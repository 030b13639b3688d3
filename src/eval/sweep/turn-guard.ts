/**
 * Safeguards of a `--graph` sweep against a misbehaving graph
 * (docs/reliability.md, "A graph that hangs, stalls or grows"):
 *
 * - a per-turn deadline (`--turn-timeout`, DEFAULT_TURN_TIMEOUT_S): a turn
 *   that exceeds it is given up — its run is aborted through the `signal` of
 *   LangGraph's invoke config and the sweep goes on. The deadline's timer is
 *   unref'd: it never keeps the process alive by itself;
 * - stall detection (`TurnGuard`): when the event loop drains while turns
 *   are in flight (a node awaiting a promise that never settles, with
 *   nothing else scheduled), Node would exit 13 ("unsettled top-level
 *   await") with no report. A `beforeExit` listener, attached while turns
 *   are in flight, settles every pending turn as stalled instead, and the
 *   sweep goes on;
 * - the state size of a turn (`stateSize`): about the bytes of the final
 *   state values serialized as JSON, compared with `--max-state-mb`
 *   (DEFAULT_MAX_STATE_MB) by the report.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { isRetraceError, thrownMessage } from "../../errors.js";

/** Default per-turn deadline, seconds (`--turn-timeout`). */
export const DEFAULT_TURN_TIMEOUT_S = 120;
/** Default limit of loading and building a user's graph (`run.loadTimeout`; src/app/graph-isolation.ts), seconds. */
export const DEFAULT_LOAD_TIMEOUT_S = 30;
/** Default heap limit of the thread running a user's graph (`run.graphMemoryMb`; src/app/graph-isolation.ts), MB. */
export const DEFAULT_GRAPH_MEMORY_MB = 4096;
/** Default state size above which a turn is listed in the report, MB (`--max-state-mb`; 1 MB = 2^20 bytes). */
export const DEFAULT_MAX_STATE_MB = 16;
/** The longest delay `setTimeout` honours (a longer one fires at once); longer deadlines are cut to it (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How a turn ended when it did not return. */
export type TurnOutcome =
  | { kind: "done"; state: unknown }
  | { kind: "threw"; error: string }
  /** Given up: the deadline passed, or the event loop drained while it was pending. Its run was aborted; a node that ignores the signal may still be awaiting. */
  | { kind: "stuck"; why: "deadline" | "stalled"; error: string };

/** Seconds as written in messages: `120 s`, `0.5 s`. */
export function secondsText(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

/** The error of a turn that exceeded its deadline. */
export function deadlineMessage(ms: number): string {
  return `turn exceeded the ${secondsText(ms)} deadline (run.turnTimeout)`;
}

/** The error of a turn pending when the event loop drained. */
export const STALLED_MESSAGE =
  "turn never finished: the event loop drained while it was pending (a node awaits a promise that never settles, with nothing left scheduled to settle it)";

/**
 * The turns in flight of one sweep. While any is in flight a `beforeExit`
 * listener is attached: Node emits `beforeExit` only when the event loop has
 * nothing left to run, so every turn still pending then can never finish;
 * each is settled as stalled (`onStall` is told where) and the sweep, which
 * now has work again, goes on. The listener is removed when no turn is in
 * flight, so an idle guard never holds the process.
 */
export class TurnGuard {
  private readonly pending = new Map<number, { where: string; stall: () => void }>();
  private nextId = 0;
  private readonly listener = () => this.drained();

  constructor(private readonly onStall: (where: string) => void = () => {}) {}

  /** Registers a turn; `stall` settles it as stalled. Returns the function that unregisters it. */
  enter(where: string, stall: () => void): () => void {
    const id = this.nextId++;
    if (this.pending.size === 0) process.on("beforeExit", this.listener);
    this.pending.set(id, { where, stall });
    return () => {
      if (this.pending.delete(id) && this.pending.size === 0) process.off("beforeExit", this.listener);
    };
  }

  /** Turns in flight. */
  get size(): number {
    return this.pending.size;
  }

  private drained(): void {
    const stuck = [...this.pending.values()];
    for (const p of stuck) {
      this.onStall(p.where);
      p.stall();
    }
  }
}

/**
 * Invokes one turn under a deadline of `timeoutMs` (cut to about 24.8 days)
 * and the stall guard. The run gets an AbortSignal that is aborted when the
 * turn is given up, so LangGraph stops scheduling its nodes; the turn
 * settles at the deadline even when a node ignores the signal (its promise
 * is left behind: the run itself has stopped, so no later write reaches the thread).
 */
export async function invokeTurn(
  invoke: (config: RunnableConfig) => Promise<unknown>,
  config: RunnableConfig,
  o: { timeoutMs: number; guard: TurnGuard; where: string },
): Promise<TurnOutcome> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let leave = () => {};
  const givenUp = new Promise<TurnOutcome>((resolve) => {
    const giveUp = (why: "deadline" | "stalled", error: string) => {
      resolve({ kind: "stuck", why, error });
      controller.abort(new Error(error));
    };
    timer = setTimeout(() => giveUp("deadline", deadlineMessage(o.timeoutMs)), Math.min(o.timeoutMs, MAX_TIMER_MS));
    // The deadline never keeps the process alive: a turn with nothing else scheduled is the guard's to settle.
    timer.unref();
    leave = o.guard.enter(o.where, () => giveUp("stalled", STALLED_MESSAGE));
  });
  const run = (async (): Promise<TurnOutcome> => {
    try {
      return { kind: "done", state: await invoke({ ...config, signal: controller.signal }) };
    } catch (e) {
      // retrace's own failure (its store, its model: exit 3; a bad setting: exit 2) is the run's, never a turn's.
      if (isRetraceError(e) && !controller.signal.aborted) throw e;
      return { kind: "threw", error: thrownMessage(e) };
    }
  })();
  try {
    // Given up wins when both are settled in the same tick: the run's rejection by the abort is not the turn's error.
    return await Promise.race([givenUp, run]);
  } finally {
    clearTimeout(timer);
    leave();
  }
}

/**
 * About the size in bytes of `value` serialized as JSON (UTF-8), without
 * building the string: strings by their UTF-8 length, numbers by their
 * digits, objects with `toJSON` (LangChain messages, dates) by what it
 * returns, typed arrays and buffers by their byte length, Maps and Sets by
 * their entries. Each object is counted once (shared references and cycles
 * do not add up). Iterative, so a deep state cannot overflow the stack.
 */
export function stateSize(value: unknown): number {
  const seen = new WeakSet<object>();
  const stack: unknown[] = [value];
  let bytes = 0;
  while (stack.length > 0) {
    const v = stack.pop();
    switch (typeof v) {
      case "string":
        bytes += Buffer.byteLength(v, "utf8") + 2;
        continue;
      case "number":
      case "bigint":
      case "boolean":
        bytes += String(v).length;
        continue;
      case "object":
        break;
      default:
        continue; // undefined, functions and symbols are not serialized
    }
    if (v === null) {
      bytes += 4;
      continue;
    }
    if (seen.has(v)) continue;
    seen.add(v);
    if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) {
      bytes += v.byteLength;
      continue;
    }
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") {
      let json: unknown;
      try {
        json = (toJSON as () => unknown).call(v);
      } catch {
        json = { ...v };
      }
      if (json !== v) {
        stack.push(json);
        continue;
      }
    }
    if (Array.isArray(v)) {
      bytes += 2 + Math.max(0, v.length - 1);
      for (const x of v) stack.push(x);
    } else if (v instanceof Map || v instanceof Set) {
      bytes += 2;
      for (const x of v) stack.push(x);
    } else {
      const keys = Object.keys(v);
      bytes += 2 + Math.max(0, keys.length - 1); // braces and commas
      for (const k of keys) {
        bytes += Buffer.byteLength(k, "utf8") + 3; // "key":
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
  }
  return bytes;
}
