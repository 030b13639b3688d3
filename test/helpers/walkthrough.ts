/**
 * A walkthrough page (docs/your-graph-in-five-minutes.md) as steps the pack
 * test (test/package/pack.int.test.ts) follows literally in an empty folder.
 * An HTML comment on the line above a fenced block (invisible on GitHub) says
 * what the block is:
 *
 *   <!-- walkthrough: file NAME -->  write the block to NAME in the folder;
 *   <!-- walkthrough: run -->        run each line of the block (blank lines
 *                                    and `#` comments skipped) with bash in
 *                                    the folder: each must exit 0;
 *   <!-- walkthrough: output -->     each non-blank line of the block must be
 *                                    in what the run block before it printed
 *                                    (stdout and stderr, white space folded):
 *                                    a figure the page quotes comes from the run.
 *
 * A marker with another value, one not followed by a fence, or an output
 * block with no run block before it is an error.
 */
import { readFileSync } from "node:fs";

export type WalkthroughStep =
  | { kind: "file"; name: string; content: string; line: number }
  | { kind: "run"; commands: string[]; line: number }
  | { kind: "output"; lines: string[]; line: number };

const MARKER = /^\s*<!--\s*walkthrough:\s*(.*?)\s*-->\s*$/;

export function walkthroughSteps(file: string): WalkthroughStep[] {
  const lines = readFileSync(file, "utf8").split("\n");
  const steps: WalkthroughStep[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = MARKER.exec(lines[i]!);
    if (m === null) continue;
    const fence = /^(`{3,}|~{3,})/.exec(lines[i + 1] ?? "");
    if (fence === null) throw new Error(`${file}:${i + 1}: a walkthrough marker must be followed by a fenced block`);
    const end = lines.findIndex((l, j) => j > i + 1 && l.startsWith(fence[1]!));
    if (end < 0) throw new Error(`${file}:${i + 2}: the fenced block is not closed`);
    const body = lines.slice(i + 2, end);
    const line = i + 2;
    const [what, ...rest] = m[1]!.split(/\s+/);
    if (what === "file" && rest.length === 1)
      steps.push({ kind: "file", name: rest[0]!, content: `${body.join("\n")}\n`, line });
    else if (what === "run" && rest.length === 0)
      steps.push({ kind: "run", commands: body.filter((l) => l.trim() !== "" && !l.trim().startsWith("#")), line });
    else if (what === "output" && rest.length === 0) {
      if (!steps.some((s) => s.kind === "run"))
        throw new Error(`${file}:${line}: an output block needs a run block before it`);
      steps.push({ kind: "output", lines: body.filter((l) => l.trim() !== ""), line });
    } else throw new Error(`${file}:${i + 1}: unknown walkthrough marker "${m[1]}" (file NAME, run, output)`);
    i = end;
  }
  return steps;
}

/** White space folded, for comparing a quoted output line with what a command printed. */
export const folded = (s: string): string => s.replace(/\s+/g, " ").trim();
