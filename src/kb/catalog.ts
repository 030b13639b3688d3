/**
 * `--catalog FILE` (docs/evaluate-your-graph.md): for documents that already
 * live in the user's vector store, a plain list of the card ids and their
 * locales stands in for the Markdown KB — one `id<TAB>locale` a line; blank
 * lines and lines starting with `#` are ignored. The integrity check (every
 * gold id names a catalog entry of the case's locale) and the chance levels
 * use it. Each entry becomes a body-less card. Ids may be any non-empty
 * string without a tab (paths and URLs included).
 */
import { readTextFileOrThrow } from "./text.js";
import { DataValidationError, type DataIssue } from "../errors.js";
import { isLocale, type Card, type KnowledgeBase, type Locale } from "./types.js";

/** Parses catalog text; every bad line is an issue naming file, line and field. */
export function parseCatalog(text: string, file: string): { kb: KnowledgeBase; issues: DataIssue[] } {
  const issues: DataIssue[] = [];
  const cards: Card[] = [];
  const byId = new Map<string, Card>();
  const firstLine = new Map<string, number>();
  text.replace(/^\uFEFF/, "").split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === "" || raw.startsWith("#")) return;
    const parts = raw.split("\t");
    if (parts.length !== 2) {
      issues.push({ file, line, message: `expected \`id<TAB>locale\`, got ${JSON.stringify(raw.slice(0, 60))}` });
      return;
    }
    const [id, locale] = [parts[0]!.trim(), parts[1]!.trim()];
    // Any non-empty id: documents in a user's store may be keyed by paths or URLs (e.g. metadata.source).
    if (id === "") issues.push({ file, line, field: "id", message: "expected a non-empty id before the tab" });
    else if (!isLocale(locale)) issues.push({ file, line, field: "locale", message: `expected a BCP-47 locale tag, got ${JSON.stringify(locale)}` });
    else if (firstLine.has(id)) issues.push({ file, line, field: "id", message: `duplicate id "${id}", first listed on line ${firstLine.get(id)}` });
    else {
      const card: Card = { id, locale: locale as Locale, title: id, tags: [], body: "", file: `${file}:${line}` };
      firstLine.set(id, line);
      cards.push(card);
      byId.set(id, card);
    }
  });
  if (cards.length === 0 && issues.length === 0) issues.push({ file, message: "no entries; expected one `id<TAB>locale` a line" });
  return { kb: { cards, byId }, issues };
}

/** Reads and validates a catalog file; throws one DataValidationError listing every issue. */
export async function loadCatalog(file: string): Promise<KnowledgeBase> {
  const text = await readTextFileOrThrow(file); // strict UTF-8, BOM removed, a regular file (src/kb/text.ts)
  const { kb, issues } = parseCatalog(text, file);
  if (issues.length > 0) throw new DataValidationError(issues);
  return kb;
}
