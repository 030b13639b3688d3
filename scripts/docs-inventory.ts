/**
 * The file inventory of docs/architecture.md (§2), generated from the header
 * comment of every `src/**\/*.ts` file: the doc comment (`/** … *\/`) the file
 * starts with, summarised by its first sentence. The text between
 * `<!-- inventory:begin -->` and `<!-- inventory:end -->` is this script's;
 * everything else on the page (layers, contracts, recipes) is hand-written.
 * Files are found by walking src/, so moving, adding or removing one needs
 * no edit here: rerun the script.
 *
 *   npm run docs:inventory               # rewrite the section when it changed
 *   npm run docs:inventory -- --check    # write nothing; exit 1 naming each file without a header, or the stale section
 *
 * test/docs/inventory.test.ts runs the check.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const DOC = "docs/architecture.md";
export const BEGIN = "<!-- inventory:begin -->";
export const END = "<!-- inventory:end -->";

/**
 * The doc comment a file starts with (a `#!` line and blank lines may come
 * before it), as plain text: the `*` gutters removed, lines trimmed at the
 * end, leading and trailing white space dropped. Null when the file starts
 * with anything else, or the comment is empty or unclosed.
 */
export function headerComment(source: string): string | null {
  const text = source.replace(/^\uFEFF/, "").replace(/^#![^\n]*\n/, "");
  const m = /^\s*\/\*\*([\s\S]*?)\*\//.exec(text);
  if (m === null || m[1] === undefined) return null;
  const lines = m[1].split(/\r?\n/).map((l) => l.replace(/^\s*\* ?/, "").trimEnd());
  while (lines.length > 0 && lines[0]!.trim() === "") lines.shift();
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === "") lines.pop();
  const out = lines.join("\n").trim();
  return out === "" ? null : out;
}

/**
 * The first sentence of a header's first paragraph (which ends at a blank
 * line or where a `-` / `*` list starts), on one line: it ends at a full stop
 * followed by a capital letter, a backtick, a bracket or a quote, or with the
 * paragraph ("e.g.", "i.e.", "cf." and "vs." end no sentence); a paragraph
 * ending in a colon (a list or formula follows) ends with a full stop instead.
 */
export function summaryOf(header: string): string {
  const paragraph = (header.split(/\n\s*\n|\n\s*[-*] /)[0] ?? "").replace(/\s+/g, " ").trim();
  const end = /(?<!\be\.g|\bi\.e|\bcf|\bvs)\.(?=\s+[A-Z`("'[]|$)/.exec(paragraph);
  const sentence = end === null ? paragraph : paragraph.slice(0, end.index + 1);
  return sentence.replace(/:$/, ".");
}

/** A markdown table cell's text: pipes escaped (also inside code spans, which GitHub's tables require). */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|");
}

/** Every `.ts` file under `dir` (relative to the root, `/` separators), sorted by path. */
export async function sourceFiles(dir = "src"): Promise<string[]> {
  const out: string[] = [];
  async function walk(rel: string): Promise<void> {
    const entries = await readdir(path.join(ROOT, rel), { withFileTypes: true });
    for (const e of entries) {
      const child = `${rel}/${e.name}`;
      if (e.isDirectory()) await walk(child);
      else if (e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(child);
    }
  }
  await walk(dir);
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The inventory: one table per folder (folders in path order), a row per file with its header's first sentence. */
export function inventory(files: readonly { file: string; summary: string }[]): string {
  const byDir = new Map<string, { file: string; summary: string }[]>();
  for (const f of files) {
    const dir = path.posix.dirname(f.file);
    const list = byDir.get(dir) ?? [];
    list.push(f);
    byDir.set(dir, list);
  }
  const dirs = [...byDir.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const out: string[] = [];
  for (const dir of dirs) {
    out.push(`**\`${dir}/\`**`, "", "| file | what it holds |", "|---|---|");
    for (const f of byDir.get(dir) ?? []) out.push(`| \`${path.posix.basename(f.file)}\` | ${cell(f.summary)} |`);
    out.push("");
  }
  return out.join("\n");
}

/** What the check found: source files without a header comment, and the page with its section as it should be. */
export async function checkInventory(): Promise<{ missing: string[]; page: string; current: boolean }> {
  const files = await sourceFiles();
  const missing: string[] = [];
  const rows: { file: string; summary: string }[] = [];
  for (const file of files) {
    const header = headerComment(await readFile(path.join(ROOT, file), "utf8"));
    if (header === null) missing.push(file);
    else rows.push({ file, summary: summaryOf(header) });
  }
  const doc = await readFile(path.join(ROOT, DOC), "utf8");
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin < 0 || end < begin || doc.indexOf(BEGIN, begin + 1) >= 0 || doc.indexOf(END, end + 1) >= 0) {
    throw new Error(`${DOC}: expected one ${BEGIN} followed by one ${END}`);
  }
  const page = `${doc.slice(0, begin + BEGIN.length)}\n\n${inventory(rows)}\n${doc.slice(end)}`;
  return { missing, page, current: page === doc };
}

async function main(): Promise<void> {
  const check = process.argv.includes("--check");
  const { missing, page, current } = await checkInventory();
  for (const file of missing)
    process.stderr.write(
      `${file}:1: no header comment (the file must start with a /** … */ comment saying what it holds)\n`,
    );
  if (!current) {
    if (check) process.stderr.write(`${DOC}: the file inventory is stale; run \`npm run docs:inventory\`\n`);
    else {
      await writeFile(path.join(ROOT, DOC), page, "utf8");
      process.stderr.write(`wrote ${DOC}\n`);
    }
  }
  if (missing.length > 0 || (check && !current)) process.exitCode = 1;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
