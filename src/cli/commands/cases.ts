/**
 * `retrace cases import FILE` and `retrace cases synth`: cases for your own
 * data (docs/synthetic-cases.md). `import` turns chat-message JSONL or
 * recorded traces of any registered format (src/eval/traces/formats/, named
 * in its help from that registry) into cases to label (src/app/cases-import.ts);
 * `synth` writes deterministic known-item cases from a KB or a BEIR corpus
 * (src/app/cases-synth.ts). The cases file goes to `--out` (default stdout);
 * counts and warnings go to stderr. Exit 0; 2 bad input (file, line and
 * field named) or option; nothing is written on an error.
 */
import { statSync } from "node:fs";
import type { Command } from "commander";
import { importCases, type ImportOptions } from "../../app/cases-import.js";
import { synthCases, type SynthOptions } from "../../app/cases-synth.js";
import { checkWritable, writeFileAtomic } from "../../atomic.js";
import { InvalidArgumentError } from "../../errors.js";
import { recordingsHelp } from "../../eval/traces/formats/registry.js";
import { MAX_SYNTH_TURNS } from "../../kb/schemas.js";
import { action, err, out } from "../io.js";
import { addOutOption, outFile, type OutTarget } from "../out-formats.js";
import { intOption, positiveIntOption, probabilityOption } from "../options.js";
import { addRetired } from "../old-spellings.js";
import { addConfigOption } from "../settings.js";

/** Writes the cases text to `file`, or stdout without one. */
async function emit(text: string, file: string | undefined, option = "--out", inPlace = false): Promise<void> {
  if (file === undefined || file === "-") out(text.endsWith("\n") ? text.slice(0, -1) : text);
  else await writeFileAtomic(file, text, { option, inPlace });
}

/** Whether two paths name one file (the same device and inode; false when either does not exist). */
function sameFile(a: string, b: string): boolean {
  try {
    const [x, y] = [statSync(a), statSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

export async function importCommand(file: string, o: ImportOptions & { out?: string }): Promise<number> {
  const target = o.out ?? o.into;
  // The conversations are read whole, then the cases written: onto the input itself they would replace it.
  for (const [flag, path] of [
    ["--out", o.out],
    ["--into", o.into],
  ] as const)
    if (path !== undefined && path !== "-" && sameFile(path, file))
      throw new InvalidArgumentError(
        flag,
        `a file other than the conversations being imported (writing the cases to ${file} would replace them)`,
        path,
      );
  const option = o.out !== undefined ? "--out" : "--into";
  // `--into` adds to the cases file it reads: its purpose (docs/synthetic-cases.md); `--out` replaces no input.
  const inPlace = o.out === undefined;
  if (target !== undefined && target !== "-") await checkWritable(target, option, { inPlace });
  const r = await importCases(file, o);
  await emit(r.text, target, option, inPlace);
  const c = r.counts;
  err(
    `Imported ${r.cases.length} conversation${r.cases.length === 1 ? "" : "s"} (${c.turns} turns to label) from ${file}` +
      (c.duplicates > 0 ? `; ${c.duplicates} already present (same id) skipped` : "") +
      (c.truncated > 0
        ? `; ${c.truncated} longer than ${o.maxTurns} user turns kept their first ${o.maxTurns} (--max-turns)`
        : "") +
      r.leftOut.map((l) => `; ${l.count} ${l.words} left out`).join("") +
      (target !== undefined && target !== "-" ? `; written to ${target}` : "") +
      ". The text is written as it is: it may hold personal data (docs/synthetic-cases.md#importing-conversations).",
  );
  return 0;
}

type SynthCommandOptions = Omit<SynthOptions, "seed"> & { seed: number; out?: string };

export async function synthCommand(o: SynthCommandOptions): Promise<number> {
  if ((o.kb === undefined) === (o.beir === undefined))
    throw new InvalidArgumentError(
      "--kb / --beir",
      "exactly one of --kb DIR or --beir DIR",
      o.kb === undefined ? "neither" : "both",
    );
  if (o.out !== undefined && o.out !== "-") await checkWritable(o.out, "--out");
  const r = await synthCases(o);
  await emit(r.text, o.out);
  err(
    `Synthesized ${r.cases.length} case${r.cases.length === 1 ? "" : "s"} (${r.turns} turns; generator ${r.generator.name} ${r.generator.version}, seed ${o.seed})` +
      (r.skipped.length > 0
        ? `; ${r.skipped.length} card${r.skipped.length === 1 ? "" : "s"} skipped (${r.skippedReasons})`
        : "") +
      (o.out !== undefined && o.out !== "-" ? `; written to ${o.out}` : "") +
      `.\nNote: ${r.verdict}` +
      r.notes.map((n) => `\nNote: ${n}`).join(""),
  );
  return 0;
}

/** The file of `--out` (the registry's `cases` format, src/cli/out-formats.ts), as the `out` the commands take. */
function casesOut(outputs: readonly OutTarget[] | undefined): { out?: string } {
  const file = outFile(outputs, "cases");
  return file !== undefined ? { out: file } : {};
}

export function register(program: Command): void {
  const cmd = program
    .command("cases")
    .description(
      "Cases for your own data: import conversations to label (chat JSONL or recorded traces), or synthesize known-item cases from a KB or BEIR corpus",
    );
  const imp = cmd
    .command("import")
    .description(`Turn conversations (chat-message JSONL, or recorded traces: ${recordingsHelp()}) into cases to label`)
    .argument(
      "<file>",
      `chat JSONL ({"messages": [...]} a line) or recorded traces (${recordingsHelp()}; one record a line, or one JSON document)`,
    )
    .option("--locale <tag>", "locale of conversations that name none (a `locale` field wins)")
    .option(
      "--into <file>",
      "an existing cases file: keep its lines, append only conversations whose id it lacks (written back unless --out)",
    )
    .option(
      "--max-turns <n>",
      "keep only each conversation's first n user turns (default: every turn); the cut conversations are counted",
      positiveIntOption("--max-turns"),
    )
    .action(
      action((file: string, { outputs, ...o }: ImportOptions & { outputs?: OutTarget[] }) =>
        importCommand(file, { ...o, ...casesOut(outputs) }),
      ),
    );
  addOutOption(imp, "cases", "the cases (default stdout)");
  // It reads no setting: --config and the project file are checked as every command checks them.
  addConfigOption(imp, {
    retrievalWhy: "not a setting of retrace cases import (it retrieves nothing)",
    projectKeys: [],
  });
  const synth = cmd
    .command("synth")
    .description(
      "Write deterministic multi-turn known-item cases (no model) from a KB's cards or a BEIR corpus; gold = the source card",
    )
    .option("--kb <dir>", "knowledge-base folder (cards under <dir>/cards/<locale>/)")
    .option("--beir <dir>", "a BEIR-layout folder (corpus.jsonl; one document = one card)")
    .option("--n <n>", "cases to write (default: one per usable card)", positiveIntOption("--n"))
    .option(
      "--turns <n>",
      `turns per case, 1 to ${MAX_SYNTH_TURNS} (follow-ups about other chunks of the card)`,
      intOption("--turns", { min: 1, max: MAX_SYNTH_TURNS }),
      2,
    )
    .option(
      "--topic-shift <p>",
      "probability that a case's last turn moves to another card",
      probabilityOption("--topic-shift"),
      0,
    )
    .option(
      "--noise <p>",
      "share of query terms drawn from the collection at large (known-item noise)",
      probabilityOption("--noise"),
      0,
    )
    .option("--strategy <name>", "query-term model: naive, mismatch, title, neighbours (docs/synthetic-cases.md)")
    .option(
      "--generator <module>",
      "a module whose default export returns the turns for a card (validated like any case)",
    );
  addOutOption(synth, "cases", "the cases (default stdout)");
  // run.seed and run.maxCardBytes are settings (--config, the project file).
  addRetired(
    addConfigOption(synth, {
      retrievalWhy: "not a setting of retrace cases synth (it retrieves nothing)",
      projectKeys: [],
    }),
  ).action(
    action(({ outputs, ...o }: SynthCommandOptions & { outputs?: OutTarget[] }) =>
      synthCommand({ ...o, ...casesOut(outputs) }),
    ),
  );
}
