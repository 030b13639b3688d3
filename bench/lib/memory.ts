/**
 * Heap measurement for benchmarks. A heap delta is only meaningful after a
 * full GC on both sides, so this finds a way to collect:
 *   1. `global.gc` when node runs with --expose-gc;
 *   2. otherwise V8's `--expose-gc` flag set at run time (`v8.setFlagsFromString`)
 *      and the `gc` function read from a fresh VM context (documented V8
 *      behaviour: the flag exposes `gc` on contexts created after it is set);
 *   3. otherwise no GC: deltas are raw `process.memoryUsage()` differences,
 *      and `method` says so.
 *
 * What is counted: `heapUsed` (V8's JS heap) PLUS `arrayBuffers` (the backing
 * stores of ArrayBuffers and typed arrays, which V8 keeps outside its heap:
 * an index built on typed arrays is mostly there).
 */
import v8 from "node:v8";
import vm from "node:vm";

export type GcMethod =
  "global.gc (--expose-gc)" | "v8.setFlagsFromString('--expose-gc')" | "none (raw memoryUsage deltas, no GC)";

export interface Collector {
  method: GcMethod;
  /** Full GC, several times so finalisers and weak maps settle; a no-op when no GC is reachable. */
  collect(): void;
  /** After `collect()`: JS heap, ArrayBuffer backing stores, and their sum. */
  usage(): MemorySample;
}

function runTwice(gc: () => void): () => void {
  return () => {
    gc();
    gc();
  };
}

export interface MemorySample {
  heapUsed: number;
  arrayBuffers: number;
  total: number;
}

/** Field-wise `after − before`. */
export function memoryDelta(before: MemorySample, after: MemorySample): MemorySample {
  return {
    heapUsed: after.heapUsed - before.heapUsed,
    arrayBuffers: after.arrayBuffers - before.arrayBuffers,
    total: after.total - before.total,
  };
}

export function getCollector(): Collector {
  const g = (globalThis as { gc?: () => void }).gc;
  let gc: (() => void) | undefined;
  let method: GcMethod;
  if (typeof g === "function") {
    gc = g;
    method = "global.gc (--expose-gc)";
  } else {
    try {
      v8.setFlagsFromString("--expose-gc");
      const fromContext = vm.runInNewContext("gc") as unknown;
      if (typeof fromContext === "function") gc = fromContext as () => void;
    } catch {
      gc = undefined;
    }
    method = gc !== undefined ? "v8.setFlagsFromString('--expose-gc')" : "none (raw memoryUsage deltas, no GC)";
  }
  const collect = gc !== undefined ? runTwice(gc) : () => {};
  return {
    method,
    collect,
    usage: () => {
      collect();
      const m = process.memoryUsage();
      return { heapUsed: m.heapUsed, arrayBuffers: m.arrayBuffers, total: m.heapUsed + m.arrayBuffers };
    },
  };
}
