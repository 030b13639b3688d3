/**
 * Parse and validate knowledge-base cards (docs/architecture.md §2.1):
 * `kb/cards/<locale>/<card-id>.md`, YAML front matter (`id`, `locale`, `title`,
 * optional `tags`) then a markdown body split at `## ` headings.
 * Every problem is reported as a DataIssue naming file, line and field; all
 * problems of a KB are collected before throwing, so one run shows them all.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { LineCounter, parseDocument, isMap, isScalar, isSeq } from "yaml";
import { DataValidationError, InvalidArgumentError, type DataIssue } from "../errors.js";
import { parseWithSchema } from "./schema-issues.js";
import { CARD_ID_PATTERN, CardFrontMatterSchema } from "./schemas.js";
import { DEFAULT_MAX_CARD_BYTES, readTextFile } from "./text.js";
import { canonicalLocale, isLocale, type Card, type KnowledgeBase, type Locale } from "./types.js";

/** "; did you mean pt-BR?" when `value` is a BCP-47 tag in non-canonical form. */
export function localeHint(value: unknown): string {
  const canonical = typeof value === "string" ? canonicalLocale(value) : null;
  return canonical !== null && canonical !== value ? ` (did you mean "${canonical}"?)` : "";
}

export { CARD_ID_PATTERN };

/** Parse one card's text. Returns the card, or the issues that prevent it. */
export function parseCard(text: string, file: string, folderLocale?: string): { card?: Card; idLine?: number; issues: DataIssue[] } {
  const issues: DataIssue[] = [];
  const issue = (message: string, line?: number, field?: string) => issues.push({ file, line, field, message });
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trim() !== "---") {
    issue("expected the file to start with a `---` line opening the YAML front matter", 1);
    return { issues };
  }
  const close = lines.indexOf("---", 1);
  if (close < 0) {
    issue("expected a closing `---` line after the front matter", 1);
    return { issues };
  }
  const yamlText = lines.slice(1, close).join("\n");
  const counter = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  // Front matter line n (1-based within the YAML) is file line n + 1.
  const lineOf = (offset: number | undefined) => (offset === undefined ? 2 : counter.linePos(offset).line + 1);
  if (doc.errors.length > 0) {
    for (const e of doc.errors) issue(`invalid YAML in the front matter: ${e.message.split("\n")[0]}`, lineOf(e.pos[0]));
    return { issues };
  }
  if (!isMap(doc.contents)) {
    issue("expected the front matter to be a YAML mapping with `id`, `locale` and `title`", 2);
    return { issues };
  }
  // Values and key lines of the mapping; the schema (src/kb/schemas.ts) checks the values.
  const raw: Record<string, unknown> = {};
  const lineOfKey = new Map<string, number>();
  for (const pair of doc.contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    const node = pair.value;
    raw[key] = isSeq(node) ? node.toJSON() : isScalar(node) ? node.value : node === null ? null : (node as { toJSON(): unknown }).toJSON();
    lineOfKey.set(key, lineOf(isScalar(pair.key) ? pair.key.range?.[0] : undefined));
  }
  const parsed = parseWithSchema(CardFrontMatterSchema, raw, { file, line: (p) => lineOfKey.get(String(p[0])) ?? 2 });
  issues.push(...parsed.issues);
  // Cross-field rules: the id names the file, the locale its folder.
  const fm = parsed.data;
  const baseName = path.basename(file, ".md");
  if (fm !== undefined && fm.id !== baseName) issue(`expected \`id\` to equal the file name "${baseName}", got "${fm.id}"`, lineOfKey.get("id"), "id");
  if (fm !== undefined && folderLocale !== undefined && fm.locale !== folderLocale)
    issue(`expected \`locale\` to equal its folder "${folderLocale}", got "${fm.locale}"`, lineOfKey.get("locale"), "locale");

  const bodyStart = close + 1; // 0-based index of the first body line
  const body = lines.slice(bodyStart).join("\n");
  const firstContent = lines.findIndex((l, i) => i >= bodyStart && l.trim() !== "");
  if (firstContent < 0) {
    issue("empty body; expected at least one `## ` section with text", bodyStart + 1, "body");
  } else if (!lines[firstContent]!.startsWith("## ")) {
    issue(`expected the body to start with a \`## \` section heading, got ${JSON.stringify(lines[firstContent]!.slice(0, 40))}`, firstContent + 1, "body");
  } else {
    for (const section of splitSections(body)) {
      if (section.heading === "") issue("expected a section heading after `## `", bodyStart + section.line, "body");
      if (section.text.trim() === "") issue(`section "${section.heading}" has no text`, bodyStart + section.line, "body");
    }
  }
  if (issues.length > 0 || fm === undefined) return { issues };
  return {
    idLine: lineOfKey.get("id") ?? 2,
    card: {
      id: fm.id,
      // A well-formed tag equal to its folder, which the loader accepts only as a known locale.
      locale: fm.locale as Locale,
      title: fm.title.trim(),
      tags: fm.tags ?? [],
      body,
      file,
    },
    issues,
  };
}

export interface Section {
  heading: string;
  text: string;
  /** 1-based line of the heading within the body. */
  line: number;
}

/** Split a card body at `## ` headings (deeper headings stay inside their section). */
export function splitSections(body: string): Section[] {
  const sections: Section[] = [];
  let current: { heading: string; lines: string[]; line: number } | null = null;
  body.split(/\r?\n/).forEach((line, i) => {
    if (line.startsWith("## ")) {
      if (current) sections.push({ heading: current.heading, text: current.lines.join("\n").trim(), line: current.line });
      current = { heading: line.slice(3).trim(), lines: [], line: i + 1 };
    } else if (current) {
      current.lines.push(line);
    }
  });
  if (current) {
    const c = current as { heading: string; lines: string[]; line: number };
    sections.push({ heading: c.heading, text: c.lines.join("\n").trim(), line: c.line });
  }
  return sections;
}

/**
 * The card size limit, bytes, and who set it: the `run.maxCardBytes` setting
 * (`--config` or the project file; docs/configuration.md) wins over RETRACE_MAX_CARD_BYTES, which wins over DEFAULT_MAX_CARD_BYTES
 * (1 MiB); unset or empty means the default.
 * @throws InvalidArgumentError (exit 2) when either is set to anything but a positive integer.
 */
export function cardLimit(flag: number | undefined, env: Record<string, string | undefined> = process.env): { bytes: number; source: string } {
  if (flag !== undefined) {
    if (!Number.isSafeInteger(flag) || flag <= 0) throw new InvalidArgumentError("run.maxCardBytes", "a positive integer (bytes)", flag);
    return { bytes: flag, source: "set by run.maxCardBytes" };
  }
  const raw = (env.RETRACE_MAX_CARD_BYTES ?? "").trim();
  if (raw === "") return { bytes: DEFAULT_MAX_CARD_BYTES, source: "the default" };
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError("RETRACE_MAX_CARD_BYTES", "a positive integer (bytes)", env.RETRACE_MAX_CARD_BYTES);
  return { bytes: n, source: "set by RETRACE_MAX_CARD_BYTES" };
}

/**
 * Read every card under `<kbDir>/cards/<locale>/*.md`. Throws one
 * DataValidationError listing every issue (duplicate ids across locales
 * included). `maxCardBytes` (the `run.maxCardBytes` setting) wins over
 * RETRACE_MAX_CARD_BYTES; a larger card is an issue naming its size, the
 * limit and both ways to raise it.
 */
export async function loadKnowledgeBase(kbDir: string, options: { maxCardBytes?: number } = {}): Promise<KnowledgeBase> {
  const limit = cardLimit(options.maxCardBytes);
  const maxCardBytes = limit.bytes;
  const cardsDir = path.join(kbDir, "cards");
  const issues: DataIssue[] = [];
  const cards: Card[] = [];
  const idLines = new Map<Card, number>();
  let folders: string[];
  try {
    folders = (await readdir(cardsDir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  } catch {
    throw new DataValidationError([{ file: cardsDir, message: "expected a folder of cards, one sub-folder per locale named by its BCP-47 tag (en, de, fr-CA, ja, …)" }]);
  }
  for (const folder of folders) {
    const dir = path.join(cardsDir, folder);
    if (!isLocale(folder)) {
      issues.push({ file: dir, message: `locale folder "${folder}" is not a canonical BCP-47 language tag (e.g. en, de, fr-CA, ja, zh-Hans)${localeHint(folder)}` });
      continue;
    }
    const files = (await readdir(dir)).filter((f) => f.endsWith(".md")).sort();
    for (const f of files) {
      const file = path.join(dir, f);
      // One strict loader for every input file (docs/reliability.md): UTF-8, regular files, a size limit.
      const read = await readTextFile(file, { maxBytes: maxCardBytes, limitSource: limit.source, limitOption: "the setting run.maxCardBytes (--config '{\"run\":{\"maxCardBytes\":N}}' or the project file) or RETRACE_MAX_CARD_BYTES=N (the setting wins)" });
      if ("issue" in read) {
        issues.push(read.issue);
        continue;
      }
      const { card, idLine, issues: found } = parseCard(read.text, file, folder);
      issues.push(...found);
      if (card) {
        cards.push(card);
        idLines.set(card, idLine ?? 2);
      }
    }
  }
  const byId = new Map<string, Card>();
  for (const card of cards) {
    const prior = byId.get(card.id);
    if (prior) issues.push({ file: card.file, line: idLines.get(card), field: "id", message: `duplicate card id "${card.id}", already used by ${prior.file}` });
    else byId.set(card.id, card);
  }
  if (cards.length === 0 && issues.length === 0) issues.push({ file: cardsDir, message: "no cards found; expected <locale>/<card-id>.md files" });
  if (issues.length > 0) throw new DataValidationError(issues);
  return { cards, byId };
}
