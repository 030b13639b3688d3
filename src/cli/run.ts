/** Process entry point of the `retrace` command (bin/retrace.mjs and `npm start` load this file). */
import { installInterruptHandler } from "../interrupt.js";
import { err, reportError } from "./io.js";
import { main } from "./main.js";
import { log } from "../log.js";
import { setFlagsFromString } from "node:v8";

/** How long the process may outlive its command (pending work of a user's graph) before it exits anyway. */
const EXIT_GRACE_MS = 1000;

// V8 lets the old generation of a large heap grow to up to 4 times what survived its last full collection before
// it collects again: a million-span `eval --traces` (600-900 MB live) peaked at 1.9-2.4 GB. At twice it peaks at
// 1.6 GB for about the same CPU (docs/recorded-traces.md, "Scale"); small heaps are grown by 1.3-2 times anyway.
// A value the user sets (NODE_OPTIONS or a node flag) wins.
if (![...process.execArgv, process.env.NODE_OPTIONS ?? ""].some((a) => a.includes("heap-growing-percent")))
  setFlagsFromString("--heap-growing-percent=100");

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
// SIGHUP / SIGINT / SIGTERM that no command handles: temporary files removed, one line, exit 129 / 130 / 143 (src/interrupt.ts, docs/reliability.md).
installInterruptHandler(err);

await main();

// The command is done and its output written. Work a `--graph` left behind (a turn given up at its deadline still
// awaiting a 24-day timer, a connection its factory opened) must not hold the process: if anything still keeps it
// alive after a grace period, it exits with the command's code (docs/reliability.md). The timer is unref'd, so a
// process with nothing pending ends at once, as before.
// Never before stdout and stderr are flushed: a slow reader of a piped report must get every byte.
function exitWhenFlushed(): void {
  const pending = [process.stdout, process.stderr].find((s) => s.writableLength > 0);
  if (pending !== undefined) {
    pending.once("drain", exitWhenFlushed); // the pending write itself keeps the process alive until then
    return;
  }
  log.info(
    "retrace: done; not waiting for work the graph left pending (a timer, an open connection, a turn given up at its deadline)",
  );
  process.exit();
}
setTimeout(exitWhenFlushed, EXIT_GRACE_MS).unref();
