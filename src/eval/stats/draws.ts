/**
 * The resampling loop of the report's batched intervals (./bootstrap.ts
 * `ClusterMeanBatch`; docs/statistics.md, "How the intervals are computed"):
 * `samples` bootstrap replicates of Σ sums / Σ counts for K lists of m units
 * that share one mulberry32 stream of draws (src/random.ts). Bit-identical to
 * drawing each list on its own: every list adds its units in draw order.
 *
 * Why it is laid out so (bench/intervals.bench.ts): at a large recording's
 * size (75,000 cases, 12 lists, 2,000 resamples) the loop is bound by memory
 * reads, not arithmetic. A resample's m draws are taken once; the lists are
 * summed LANES at a time, a group's unit j one 64-byte cache line (its
 * LANES sums, then its LANES counts), each sum a local variable. Large
 * batches split their resamples between this thread and one worker thread:
 * mulberry32's state after n draws is seed + n·0x6D2B79F5 (mod 2³²), so the
 * second half starts where it would have, and both halves write their own
 * replicates into shared memory. A worker that cannot start or fails leaves
 * its half to this thread; the numbers are the same either way.
 */
import { Worker } from "node:worker_threads";

/** Lists per lane group: four sums and four counts, one cache line a unit. */
export const LANES = 4;

/** mulberry32's increment (src/random.ts): its state after n draws from seed s is s + n·INCREMENT (mod 2³²). */
const INCREMENT = 0x6d2b79f5n;

/**
 * Draw work (resamples × units × lane groups) from which a second thread
 * takes half the resamples: below it, the worker's start (tens of
 * milliseconds) costs more than it saves.
 */
export const THREAD_MIN_WORK = 60_000_000;

/** The mulberry32 state (src/random.ts) after `draws` draws from `seed`. */
export function stateAfter(seed: number, draws: number): number {
  return Number((BigInt(seed >>> 0) + BigInt(draws) * INCREMENT) % 0x1_0000_0000n);
}

/**
 * Replicates r0 … r1−1 into `reps` (list k's replicate r at k·samples + r),
 * the stream's state `state` before replicate r0's first draw. Self-contained
 * (no closure, no import, no nested function): a worker thread runs it from
 * its source text.
 */
export function drawRange(
  cells: Float64Array,
  K: number,
  m: number,
  state: number,
  r0: number,
  r1: number,
  reps: Float64Array,
  samples: number,
): void {
  const lanes = 4;
  const W = 2 * lanes;
  const groups = Math.ceil(K / lanes);
  const draws = new Int32Array(m);
  let a = state >>> 0;
  for (let r = r0; r < r1; r++) {
    for (let i = 0; i < m; i++) {
      // mulberry32 (src/random.ts), inlined.
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      draws[i] = Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * m) * W;
    }
    for (let g = 0; g < groups; g++) {
      const off = g * m * W;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let n0 = 0;
      let n1 = 0;
      let n2 = 0;
      let n3 = 0;
      for (let i = 0; i < m; i++) {
        const at = off + draws[i]!;
        s0 += cells[at]!;
        s1 += cells[at + 1]!;
        s2 += cells[at + 2]!;
        s3 += cells[at + 3]!;
        n0 += cells[at + 4]!;
        n1 += cells[at + 5]!;
        n2 += cells[at + 6]!;
        n3 += cells[at + 7]!;
      }
      const k = g * lanes;
      reps[k * samples + r] = s0 / n0;
      if (k + 1 < K) reps[(k + 1) * samples + r] = s1 / n1;
      if (k + 2 < K) reps[(k + 2) * samples + r] = s2 / n2;
      if (k + 3 < K) reps[(k + 3) * samples + r] = s3 / n3;
    }
  }
}

/** The worker's program: run `drawRange` on its half, then raise the flag (1 done, 2 failed) and wake the caller. */
const WORKER_SOURCE = `
const { workerData } = require("node:worker_threads");
const drawRange = (${drawRange.toString()});
const { cells, K, m, state, r0, r1, reps, samples, flag } = workerData;
const done = new Int32Array(flag);
try {
  drawRange(new Float64Array(cells), K, m, state, r0, r1, new Float64Array(reps), samples);
  Atomics.store(done, 0, 1);
} catch {
  Atomics.store(done, 0, 2);
}
Atomics.notify(done, 0);
`;

/** The worker taking the second half, or null when one cannot be started here (its half is then this thread's). */
function startWorker(workerData: Record<string, unknown>): Worker | null {
  try {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData });
    worker.unref();
    return worker;
  } catch {
    return null;
  }
}

/** The units' sums and counts, one per list, all of length m. */
export interface UnitSums {
  sums: Float64Array;
  counts: Float64Array;
}

/**
 * `samples` replicates for each of `lists` (all with m units) from the seed's
 * one stream: replicate r of list k is Σ sums / Σ counts over the units of
 * draws r·m … r·m + m − 1. `threadMinWork` (default THREAD_MIN_WORK) is the
 * work from which half the resamples go to a worker thread; `onSecondHalf`
 * hears who computed that half ("worker", or "this thread" when the worker
 * could not start or failed).
 */
export function drawRatios(
  lists: readonly UnitSums[],
  m: number,
  seed: number,
  samples: number,
  opts: { threadMinWork?: number; onSecondHalf?: (by: "worker" | "this thread") => void } = {},
): Float64Array[] {
  const threadMinWork = opts.threadMinWork ?? THREAD_MIN_WORK;
  const K = lists.length;
  const groups = Math.ceil(K / LANES);
  const W = 2 * LANES;
  const threaded = samples >= 2 && samples * m * groups >= threadMinWork;
  const cellBytes = groups * m * W * Float64Array.BYTES_PER_ELEMENT;
  const repBytes = K * samples * Float64Array.BYTES_PER_ELEMENT;
  // Group g, unit j: [sums of lists gL … gL+L−1, their counts] at (g·m + j)·W; a missing list's lanes are 0.
  const cells = new Float64Array(threaded ? new SharedArrayBuffer(cellBytes) : new ArrayBuffer(cellBytes));
  for (let k = 0; k < K; k++) {
    const c = lists[k]!;
    const at0 = Math.floor(k / LANES) * m * W + (k % LANES);
    for (let j = 0; j < m; j++) {
      cells[at0 + j * W] = c.sums[j]!;
      cells[at0 + j * W + LANES] = c.counts[j]!;
    }
  }
  const reps = new Float64Array(threaded ? new SharedArrayBuffer(repBytes) : new ArrayBuffer(repBytes));
  const state = seed >>> 0;
  if (!threaded) drawRange(cells, K, m, state, 0, samples, reps, samples);
  else {
    const half = Math.floor(samples / 2);
    const secondState = stateAfter(seed, half * m);
    const flag = new SharedArrayBuffer(4);
    const done = new Int32Array(flag);
    const worker = startWorker({
      cells: cells.buffer,
      K,
      m,
      state: secondState,
      r0: half,
      r1: samples,
      reps: reps.buffer,
      samples,
      flag,
    });
    const t0 = performance.now();
    drawRange(cells, K, m, state, 0, half, reps, samples);
    // A worker that never reports (it could not even start its program) is given up after four times this half's time, at least 5 s.
    const mine = performance.now() - t0;
    const giveUpAt = performance.now() + Math.max(5000, 4 * mine);
    if (worker !== null)
      while (Atomics.load(done, 0) === 0 && performance.now() < giveUpAt) Atomics.wait(done, 0, 0, 100);
    if (worker === null || Atomics.load(done, 0) !== 1) {
      void worker?.terminate();
      drawRange(cells, K, m, secondState, half, samples, reps, samples);
      opts.onSecondHalf?.("this thread");
    } else opts.onSecondHalf?.("worker");
  }
  return lists.map((_, k) => reps.slice(k * samples, (k + 1) * samples));
}
