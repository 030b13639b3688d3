/**
 * Scale fixtures: a copy of the shipped KB plus `cards` seeded synthetic
 * cards (4 sections each, so 4 chunks a card), written in the words of the
 * shipped cards of the same locale so that they compete with the real cards
 * in both retrieval branches. Same seed, same files.
 */
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { mulberry32 } from "../../src/eval/stats/bootstrap.js";
import { LOCALES } from "../../src/kb/types.js";
import { copyKb, SHIPPED_KB } from "./fixtures.js";

export const SECTIONS_PER_SYNTHETIC_CARD = 4;

async function vocabulary(kbDir: string, locale: string): Promise<string[]> {
  const dir = path.join(kbDir, "cards", locale);
  const words = new Set<string>();
  for (const f of (await readdir(dir)).sort()) {
    const body = (await readFile(path.join(dir, f), "utf8")).split(/^---$/m).slice(2).join(" ");
    for (const w of body.toLowerCase().match(/\p{L}+/gu) ?? []) if (w.length > 2) words.add(w);
  }
  return [...words].sort();
}

/** A temp copy of the shipped KB with `cards` synthetic cards added (round-robin over the locales). */
export async function syntheticKb(cards: number, seed = 1): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const kb = await copyKb(SHIPPED_KB);
  const rand = mulberry32(seed);
  const vocab = new Map<string, string[]>();
  for (const l of LOCALES) vocab.set(l, await vocabulary(kb.dir, l));
  const pick = (words: string[], n: number) =>
    Array.from({ length: n }, () => words[Math.floor(rand() * words.length)]).join(" ");
  for (let i = 0; i < cards; i++) {
    const locale = LOCALES[i % LOCALES.length]!;
    const words = vocab.get(locale)!;
    const id = `syn-${locale.toLowerCase()}-${String(i).padStart(5, "0")}`;
    const sections = Array.from(
      { length: SECTIONS_PER_SYNTHETIC_CARD },
      (_, s) => `## ${pick(words, 3)} ${s + 1}\n${pick(words, 25 + Math.floor(rand() * 30))}.\n`,
    );
    const text = `---\nid: ${id}\nlocale: ${locale}\ntitle: ${pick(words, 4)}\n---\n${sections.join("\n")}`;
    await mkdir(path.join(kb.dir, "cards", locale), { recursive: true });
    await writeFile(path.join(kb.dir, "cards", locale, `${id}.md`), text);
  }
  return kb;
}
