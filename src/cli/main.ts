/**
 * The `retrace` command line. Each command lives in its own file and exports
 * `register(program)`. Result on stdout, progress on stderr, exit codes as in
 * DESIGN.md §5 (0 pass, 1 gate failed, 2 bad usage or invalid data, 3 a
 * required service or model is unavailable).
 */
import { Command, CommanderError } from "commander";
import { register as registerCheck } from "./check.js";
import { register as registerCompare } from "./compare.js";
import { register as registerEval } from "./eval.js";
import { register as registerIngest } from "./ingest.js";
import { isRetraceError } from "../errors.js";
import { EXIT, err } from "./io.js";
import { register as registerScore } from "./score.js";
import { register as registerTrace } from "./trace.js";

export function buildProgram(): Command {
  const program = new Command("retrace")
    .description("Score a LangGraph.js agent's retrieval per turn: hit@k, recall@k, nDCG@k with honest n.")
    .version("0.1.0")
    .option("--verbose", "show the stack of an error (docs/reliability.md)")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  registerCheck(program);
  registerCompare(program);
  registerEval(program);
  registerIngest(program);
  registerScore(program);
  registerTrace(program);
  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version exit 0; usage errors exit 2 (commander already printed the message).
      process.exitCode = e.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    if (isRetraceError(e)) {
      // Thrown outside an action (e.g. while commander parses): report it like an action would.
      err(`retrace: ${e.message}`);
      process.exitCode = e.exitCode;
      return;
    }
    throw e;
  }
}

