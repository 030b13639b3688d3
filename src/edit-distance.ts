/**
 * The one edit distance behind every "did you mean" retrace prints: a
 * misspelt command (src/cli/main.ts), a gold id that names no card
 * (src/kb/cases.ts), a file that does not exist (`didYouMeanFile`: module
 * files in src/user-module.ts, every text input in src/kb/text.ts).
 * Optimal string alignment: Damerau–Levenshtein with adjacent transpositions,
 * as commander's own suggestions count.
 */

import { readdirSync } from "node:fs";
import path from "node:path";

/** Edits (insert, delete, substitute, swap two adjacent characters) from `a` to `b`. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
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

/**
 * `; did you mean ./agent.ts?` for a path that does not exist: the closest
 * name among the files of its folder (within 2 edits; only those `accept`
 * takes), written as the user wrote the path (`./agnet.ts` → `./agent.ts`,
 * `kb/eval/case.jsonl` → `kb/eval/cases.jsonl`); "" when none is close.
 */
export function didYouMeanFile(
  typed: string,
  accept: (name: string) => boolean = () => true,
  cwd: string = process.cwd(),
): string {
  const abs = path.resolve(cwd, typed);
  let names: string[];
  try {
    names = readdirSync(path.dirname(abs)).filter(accept).sort();
  } catch {
    return "";
  }
  const best = closest(path.basename(abs), names, 2);
  if (best === undefined || best === path.basename(abs)) return "";
  const dir = path.dirname(typed);
  return `; did you mean ${dir === "." ? `${typed.startsWith("./") ? "./" : ""}${best}` : `${dir}/${best}`}?`;
}
