/**
 * Errors across a thread boundary: a worker thread's failure serialized as
 * plain data (`serializeError`) and rebuilt in the thread that started it
 * (`reviveError`) as an instance of the same retrace error class, its exit
 * code and cause kept. Used by every worker of retrace (the sweep's workers,
 * src/app/own-graph/parallel.ts; the graph's thread, src/app/graph-isolation.ts;
 * `label --merge`'s, src/app/label-files.ts). Importable from every layer.
 */
import * as errors from "./errors.js";
import { RETRACE_ERROR_MARKER, thrownMessage } from "./errors.js";

/** An error as it crosses a thread boundary. */
export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
  /** Own enumerable fields (a retrace error's `code`, `exitCode`, `issues`...), as JSON-safe data. */
  fields: Record<string, unknown>;
  /** Its cause, serialized the same way (a few levels at most). */
  cause?: SerializedError;
}

export function serializeError(e: unknown, depth = 0): SerializedError {
  if (!(e instanceof Error)) return { name: "Error", message: thrownMessage(e), fields: {} };
  const cause = e.cause !== undefined && depth < 4 ? { cause: serializeError(e.cause, depth + 1) } : {};
  let fields: Record<string, unknown>;
  try {
    fields = JSON.parse(JSON.stringify({ ...e })) as Record<string, unknown>;
  } catch {
    fields = {};
  }
  return {
    name: e.name,
    message: e.message,
    ...(e.stack !== undefined ? { stack: e.stack } : {}),
    fields,
    ...cause,
  };
}

/**
 * The error a worker reported, rebuilt here: an instance of the same retrace
 * error class (so `exitCodeOf`, `instanceof` and `isInstance` answer as for
 * the original), else a plain Error with the same name, message and stack.
 */
export function reviveError(s: SerializedError): Error {
  const cls = (errors as Record<string, unknown>)[s.name];
  const isRetraceClass =
    typeof cls === "function" && (cls as { prototype: unknown }).prototype instanceof errors.RetraceError;
  const e = (isRetraceClass ? Object.create((cls as { prototype: object }).prototype) : new Error(s.message)) as Error &
    Record<PropertyKey, unknown>;
  Object.assign(e, s.fields);
  Object.defineProperty(e, "message", { value: s.message, writable: true, configurable: true });
  Object.defineProperty(e, "name", { value: s.name, writable: true, configurable: true });
  if (s.stack !== undefined) Object.defineProperty(e, "stack", { value: s.stack, writable: true, configurable: true });
  if (s.cause !== undefined)
    Object.defineProperty(e, "cause", { value: reviveError(s.cause), writable: true, configurable: true });
  if (isRetraceClass) e[RETRACE_ERROR_MARKER] = true;
  return e;
}
