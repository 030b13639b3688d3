/**
 * Worker threads running a module of retrace's own: the compiled `.js`
 * module directly, or, when retrace runs from its TypeScript source (the
 * tests, `npm run retrace`), the `.ts` module loaded through tsx's module
 * hooks registered in the worker. Used by the sweep's worker threads
 * (src/app/own-graph/parallel.ts) and the trace reader's second thread
 * (src/eval/traces/read.ts; docs/recorded-traces.md, "Scale").
 */
import { Worker, type WorkerOptions } from "node:worker_threads";

/** The module `name` (without extension) beside the module at `moduleUrl`, with that module's extension (`.ts` from source, `.js` compiled). */
export function siblingModule(moduleUrl: string, name: string): URL {
  return new URL(`./${name}${moduleUrl.endsWith(".ts") ? ".ts" : ".js"}`, moduleUrl);
}

/** A worker thread running `entry` with `workerData` (`options`: its resource limits, captured stdout/stderr...). */
export function moduleWorker(
  entry: URL,
  workerData: unknown,
  options: Omit<WorkerOptions, "eval" | "workerData"> = {},
): Worker {
  if (!entry.pathname.endsWith(".ts")) return new Worker(entry, { ...options, workerData });
  const tsx = import.meta.resolve("tsx/esm/api");
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(boot, { ...options, eval: true, workerData });
}
