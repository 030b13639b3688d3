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
