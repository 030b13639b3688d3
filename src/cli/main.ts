/**
 * The `retrace` command line. Each command lives in its own file and exports
 * `register(program)`. Result on stdout, progress on stderr, exit codes as in
 * DESIGN.md §5 (0 pass, 1 gate failed, 2 bad usage or invalid data, 3 a
 * required service or model is unavailable).
 */
import { Command, CommanderError } from "commander";
import { register as registerCheck } from "./check.js";
import { EXIT } from "./io.js";

export function buildProgram(): Command {
  const program = new Command("retrace")
    .description("Score a LangGraph.js agent's retrieval per turn: hit@k, recall@k, nDCG@k with honest n.")
    .version("0.1.0")
    .showHelpAfterError()
    .exitOverride();
  registerCheck(program);
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
    throw e;
  }
}

