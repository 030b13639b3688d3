/**
 * The one edit distance behind every "did you mean" retrace prints: a
 * misspelt command (src/cli/main.ts), a gold id that names no card
 * (src/kb/cases.ts), a module file that does not exist (src/user-module.ts).
 * Optimal string alignment: Damerau–Levenshtein with adjacent transpositions,
 * as commander's own suggestions count.
 */

/** Edits (insert, delete, substitute, swap two adjacent characters) from `a` to `b`. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The candidate closest to `word` within `max` edits (the first in the given order among equals), or undefined. */
export function closest(word: string, candidates: Iterable<string>, max: number): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d < bestD) [best, bestD] = [c, d];
  }
  return best !== undefined && bestD <= max ? best : undefined;
}
