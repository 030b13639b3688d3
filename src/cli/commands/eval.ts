/**
 * `retrace eval` (and `retrace start`, which is `npm start`): registers the
 * options and their mode rules; the action (./eval-run.ts) is loaded when the
 * command runs, so `retrace eval --help` loads no use-case, store or graph
 * code. The sweep of retrace's own graph (src/app/eval.ts), of yours with
 * `--graph`, or of recorded traces with `--traces` (src/app/graph-eval.ts).
 *
 * stdout: the report (table, or JSON with --json). stderr: progress and logs.
 * Exit 0 pass, 1 gate failed, 2 bad usage or invalid data, 3 store or model
 * unavailable, 70 internal error.
 */
import type { Command } from "commander";
import {
  addEvalOptions,
  addGraphOptions,
  addTracesOptions,
  GRAPH_ONLY,
  GRAPH_REFUSALS,
  TRACES_ONLY,
  TRACES_REFUSALS,
} from "../eval-options.js";
import { action } from "../io.js";
import { refuseInMode } from "../options.js";
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
    const cmd = addTracesOptions(
      addGraphOptions(addEvalOptions(program.command(name).description(description))),
    ).action(
      action(async (o: EvalCommandOptions & GraphCommandOptions) => (await import("./eval-run.js")).runEvalAction(o)),
    );
    refuseInMode<EvalCommandOptions & GraphCommandOptions>(cmd, [
      ...TRACES_REFUSALS,
      ...GRAPH_REFUSALS,
      {
        when: (o) => o.graph === undefined && o.traces === undefined,
        mode: "without --graph or --traces",
        unused: GRAPH_ONLY,
      },
      {
        when: (o) => o.traces === undefined,
        mode: "without --traces",
        unused: TRACES_ONLY,
        unusedValues: [{ attribute: "traceFilters", shown: "the traces section of --config" }],
      },
    ]);
  }
}
