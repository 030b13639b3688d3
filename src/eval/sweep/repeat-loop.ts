/**
 * The `--repeat N` loop of every sweep (retrace's own graph, src/app/own-graph/eval.ts,
 * and yours, src/app/graph-eval.ts; docs/ci.md, "Repeats and flaky turns"):
 * the same sweep N times, one after the other, each repeat on threads of its
 * own (`<random>:` for one run, `<random>:r<i>:` for repeat i), so no repeat
 * sees another's history; progress counts the cases of all repeats.
 */
import { randomBytes } from "node:crypto";

/** One repeat's sweep: its 0-based index, its thread prefix and its progress callback. */
export type RepeatSweep<T> = (
  repeat: number,
  threadPrefix: string,
  onCaseDone: ((done: number, total: number) => void) | undefined,
) => Promise<T>;

/** Runs `sweep` `repeat` times (at least once) in order; returns each repeat's result. */
export async function sweepRepeats<T>(
  repeat: number,
  sweep: RepeatSweep<T>,
  onCaseDone?: (done: number, total: number) => void,
): Promise<[T, ...T[]]> {
  const prefix = randomBytes(3).toString("hex");
  const n = Math.max(1, repeat);
  const runs: T[] = [];
  for (let r = 0; r < n; r++) {
    const progress =
      onCaseDone === undefined ? undefined : (done: number, total: number) => onCaseDone(r * total + done, n * total);
    runs.push(await sweep(r, n === 1 ? `${prefix}:` : `${prefix}:r${r + 1}:`, progress));
  }
  return runs as [T, ...T[]];
}
