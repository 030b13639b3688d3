/**
 * `retrace baseline floors [FILE]`: now `retrace report [FILE] --floors`
 * (CHANGELOG.md). Kept as a command so that a script still calling it learns
 * the new spelling: exit 2 with it.
 */
import type { Command } from "commander";
import { movedCommand } from "../old-spellings.js";

export function register(program: Command): void {
  movedCommand(program, "baseline", "Moved: retrace baseline floors is now retrace report --floors", (args) =>
    args[0] === "floors" ? ["report", ...args.slice(1), "--floors"] : ["report", ...args, "--floors"],
  );
}
