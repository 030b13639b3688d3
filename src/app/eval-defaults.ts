/**
 * The defaults of an eval (`EVAL_DEFAULTS`), apart from the planning code of
 * ./eval-plan.ts (which re-exports them) so that the CLI's option tables
 * (src/cli/eval-options.ts) read them without loading the use-cases.
 */
import { DEFAULT_CONCURRENCY } from "../eval/sweep/turns.js";

/** The defaults of an eval's options (the CLI shows them in `--help`). */
export const EVAL_DEFAULTS = {
  store: "auto",
  k: 5,
  mode: "hybrid",
  embedder: "auto",
  concurrency: DEFAULT_CONCURRENCY,
  seed: 42,
} as const;

/**
 * The most repeats a run takes (`--repeat`; docs/ci.md, "Repeats and flaky
 * turns"): each repeat's turns are kept until the report is written, so the
 * bound keeps a mistyped count from running for days and growing without
 * limit. More is exit 2.
 */
export const MAX_REPEAT = 1000;
