/**
 * `retrace export`: now `retrace report FILE --out trec:DIR` (CHANGELOG.md).
 * Kept as a command so that a script still calling it learns the new
 * spelling: exit 2 with it.
 */
import type { Command } from "commander";
import { movedCommand } from "../old-spellings.js";

export function register(program: Command): void {
  movedCommand(program, "export", "Moved: retrace export is now retrace report FILE --out trec:DIR", (args) => [
    "report",
    ...args.flatMap((a, i) => (a === "--trec" ? ["--out"] : args[i - 1] === "--trec" ? [`trec:${a}`] : [a])),
  ]);
}
