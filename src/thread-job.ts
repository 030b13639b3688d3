/**
 * A pure computation of retrace's own run in a worker thread, so that the
 * calling thread's event loop keeps running, and its SIGINT, SIGTERM and
 * SIGHUP handlers with it (docs/reliability.md, "Interrupted runs leave
 * nothing behind"): used by the repeats' intervals
 * (src/eval/sweep/repeats-thread.ts). The items
 * cross in chunks, this thread yielding between them, so no single copy
 * holds the loop for long; then the worker computes and answers once.
 * Importable from every layer.
 */
import { setImmediate as yieldToLoop } from "node:timers/promises";
import { parentPort, type Worker } from "node:worker_threads";
import { moduleWorker } from "./module-worker.js";
import { reviveError, serializeError, type SerializedError } from "./thread-errors.js";

/** A chunk of items, or (no `items`) the signal that every item was sent. */
export interface JobMessage<T> {
  items?: T[];
}

/** The worker's answer: its result, or the error it threw. */
export type JobReply<R> = { result: R; error?: undefined } | { error: SerializedError; result?: undefined };

/** Items a message carries. */
const CHUNK = 250;

/**
 * The result of the worker module `entry` (which calls `serveJob`) over
 * `items`, `data` its workerData; null when the worker could not start or
 * died without answering (the caller then computes in its own thread). The
 * worker's error is rethrown here as the same retrace error.
 */
export async function runJob<T, R>(entry: URL, data: unknown, items: readonly T[]): Promise<R | null> {
  let worker: Worker;
  try {
    worker = moduleWorker(entry, data);
  } catch {
    return null;
  }
  const replied = new Promise<JobReply<R> | null>((resolve) => {
    worker.once("message", (m: JobReply<R>) => resolve(m));
    worker.once("error", () => resolve(null));
    worker.once("exit", () => resolve(null));
  });
  for (let i = 0; i < items.length; i += CHUNK) {
    worker.postMessage({ items: items.slice(i, i + CHUNK) } satisfies JobMessage<T>);
    await yieldToLoop();
  }
  worker.postMessage({} satisfies JobMessage<T>);
  const reply = await replied;
  void worker.terminate();
  if (reply === null) return null;
  if (reply.error !== undefined) throw reviveError(reply.error);
  return reply.result;
}

/** In the worker: gathers the items, then answers with `compute(items)` (or the error it threw). */
export function serveJob<T, R>(compute: (items: T[]) => R): void {
  const port = parentPort;
  if (port === null) throw new Error("serveJob: not in a worker thread");
  const items: T[] = [];
  port.on("message", (m: JobMessage<T>) => {
    if (m.items !== undefined) {
      for (const x of m.items) items.push(x);
      return;
    }
    let reply: JobReply<R>;
    try {
      reply = { result: compute(items) };
    } catch (e) {
      reply = { error: serializeError(e) };
    }
    port.postMessage(reply);
    port.close();
  });
}
