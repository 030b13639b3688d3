/**
 * One fenced code block of a doc, found by its first line (a comment that
 * names it), so a test can run exactly what the doc shows.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./cli.js";

/** The code of the block of `doc` (relative to the repository) whose first line starts with `firstLine`. @throws when there is none, or more than one. */
export function docBlock(doc: string, firstLine: string): string {
  const lines = readFileSync(path.join(ROOT, doc), "utf8").split("\n");
  const found: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```/.test(lines[i]!) || !(lines[i + 1] ?? "").startsWith(firstLine)) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`${doc}:${i + 1}: unclosed code block`);
    found.push(lines.slice(i + 1, end).join("\n") + "\n");
  }
  if (found.length !== 1)
    throw new Error(`${doc}: ${found.length} code blocks start with ${JSON.stringify(firstLine)}`);
  return found[0]!;
}
