/**
 * Bench output helpers: latency summaries and plain aligned tables on stdout.
 * Figures go to stdout (they are the result); progress goes to stderr via `log`.
 */
import { quantileSorted } from "../../src/eval/stats/bootstrap.js";

export interface LatencySummary {
  /** Number of timed calls. */
  calls: number;
  medianMs: number;
  p95Ms: number;
  meanMs: number;
}

/** Median, p95 (type-7 quantiles, as src/eval/stats/bootstrap.ts) and mean of latency samples in ms. */
export function summarizeLatency(samplesMs: readonly number[]): LatencySummary {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const sum = sorted.reduce((s, x) => s + x, 0);
  return {
    calls: sorted.length,
    medianMs: quantileSorted(sorted, 0.5),
    p95Ms: quantileSorted(sorted, 0.95),
    meanMs: sorted.length === 0 ? Number.NaN : sum / sorted.length,
  };
}

/** Milliseconds with enough digits to show microseconds when small. */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return "-";
  if (ms < 1) return ms.toFixed(4);
  if (ms < 100) return ms.toFixed(3);
  return ms.toFixed(1);
}

export function fmtNum(x: number | null | undefined, digits = 4): string {
  return x === null || x === undefined || !Number.isFinite(x) ? "-" : x.toFixed(digits);
}

export function fmtBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return "-";
  const mib = bytes / (1024 * 1024);
  return `${mib.toFixed(1)} MiB`;
}

export function fmtInt(x: number): string {
  return x.toLocaleString("en-US");
}

export interface Column {
  header: string;
  /** Numbers read better right-aligned; default left. */
  align?: "left" | "right";
}

/** A plain, aligned, monospace table (no colour, no box drawing), ending with a newline. */
export function renderTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((c, i) => Math.max(c.header.length, ...rows.map((r) => (r[i] ?? "").length)));
  const pad = (text: string, i: number) => {
    const w = widths[i] ?? 0;
    return columns[i]?.align === "right" ? text.padStart(w) : text.padEnd(w);
  };
  const line = (cells: readonly string[]) =>
    columns
      .map((_, i) => pad(cells[i] ?? "", i))
      .join("  ")
      .trimEnd();
  const out = [line(columns.map((c) => c.header)), widths.map((w) => "-".repeat(w)).join("  ")];
  for (const r of rows) out.push(line(r));
  return `${out.join("\n")}\n`;
}

/** Writes to stdout (benchmarks print their figures; this is not library code). */
export function print(text = ""): void {
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}

export function printTable(title: string, columns: readonly Column[], rows: readonly (readonly string[])[]): void {
  print(`\n${title}`);
  print(renderTable(columns, rows));
}

/**
 * Times `fn` on every input: `warmup` untimed passes over all inputs (the
 * first pass's results are returned, for scoring), then `reps` timed passes,
 * each call timed on its own. Synchronous results are not awaited, so a
 * synchronous system pays no promise overhead.
 */
export async function timeEach<I, R>(
  inputs: readonly I[],
  fn: (input: I) => R | Promise<R>,
  opts: { warmup: number; reps: number },
): Promise<{ results: R[]; samplesMs: number[] }> {
  const results: R[] = [];
  for (let w = 0; w < Math.max(1, opts.warmup); w++) {
    for (const input of inputs) {
      const r = fn(input);
      const value = r instanceof Promise ? await r : r;
      if (w === 0) results.push(value);
    }
  }
  const samplesMs: number[] = [];
  for (let rep = 0; rep < opts.reps; rep++) {
    for (const input of inputs) {
      const t = performance.now();
      const r = fn(input);
      if (r instanceof Promise) await r;
      samplesMs.push(performance.now() - t);
    }
  }
  return { results, samplesMs };
}
