/**
 * The report's intervals at the size of a 1,000,000-span trace run (issue 35
 * item 6; docs/recorded-traces.md, "Scale"): one `ClusterMeanBatch` of
 * RETRACE_BENCH_INTERVAL_LISTS distinct lists (default 12, what that run's
 * report batches) over RETRACE_BENCH_INTERVAL_UNITS cases (default 75,000)
 * of one to three turns each, 2,000 resamples (the default), synthetic values
 * (mulberry32, seed 3: half graded in [0, 1], half 0/1). Prints the wall
 * time of `run()` and the draws per second (resamples × cases × lists).
 * Run: `npm run bench -- intervals`.
 */
import { ClusterMeanBatch, mulberry32, type ClusteredValue } from "../src/eval/stats/bootstrap.js";

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw === undefined ? Number.NaN : Number(raw);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

export async function run(): Promise<void> {
  const units = envInt("RETRACE_BENCH_INTERVAL_UNITS", 75_000);
  const lists = envInt("RETRACE_BENCH_INTERVAL_LISTS", 12);
  const samples = 2_000;
  const rand = mulberry32(3);
  const values: ClusteredValue[][] = [];
  for (let k = 0; k < lists; k++) {
    const l: ClusteredValue[] = [];
    for (let c = 0; c < units; c++)
      for (let t = 0; t < 1 + (c % 3); t++)
        l.push({ cluster: `case-${c}`, value: k % 2 === 0 ? rand() : rand() < 0.6 ? 1 : 0 });
    values.push(l);
  }
  const batch = new ClusterMeanBatch({ seed: 1, samples });
  let done = 0;
  for (const l of values) batch.add(l, () => done++);
  const t0 = performance.now();
  batch.run();
  const s = (performance.now() - t0) / 1000;
  if (done !== lists) throw new Error(`expected ${lists} intervals, got ${done}`);
  process.stdout.write(
    `intervals: ${lists} lists × ${units.toLocaleString("en")} cases × ${samples} resamples: run() ${s.toFixed(2)} s, ${((lists * units * samples) / s / 1e6).toFixed(0)} M draws/s\n`,
  );
}
