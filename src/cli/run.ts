/** Process entry point of the `retrace` command (bin/retrace.mjs and `npm start` load this file). */
import { reportError } from "./io.js";
import { main } from "./main.js";

// A failure that escapes every command (a stray rejected promise, a throw in a timer) is an
// internal error: message, stack, the hint to report it, exit 70 — never 1, which means
// "a gate failed" (docs/gates-and-exit-codes.md).
const crash = (e: unknown) => {
  process.exitCode = reportError(e);
  // The one process.exit (docs/architecture.md §8): after an uncaught failure the process is in an unknown state, so it must not run on.
  process.exit();
};
process.on("uncaughtException", crash);
process.on("unhandledRejection", crash);

await main();
