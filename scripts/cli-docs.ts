/**
 * The parts of the CLI docs generated from the code (issue 50): the output
 * registry's table in docs/cli.md (OUT_FORMATS), the table of retired
 * spellings in docs/cli.md (RETIRED), every command's option table in
 * docs/cli.md (each option's one declaration, the commander Option its
 * command module registers, read through commander's own Help: the flags and
 * the description `retrace COMMAND --help` prints, default included; with the
 * settings the command reads, from the settings schema) and the table of
 * which command reads which setting in docs/configuration.md (SETTINGS, the
 * one settings schema). Each lives between `<!-- NAME -->` and `<!-- /NAME
 * -->`; the rest of the pages is hand-written.
 *
 *   npm run docs:cli               # rewrite the blocks that changed
 *   npm run docs:cli -- --check    # write nothing; exit 1 naming each stale block
 *
 * test/docs/cli-docs.test.ts runs the check.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import { COMMANDS } from "../src/cli/main.js";
import { commandPath } from "../src/cli/old-spellings.js";
import { OUT_FORMATS } from "../src/cli/out-formats.js";
import { RETIRED, newSpelling } from "../src/cli/old-spellings.js";
import { SETTINGS, settingsOf } from "../src/app/settings/schema.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const cell = (s: string) => s.replaceAll("|", "\\|");
/** Help text as a table cell: `|` escaped, and `<`/`>` as entities (markdown would read `<dir>` as a tag). */
export const helpCell = (s: string) => cell(s).replaceAll("<", "&lt;").replaceAll(">", "&gt;");

/** The output registry's table. */
function outFormats(): string {
  return [
    "| format | extensions | written by | what it writes |",
    "| --- | --- | --- | --- |",
    ...OUT_FORMATS.map(
      (f) =>
        `| \`${f.name}\` | ${f.extensions.length === 0 ? "—" : f.extensions.map((e) => `\`${e}\``).join(", ")} | ${f.subjects.join(", ")} | ${cell(f.summary)} |`,
    ),
  ].join("\n");
}

/** The retired spellings, each with its new one and the commands that had it. */
function retired(): string {
  return [
    "| retired | now | on |",
    "| --- | --- | --- |",
    ...RETIRED.map((r) => {
      const now = /^(retrieval|run)\.\w+$/.test(r.to)
        ? `\`--config '{"${r.to.split(".")[0]}":{"${r.to.split(".")[1]}":…}}'\` (key \`${r.to}\`)`
        : /^nothing: /.test(r.to)
          ? cell(r.to)
          : `\`${newSpelling(r.to, /[=:]$/.test(r.to) ? "…" : undefined)}\``;
      return `| \`${cell(r.flags)}\` | ${now} | ${r.commands.filter((c) => c !== "start").join(", ")} |`;
    }),
  ].join("\n");
}

/** Which command reads which setting, with its help. */
function settings(): string {
  return [
    "| key | read by (and `start`, which is `eval`) | value |",
    "| --- | --- | --- |",
    ...SETTINGS.map(
      (s) => `| \`${s.key}\` | ${s.commands.filter((c) => c !== "start").join(", ")} | ${cell(s.help)} |`,
    ),
  ].join("\n");
}

/** Every command as its module registers it (the moved ones left out), leaves first in each family (`cases import`, `cases synth`). */
async function commands(): Promise<Command[]> {
  const program = new Command("retrace");
  for (const [name, c] of Object.entries(COMMANDS))
    if (c.moved !== true && name !== "start") (await c.load()).register(program);
  const leaves = (c: Command): Command[] => (c.commands.length === 0 ? [c] : c.commands.flatMap(leaves));
  return program.commands
    .flatMap(leaves)
    .filter((c) => c.name() !== "start")
    .sort((a, b) => commandPath(a).localeCompare(commandPath(b)));
}

/** One command's options as its `--help` lists them (commander's Help: the same flags and descriptions), and the settings it reads. */
function optionTable(cmd: Command): string {
  const help = cmd.createHelp();
  const name = commandPath(cmd);
  const reads = settingsOf(name).map((s) => `\`${s.key}\``);
  return [
    "| option | what it does |",
    "| --- | --- |",
    ...help
      .visibleOptions(cmd)
      .map((o) => `| \`${cell(help.optionTerm(o))}\` | ${helpCell(help.optionDescription(o))} |`),
    "",
    reads.length > 0
      ? `Settings it reads (\`--config\`, the project file; docs/configuration.md): ${reads.join(", ")}.`
      : "It reads no setting; `--config` and the project file are checked as on every command.",
  ].join("\n");
}

/** `eval`'s option table (`start` takes the same). */
async function evalOptions(): Promise<string> {
  return optionTable((await commands()).find((c) => c.name() === "eval")!);
}

/** Every other command's option table, under a heading each. */
async function otherOptions(): Promise<string> {
  return (await commands())
    .filter((c) => c.name() !== "eval")
    .map((c) => `### \`retrace ${commandPath(c)}\`\n\n${helpCell(c.description())}\n\n${optionTable(c)}`)
    .join("\n\n");
}

/** Each generated block: its page, marker name and text. */
export const BLOCKS: readonly { doc: string; name: string; text: () => string | Promise<string> }[] = [
  { doc: "docs/cli.md", name: "options-eval", text: evalOptions },
  { doc: "docs/cli.md", name: "options", text: otherOptions },
  { doc: "docs/cli.md", name: "out-formats", text: outFormats },
  { doc: "docs/cli.md", name: "retired", text: retired },
  { doc: "docs/configuration.md", name: "settings", text: settings },
];

/** `page` with block `name` replaced by `text` (the page as it is when it has no such markers: an error). */
export function withBlock(page: string, name: string, text: string): string {
  const begin = `<!-- ${name} -->`;
  const end = `<!-- /${name} -->`;
  const a = page.indexOf(begin);
  const b = page.indexOf(end);
  if (a < 0 || b < a) throw new Error(`no ${begin} … ${end} block`);
  return `${page.slice(0, a + begin.length)}\n\n${text}\n\n${page.slice(b)}`;
}

/** The blocks that differ from the pages: `doc: NAME` each. Writes the pages unless `check`. */
export async function run(check: boolean): Promise<string[]> {
  const stale: string[] = [];
  for (const doc of [...new Set(BLOCKS.map((b) => b.doc))]) {
    const file = path.join(ROOT, doc);
    const before = await readFile(file, "utf8");
    let after = before;
    for (const b of BLOCKS.filter((x) => x.doc === doc)) {
      const next = withBlock(after, b.name, await b.text());
      if (next !== after) stale.push(`${doc}: ${b.name}`);
      after = next;
    }
    if (!check && after !== before) await writeFile(file, after);
  }
  return stale;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const check = process.argv.includes("--check");
  const stale = await run(check);
  for (const s of stale) console.log(`${check ? "stale" : "wrote"} ${s}`);
  if (check && stale.length > 0) process.exitCode = 1;
}
