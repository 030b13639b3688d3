/**
 * The `retrace` command line. Each command lives in its own file under
 * ./commands/ and exports `register(program)`; it parses options, calls its
 * use-case (src/app/), prints the result and returns the exit code. Result
 * on stdout, progress on stderr, exit codes as in
 * docs/gates-and-exit-codes.md: 0 pass, 1 a gate failed, 2 bad usage or
 * invalid data, 3 a required service or model is unavailable, 70 an internal
 * error (printed with its stack and the hint to report it). No crash exits 1.
 *
 * Start-up stays fast because a command's module — and with it LangGraph,
 * chromadb or transformers.js — is imported only when that command runs:
 * `retrace --help` lists the commands from the table below without loading
 * any of them (test/cli/lazy-imports.test.ts checks which modules load).
 */
import { declareCommandInputs } from "./inputs.js";
import { Command, CommanderError } from "commander";
import { editDistance } from "../edit-distance.js";
import { err, errText, EXIT, reportError, resolveWidth, setOutputWidth, WIDTH_ENV } from "./io.js";
import { commandsTaking, unknownOptionOf, widthOption } from "./options.js";
import { newSpelling } from "./old-spellings.js";

type CommandModule = { register(program: Command): void };

/** Each command: its one-line summary, its module, and whether it moved (kept, out of the help, to name its new spelling: src/cli/old-spellings.ts). */
export const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandModule>; moved?: boolean }> = {
  beir: {
    summary:
      "Benchmark a BEIR-layout dataset (corpus.jsonl, queries.jsonl, qrels/test.tsv) through the real retrieval stack",
    load: () => import("./commands/beir.js"),
  },
  baseline: {
    summary: "Moved: retrace baseline floors is now retrace report --floors",
    load: () => import("./commands/baseline.js"),
    moved: true,
  },
  cases: {
    summary:
      "Cases for your own data: import conversations to label (chat JSONL or recorded traces), or synthesize known-item cases from a KB or BEIR corpus",
    load: () => import("./commands/cases.js"),
  },
  check: {
    summary: "Validate the knowledge base and the eval cases (the dataset-integrity gate) and print their counts",
    load: () => import("./commands/check.js"),
  },
  compare: {
    summary:
      "Paired comparison of two runs of the same dataset (report JSON or baseline files): difference, 95% case-level bootstrap CI and p per metric",
    load: () => import("./commands/compare.js"),
  },
  export: {
    summary: "Moved: retrace export is now retrace report FILE --out trec:DIR",
    load: () => import("./commands/export.js"),
    moved: true,
  },
  eval: {
    summary:
      "Run every eval case through the agent graph (retrace's own, or yours with --graph) and score retrieval per turn (store-backed by default); or score recorded traces with --traces",
    load: () => import("./commands/eval.js"),
  },
  ingest: {
    summary:
      "Embed the knowledge base into Chroma (atomic and idempotent: a second run with the same KB and embedder does nothing)",
    load: () => import("./commands/ingest.js"),
  },
  init: {
    summary:
      "Write the project file (retrace.config.json) from the flags of a run, so that eval, trace and label need none there",
    load: () => import("./commands/init.js"),
  },
  label: {
    summary:
      "Label your own cases: a self-contained page pooling several systems' top cards per turn (keyboard grading, export); --merge the export into the cases; --agreement of judge and person",
    load: () => import("./commands/label.js"),
  },
  merge: {
    summary:
      "Merge the partial reports of retrace eval --shard i/n into the report and gate verdict of the unsharded run",
    load: () => import("./commands/merge.js"),
  },
  report: {
    summary:
      "A saved report JSON, without re-running the sweep: render it (--out FORMAT:FILE: html, markdown, json, junit, pr-comment, or its TREC run and qrels with trec:DIR; --table), or print floors from it or a baseline (--floors)",
    load: () => import("./commands/report.js"),
  },
  score: {
    summary:
      "Score a TREC run file against TREC qrels as trec_eval 10 does (success, recall, ndcg_cut, P at k; recip_rank; with -m: map, map_cut, Rprec, bpref, infAP, rbp, rbp_resid, unj, num_*)",
    load: () => import("./commands/score.js"),
  },
  start: {
    summary:
      "The main job (npm start): retrace eval with its defaults (the KB ingested into a self-started local Chroma, then the eval sweep)",
    load: () => import("./commands/eval.js"),
  },
  tune: {
    summary:
      "Cross-validated search of fusion method, weights, RRF k, depths and BM25 k1/b on the eval cases' tune part; writes a config file",
    load: () => import("./commands/tune.js"),
  },
  trace: {
    summary: "The per-turn debugger: every retrieval stage of every turn of one case, with where each gold card stood",
    load: () => import("./commands/trace.js"),
  },
};

/** The end of every command's help: the program options, which any command takes (before or after its name). */
export const GLOBAL_HELP = "\nGlobal options (see retrace --help): --verbose, --width <columns>, -V/--version";

/** The program options that take a value (so the word after them is not the command's name). */
const GLOBAL_VALUE_OPTIONS = new Set(["--width"]);

/**
 * commander's stdout (help and version text): a reader that stops early (`retrace eval --help | head -3`) closes the
 * pipe; that ends the command as it ends `git help | head`, exit 0 and nothing on stderr, instead of an internal error.
 * Reports written to stdout keep their own rule (a closed pipe is exit 3, src/output-set.ts).
 */
function writeHelp(text: string): void {
  if (process.stdout.listenerCount("error") === 0)
    process.stdout.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "EPIPE") process.exit(EXIT.ok);
      throw e;
    });
  process.stdout.write(text);
}

function baseProgram(): Command {
  const program = new Command("retrace")
    .description("Score a LangGraph.js agent's retrieval per turn: hit@k, recall@k, nDCG@k with honest n.")
    .version(VERSION)
    .option(
      "--verbose",
      "show the stack of an error and debug lines such as the embedder's model search path (docs/reliability.md)",
    )
    .option(
      "--width <columns>",
      `wrap text output at this many columns; 0: no limit (default: ${WIDTH_ENV}, else the terminal's width; no limit when stdout is not a terminal: a pipe, a file, a CI log)`,
      widthOption(),
    )
    // A command's help lists its own options; the three program options are named once at its end (GLOBAL_HELP).
    // commander's own errors echo what was typed (`unknown option '…'`): through the stderr boundary, secrets redacted and control characters escaped (docs/reliability.md).
    .configureOutput({ writeErr: (text) => process.stderr.write(errText(text)), writeOut: writeHelp })
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  // The width is fixed before any command runs (an invalid RETRACE_WIDTH is exit 2 before anything starts).
  program.hook("preAction", () => setOutputWidth(resolveWidth(program.opts<{ width?: number }>().width)));
  // What the command reads, so no output replaces it (src/cli/inputs.ts; exit 2 before anything starts).
  program.hook("preAction", (_program, action) => declareCommandInputs(action));
  // A misspelt command: commander's own suggestion misses longer slips (`evaluate` is 4 edits from `eval`).
  program.on("command:*", (operands: string[]) => {
    const word = operands[0] ?? "";
    const similar = suggestCommands(word, Object.keys(COMMANDS));
    const hint =
      similar.length === 0
        ? ""
        : ` (did you mean ${similar.length === 1 ? similar[0] : `one of ${similar.join(", ")}`}?)`;
    program.error(`error: unknown command '${word}'${hint}`, {
      exitCode: EXIT.usage,
      code: "commander.unknownCommand",
    });
  });
  return program;
}

/** The first word of `args` that is not an option or a program option's value: the command's name. */
export function commandWord(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (GLOBAL_VALUE_OPTIONS.has(a)) i++;
    else if (!a.startsWith("-")) return a;
  }
  return undefined;
}

/**
 * The commands `word` is probably a slip for: those within 3 edits (and
 * sharing more than 40% of the letters, commander's rule), or that `word`
 * starts with (at least their first 4 letters: `evaluate` → eval,
 * `ingestion` → ingest) or that start with `word` (at least 2 letters). Only
 * the closest are kept; sorted by name.
 */
export function suggestCommands(word: string, names: readonly string[]): string[] {
  const w = word.toLowerCase();
  if (w.length < 2) return [];
  const scored = names.flatMap((name) => {
    const distance = editDistance(w, name);
    const length = Math.max(w.length, name.length);
    if (distance <= 3 && (length - distance) / length > 0.4) return [{ name, score: distance }];
    const prefix = Math.min(4, name.length);
    if (w.startsWith(name.slice(0, prefix)) || name.startsWith(w)) return [{ name, score: 4 }];
    return [];
  });
  const best = Math.min(...scored.map((s) => s.score));
  return scored
    .filter((s) => s.score === best)
    .map((s) => s.name)
    .sort();
}

/** The package version, read from package.json at run time (the compiled CLI ships beside it). */
const VERSION: string = await (async () => {
  const { readFile } = await import("node:fs/promises");
  const text = await readFile(new URL("../../package.json", import.meta.url), "utf8");
  return (JSON.parse(text) as { version: string }).version;
})();

/**
 * The program for `argv`: the named command fully defined (its module
 * loaded), every other command as a summary-only entry, so `--help` and
 * "unknown command" work without loading anything heavy.
 */
export async function buildProgram(argv: readonly string[] = process.argv): Promise<Command> {
  const program = baseProgram();
  const args = argv.slice(2);
  const first = commandWord(args);
  // `retrace help eval` shows eval's own help, so eval is the command to load.
  const wanted = first === "help" ? args[args.indexOf("help") + 1] : first;
  if (wanted !== undefined && Object.hasOwn(COMMANDS, wanted)) (await COMMANDS[wanted]!.load()).register(program);
  // What the command reads once its settings are applied (project file, --config layers): its last preAction hook.
  const leaves = (c: Command): Command[] => (c.commands.length === 0 ? [c] : c.commands.flatMap(leaves));
  for (const cmd of program.commands.flatMap(leaves))
    cmd.hook("preAction", (_self, action) => declareCommandInputs(action, { settled: true }));
  for (const cmd of program.commands) cmd.addHelpText("after", GLOBAL_HELP);
  const defined = new Set(program.commands.map((c) => c.name()));
  for (const [name, { summary, moved }] of Object.entries(COMMANDS))
    if (!defined.has(name)) program.command(name, { hidden: moved === true }).description(summary);
  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    const program = await buildProgram(argv);
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version exit 0; usage errors exit 2 (commander already printed the message).
      process.exitCode = e.exitCode === 0 ? EXIT.ok : EXIT.usage;
      if (e.code === "commander.unknownOption") await hintUnknownOption(e.message);
      return;
    }
    // Thrown outside an action (e.g. while commander parses): a retrace error exits with its code, anything else 70.
    process.exitCode = reportError(e);
  }
}

/**
 * After `error: unknown option '--junit'`: the commands that do take it
 * (every command module is loaded for this, on the error path only).
 */
async function hintUnknownOption(message: string): Promise<void> {
  const flag = unknownOptionOf(message);
  if (flag === null) return;
  try {
    const program = baseProgram();
    for (const [name, { load }] of Object.entries(COMMANDS))
      if (!program.commands.some((c) => c.name() === name)) (await load()).register(program);
    const taking = commandsTaking(program, flag);
    if (taking.length > 0) err(`(${flag} is an option of: ${taking.map((n) => `retrace ${n}`).join(", ")})`);
    // An old spelling (hidden, src/cli/old-spellings.ts): its new one, on the commands that had it.
    const renamed = taking.length > 0 ? [] : commandsTaking(program, flag, { hidden: true });
    const old =
      renamed.length > 0
        ? program.commands.find((c) => c.name() === renamed[0])?.options.find((o) => o.long === flag)
        : undefined;
    if (old !== undefined)
      err(
        `(${flag} is now ${newSpelling(old.description, undefined)} on: ${renamed.map((n) => `retrace ${n}`).join(", ")})`,
      );
  } catch {
    // The hint is a courtesy: the usage error stands without it.
  }
}
