/**
 * The resampling loop of the report's batched intervals (./bootstrap.ts
 * `ClusterMeanBatch`; docs/statistics.md, "How the intervals are computed"):
 * `samples` bootstrap replicates of Σ sums / Σ counts for K lists of m units
 * that share one mulberry32 stream of draws (src/random.ts). Bit-identical to
 * drawing each list on its own: every list adds its units in draw order.
 *
 * Why it is laid out so (bench/intervals.bench.ts): at a large recording's
 * size (75,000 cases, 12 lists, 2,000 resamples) the loop is bound by memory
 * reads, not arithmetic. A unit's columns — every list's sum, then one
 * count column per distinct list of counts (the lists of one split group
 * share theirs, and a sum of whole counts is exact in any order) — lie side
 * by side, so that a draw reads adjacent cache lines, not one line in each of
 * several arrays; a resample's m draws are taken once and its columns summed
 * 8 or 16 at a time, each sum a local variable (2.7 times the draws per
 * second of four lists a cache line, on this bench). Large batches split their resamples between this thread and one worker thread:
 * mulberry32's state after n draws is seed + n·0x6D2B79F5 (mod 2³²), so the
 * second half starts where it would have, and both halves write their own
 * replicates into shared memory. A worker that cannot start or fails leaves
 * its half to this thread; the numbers are the same either way.
 */
import { Worker } from "node:worker_threads";
import { runSteps, type Steps } from "./steps.js";

/** mulberry32's increment (src/random.ts): its state after n draws from seed s is s + n·INCREMENT (mod 2³²). */
const INCREMENT = 0x6d2b79f5n;

/**
 * Draw work (resamples × units × blocks of 8 columns) from which a second thread
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
 * the stream's state `state` before replicate r0's first draw. `cells` holds
 * unit j's columns at j·stride (`stride`: 8, or a multiple of 16): the K
 * lists' sums, then the distinct count columns, list k's at K + countOf[k],
 * then zeros. A resample's draws are taken once; then each block of 8 or 16
 * columns is summed over them, each column's sum a local variable.
 * Self-contained (no closure, no import, no nested function): a worker
 * thread runs it from its source text.
 */
export function drawRange(
  cells: Float64Array,
  stride: number,
  K: number,
  countOf: Int32Array,
  m: number,
  state: number,
  r0: number,
  r1: number,
  reps: Float64Array,
  samples: number,
): void {
  const draws = new Int32Array(m);
  const acc = new Float64Array(stride);
  let a = state >>> 0;
  for (let r = r0; r < r1; r++) {
    for (let i = 0; i < m; i++) {
      // mulberry32 (src/random.ts), inlined.
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      draws[i] = Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * m) * stride;
    }
    if (stride === 8) {
      let s0 = 0,
        s1 = 0,
        s2 = 0,
        s3 = 0,
        s4 = 0,
        s5 = 0,
        s6 = 0,
        s7 = 0;
      for (let i = 0; i < m; i++) {
        const at = draws[i]!;
        s0 += cells[at]!;
        s1 += cells[at + 1]!;
        s2 += cells[at + 2]!;
        s3 += cells[at + 3]!;
        s4 += cells[at + 4]!;
        s5 += cells[at + 5]!;
        s6 += cells[at + 6]!;
        s7 += cells[at + 7]!;
      }
      acc[0] = s0;
      acc[1] = s1;
      acc[2] = s2;
      acc[3] = s3;
      acc[4] = s4;
      acc[5] = s5;
      acc[6] = s6;
      acc[7] = s7;
    } else {
      for (let o = 0; o < stride; o += 16) {
        let s0 = 0,
          s1 = 0,
          s2 = 0,
          s3 = 0,
          s4 = 0,
          s5 = 0,
          s6 = 0,
          s7 = 0;
        let s8 = 0,
          s9 = 0,
          s10 = 0,
          s11 = 0,
          s12 = 0,
          s13 = 0,
          s14 = 0,
          s15 = 0;
        for (let i = 0; i < m; i++) {
          const at = draws[i]! + o;
          s0 += cells[at]!;
          s1 += cells[at + 1]!;
          s2 += cells[at + 2]!;
          s3 += cells[at + 3]!;
          s4 += cells[at + 4]!;
          s5 += cells[at + 5]!;
          s6 += cells[at + 6]!;
          s7 += cells[at + 7]!;
          s8 += cells[at + 8]!;
          s9 += cells[at + 9]!;
          s10 += cells[at + 10]!;
          s11 += cells[at + 11]!;
          s12 += cells[at + 12]!;
          s13 += cells[at + 13]!;
          s14 += cells[at + 14]!;
          s15 += cells[at + 15]!;
        }
        acc[o] = s0;
        acc[o + 1] = s1;
        acc[o + 2] = s2;
        acc[o + 3] = s3;
        acc[o + 4] = s4;
        acc[o + 5] = s5;
        acc[o + 6] = s6;
        acc[o + 7] = s7;
        acc[o + 8] = s8;
        acc[o + 9] = s9;
        acc[o + 10] = s10;
        acc[o + 11] = s11;
        acc[o + 12] = s12;
        acc[o + 13] = s13;
        acc[o + 14] = s14;
        acc[o + 15] = s15;
      }
    }
    for (let k = 0; k < K; k++) reps[k * samples + r] = acc[k]! / acc[K + countOf[k]!]!;
  }
}

/** The columns of a unit in `cells`: 8 when the lists' sums and count columns fit, else the next multiple of 16. */
export function strideFor(columns: number): number {
  return columns <= 8 ? 8 : Math.ceil(columns / 16) * 16;
}

/** The worker's program: run `drawRange` on its half, then raise the flag (1 done, 2 failed) and wake the caller. */
const WORKER_SOURCE = `
const { workerData } = require("node:worker_threads");
const drawRange = (${drawRange.toString()});
const { cells, stride, K, countOf, m, state, r0, r1, reps, samples, flag } = workerData;
const done = new Int32Array(flag);
try {
  drawRange(new Float64Array(cells), stride, K, countOf, m, state, r0, r1, new Float64Array(reps), samples);
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
  opts: DrawOptions = {},
): Float64Array[] {
  return runSteps(drawRatioSteps(lists, m, seed, samples, opts));
}

export interface DrawOptions {
  threadMinWork?: number;
  onSecondHalf?: (by: "worker" | "this thread") => void;
}

/**
 * Draw work (units × blocks of 8 columns, a resample's) after which
 * `drawRatioSteps` yields: about 10 ms here, so an interrupt waits little.
 */
export const STEP_WORK = 2_000_000;

/**
 * `drawRatios` in steps (./steps.ts): this thread's resamples are drawn a
 * slice at a time, each slice starting at its own stream state (as the
 * worker's half does), and the wait for the worker's half is a step too.
 * The same numbers as `drawRatios`, bit for bit.
 */
export function* drawRatioSteps(
  lists: readonly UnitSums[],
  m: number,
  seed: number,
  samples: number,
  opts: DrawOptions = {},
): Steps<Float64Array[]> {
  const threadMinWork = opts.threadMinWork ?? THREAD_MIN_WORK;
  const K = lists.length;
  // The count columns: lists of the same turns (every metric of one split group) share theirs, and a sum of counts is exact in any order.
  const counts: Float64Array[] = [];
  const countOf = new Int32Array(K);
  lists.forEach((l, k) => {
    let c = counts.findIndex((x) => x === l.counts || sameValues(x, l.counts));
    if (c < 0) c = counts.push(l.counts) - 1;
    countOf[k] = c;
  });
  const C = counts.length;
  const stride = strideFor(K + C);
  const threaded = samples >= 2 && samples * m * (stride / 8) >= threadMinWork;
  const cellBytes = m * stride * Float64Array.BYTES_PER_ELEMENT;
  const repBytes = K * samples * Float64Array.BYTES_PER_ELEMENT;
  // Unit j: [the K lists' sums, the C count columns, zeros] at j·stride, adjacent cache lines for each draw.
  const cells = new Float64Array(threaded ? new SharedArrayBuffer(cellBytes) : new ArrayBuffer(cellBytes));
  for (let j = 0; j < m; j++) {
    const at = j * stride;
    for (let k = 0; k < K; k++) cells[at + k] = lists[k]!.sums[j]!;
    for (let c = 0; c < C; c++) cells[at + K + c] = counts[c]![j]!;
  }
  const reps = new Float64Array(threaded ? new SharedArrayBuffer(repBytes) : new ArrayBuffer(repBytes));
  const state = seed >>> 0;
  const slice = Math.max(1, Math.floor(STEP_WORK / Math.max(1, m * (stride / 8))));
  // Replicates r0 … r1−1, a slice at a time, each from the stream's state before its first draw.
  function* drawn(r0: number, r1: number): Steps<void> {
    for (let r = r0; r < r1; r += slice) {
      drawRange(
        cells,
        stride,
        K,
        countOf,
        m,
        r === 0 ? state : stateAfter(seed, r * m),
        r,
        Math.min(r1, r + slice),
        reps,
        samples,
      );
      yield;
    }
  }
  if (!threaded) yield* drawn(0, samples);
  else {
    const half = Math.floor(samples / 2);
    const secondState = stateAfter(seed, half * m);
    const flag = new SharedArrayBuffer(4);
    const done = new Int32Array(flag);
    const worker = startWorker({
      cells: cells.buffer,
      stride,
      K,
      countOf,
      m,
      state: secondState,
      r0: half,
      r1: samples,
      reps: reps.buffer,
      samples,
      flag,
    });
    const t0 = performance.now();
    yield* drawn(0, half);
    // A worker that never reports (it could not even start its program) is given up after four times this half's time, at least 5 s.
    const mine = performance.now() - t0;
    const giveUpAt = performance.now() + Math.max(5000, 4 * mine);
    if (worker !== null)
      while (Atomics.load(done, 0) === 0 && performance.now() < giveUpAt) {
        Atomics.wait(done, 0, 0, 20);
        yield;
      }
    if (worker === null || Atomics.load(done, 0) !== 1) {
      void worker?.terminate();
      yield* drawn(half, samples);
      opts.onSecondHalf?.("this thread");
    } else opts.onSecondHalf?.("worker");
  }
  return lists.map((_, k) => reps.slice(k * samples, (k + 1) * samples));
}

function sameValues(a: Float64Array, b: Float64Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}
