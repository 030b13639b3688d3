// Preload for docs/decisions/0008-data-dir-lock-stays-hand-written.md: NODE_OPTIONS="--import ./bench/lock/loop-block.mjs" npx retrace ...
// Preload (--import): the longest stretch the main thread's event loop did not turn, measured by a 5 ms timer.
import { writeSync } from "node:fs";
import { isMainThread, threadId } from "node:worker_threads";
const TICK = 5;
let last = performance.now();
let max = 0,
  at = 0;
const t0 = performance.now();
const timer = setInterval(() => {
  const now = performance.now();
  const gap = now - last - TICK;
  if (gap > max) {
    max = gap;
    at = last - t0;
  }
  last = now;
}, TICK);
timer.unref();
process.on("exit", () => {
  writeSync(
    2,
    `LOOP-BLOCK max ${max.toFixed(0)} ms (starting ${(at / 1000).toFixed(1)} s in), run ${((performance.now() - t0) / 1000).toFixed(1)} s, pid ${process.pid} ${isMainThread ? "MAIN" : "worker " + threadId}\n`,
  );
});
