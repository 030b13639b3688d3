/** Data contracts of the knowledge base and the eval cases (docs/architecture.md §2.1). */
import { LOCALE_EXPECTED, NON_BLANK_QUERY, canonicalLocale, isBlankText, showText, type ADVERSARIAL_CATEGORIES, type CASE_KINDS, type CardFrontMatter, type CaseLine, type EXPECTS, type EvalTurn } from "./schemas.js";

/**
 * A BCP-47 language tag in canonical form (`en`, `es-419`, `pt-BR`, `de`,
 * `fr-CA`, `ja`, `zh-Hans`, …), see docs/languages.md. Branded so that only
 * validated strings (`toLocale`, `isLocale`) are typed as locales; any
 * language is representable, so supporting more languages never changes the type.
 */
export type Locale = BuiltinLocale | (string & { readonly __brand: "Locale" });

/** The locales the built-in graph has hand-made tables for (follow-up markers, policy, refusals); others use generic rules. */
export const BUILTIN_LOCALES = ["en", "es-419", "pt-BR"] as const;
/** A locale with built-in tables; kept in `Locale` so literals like "en" type-check without `toLocale`. */
export type BuiltinLocale = (typeof BUILTIN_LOCALES)[number];

/** True for a locale the built-in graph has hand-made tables for. */
export function isBuiltinLocale(x: unknown): x is BuiltinLocale {
  return typeof x === "string" && (BUILTIN_LOCALES as readonly string[]).includes(x);
}
/** @deprecated the built-in table locales; a KB may use any BCP-47 tag (use `isLocale`). */
export const LOCALES = BUILTIN_LOCALES;

export { LOCALE_EXPECTED, NON_BLANK_QUERY, canonicalLocale, isBlankText, showText };

/** True when `x` is a BCP-47 tag already in canonical form (`pt-BR`, not `pt-br` or `pt_BR`). */
export function isLocale(x: unknown): x is Locale {
  return typeof x === "string" && canonicalLocale(x) === x;
}

/** Validating constructor: the tag itself when canonical; throws a RangeError naming the canonical form or the bad tag otherwise. */
export function toLocale(tag: string): Locale {
  const canonical = canonicalLocale(tag);
  if (canonical === null) throw new RangeError(`Expected a BCP-47 language tag (e.g. en, fr-CA, zh-Hans), got ${JSON.stringify(tag)}`);
  if (canonical !== tag) throw new RangeError(`Expected the canonical BCP-47 form "${canonical}", got ${JSON.stringify(tag)}`);
  return tag as Locale;
}

/** The primary language subtag: `pt-BR` → `pt`, `zh-Hans` → `zh`. */
export function languageOf(locale: string): string {
  return locale.split("-")[0]!.toLowerCase();
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

/** A turn to label: no `must_cite_one_of` (and no `expect`) and no graded `relevant`, as `retrace cases import` writes them. It runs, scores nothing and is listed "to label". */
export function isToLabel(t: Pick<EvalTurn, "must_cite_one_of" | "relevant">): boolean {
  return t.must_cite_one_of === undefined && t.relevant === undefined;
}

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

/**
 * The built-in table locale a locale uses: itself when built in, else the
 * built-in locale of the same language (`es-MX` → `es-419`, `pt-PT` → `pt-BR`,
 * `en-GB` → `en`), else null — the locale then uses the generic rules of the
 * built-in graph (docs/languages.md).
 */
export function tableLocaleFor(locale: string): BuiltinLocale | null {
  if (isBuiltinLocale(locale)) return locale;
  const language = languageOf(locale);
  return BUILTIN_LOCALES.find((b) => languageOf(b) === language) ?? null;
}
