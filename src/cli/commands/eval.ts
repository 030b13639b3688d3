/**
 * `retrace eval` (and `retrace start`, which is `npm start`): registers the
 * options (which settings each source uses is each source's module in src/app/sources/ to say); the action (./eval-run.ts) is loaded when the
 * command runs, so `retrace eval --help` loads no use-case, store or graph
 * code. The sweep of retrace's own graph (src/app/eval.ts), of yours with
 * `--graph`, or of recorded traces with `--traces` (src/app/graph-eval.ts).
 *
 * stdout: the report (table, or JSON with --json). stderr: progress and logs.
 * Exit 0 pass, 1 gate failed, 2 bad usage or invalid data, 3 store or model
 * unavailable, 70 internal error.
 */
import type { Command } from "commander";
import { addEvalOptions, addGraphOptions, addTracesOptions } from "../eval-options.js";
import { action } from "../io.js";
import { addRetired } from "../old-spellings.js";
import { refuseUnusedSettings } from "../options.js";
import { SETTING_NAMES, sourceKindOf, UNUSED_SETTINGS } from "../../app/sources/registry.js";
import type { EvalCommandOptions, GraphCommandOptions } from "./eval-run.js";

/**
 * `eval` and `start`: one command under two names. `start` (what `npm start`
 * runs) is `eval` with its defaults: the same options, the same action.
 */
export function register(program: Command): void {
  for (const [name, description] of [
    [
      "eval",
      "Run every eval case through the agent graph (retrace's own, or yours with --graph) and score retrieval per turn (store-backed by default); or score recorded traces with --traces",
    ],
    [
      "start",
      "The main job (npm start): retrace eval with its defaults (the KB ingested into a self-started local Chroma, then the eval sweep)",
    ],
  ] as const) {
    const cmd = addRetired(
      addTracesOptions(addGraphOptions(addEvalOptions(program.command(name).description(description)))),
    ).action(
      action(async (o: EvalCommandOptions & GraphCommandOptions) => (await import("./eval-run.js")).runEvalAction(o)),
    );
    // The settings the chosen source does not use are the use-case's to say (each source's module in src/app/sources/).
    refuseUnusedSettings<EvalCommandOptions & GraphCommandOptions>(
      cmd,
      (o) => UNUSED_SETTINGS[sourceKindOf(o)],
      SETTING_NAMES,
    );
  }
}
