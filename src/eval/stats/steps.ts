/**
 * A long synchronous computation written as a generator that `yield`s
 * between its steps (issue 51, scale: the report of a million-span
 * recording takes seconds to build): `runSteps` runs it straight through,
 * as a plain function would; `runStepsYielding` hands the event loop back
 * between steps, at most every `YIELD_EVERY_MS`, so SIGINT, SIGTERM and
 * SIGHUP handlers run during the computation (docs/reliability.md,
 * "Interrupted runs leave nothing behind"). Both give the same result: the
 * generator does the same work in the same order either way.
 */
import { setImmediate as yieldToLoop } from "node:timers/promises";

/** A computation of `T` in steps: each `yield` is a point where the event loop may run. */
export type Steps<T> = Generator<void, T, void>;

/** Time after which `runStepsYielding` hands the loop back at the next step. */
export const YIELD_EVERY_MS = 50;

/** The result of `steps`, run straight through. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
  }
}

/** The result of `steps`, the event loop running between its steps (at most every `YIELD_EVERY_MS`). */
export async function runStepsYielding<T>(steps: Steps<T>): Promise<T> {
  let last = performance.now();
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
    if (performance.now() - last >= YIELD_EVERY_MS) {
      await yieldToLoop();
      last = performance.now();
    }
  }
}
