/** Data contracts of the knowledge base and the eval cases (DESIGN.md §3.1, §3.2). */
import type { ADVERSARIAL_CATEGORIES, CASE_KINDS, CardFrontMatter, CaseLine, EXPECTS, EvalTurn } from "./schemas.js";

export const LOCALES = ["en", "es-419", "pt-BR"] as const;
export type Locale = (typeof LOCALES)[number];

export function isLocale(x: unknown): x is Locale {
  return typeof x === "string" && (LOCALES as readonly string[]).includes(x);
}

/** A knowledge-base card: `kb/cards/<locale>/<id>.md`; the front-matter fields come from CardFrontMatterSchema (src/kb/schemas.ts). */
export interface Card extends Omit<CardFrontMatter, "locale" | "tags"> {
  locale: Locale;
  tags: string[];
  /** Markdown body after the front matter. */
  body: string;
  /** Path of the file it was read from (as given, for error messages). */
  file: string;
}

/** A retrievable unit: one `## ` section of a card, or one paragraph-bounded piece of a long section. */
export interface Chunk {
  /** `<card-id>#<n>`, n from 1, counted within the card only (stable when other cards change). */
  id: string;
  /** The card id. */
  parentId: string;
  locale: Locale;
  /** Card title. */
  title: string;
  /** The section heading (without `## `). */
  section: string;
  /** Text to index: title, heading and section text. */
  text: string;
}

export { ADVERSARIAL_CATEGORIES, CASE_KINDS, EXPECTS } from "./schemas.js";
export type CaseKind = (typeof CASE_KINDS)[number];
export type Expect = (typeof EXPECTS)[number];
export type AdversarialCategory = (typeof ADVERSARIAL_CATEGORIES)[number];

/** One turn of a case, inferred from EvalTurnSchema (src/kb/schemas.ts). */
export type { EvalTurn };

/** A case, inferred from CaseLineSchema (src/kb/schemas.ts), plus the line it was read from. */
export interface EvalCase extends Omit<CaseLine, "locale"> {
  locale: Locale;
  turns: EvalTurn[];
  /** 1-based line in the JSONL file. */
  line: number;
}

export interface KnowledgeBase {
  cards: Card[];
  byId: Map<string, Card>;
}
