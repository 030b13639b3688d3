/**
 * Per-locale text analysis for BM25 (and the tokeniser the built-in embedder shares).
 *
 * Pipeline, identical for documents and queries:
 *   1. Unicode NFKC, then lowercase (locale-independent `toLowerCase`);
 *   2. tokens are maximal runs of letters, combining marks and digits: any other
 *      character (punctuation, symbols, spaces, `_`, apostrophes) separates, so
 *      "fees?" gives "fees" and "customer's" gives "customer", "s";
 *   3. accent folding (NFD, drop combining marks): everything after this step
 *      sees only the folded token, so "límite"/"limite" and "cartão"/"cartao"
 *      are analysed identically by construction;
 *   4. stop words dropped: the `stopword` package's eng/spa/por lists, plus a
 *      few contractions/forms they miss (below), all folded the same way;
 *   5. Snowball stemming (english, spanish, portuguese from `snowball-stemmers`).
 *      Because the Spanish and Portuguese stemmers key some suffixes on accented
 *      letters, a folded token first gets those accents restored on the suffix
 *      alone (es `-cion` → `-ción`, `-sion` → `-sión`; pt `-cao` → `-ção`,
 *      `-oes`/`-ões` → `-ão`, `-ao` → `-ão`), then the stem is folded again.
 *      The Portuguese plural `-ões` is mapped to `-ão` so "cartões" meets "cartão".
 *
 * Matching is on whole analysed terms only: "cat" never matches "category".
 */
import { createRequire } from "node:module";
import { newStemmer, type Stemmer } from "snowball-stemmers";
import { InvalidArgumentError } from "../errors.js";
import { LOCALES, isLocale, type Locale } from "../kb/types.js";

/** `stopword` ships no types; only its word lists are used. */
const stopwordLists = createRequire(import.meta.url)("stopword") as Record<"eng" | "spa" | "por", string[]>;

/** Forms the `stopword` lists miss: English contraction fragments, common Spanish/Portuguese verb forms. */
const EXTRA_STOP_WORDS: Record<Locale, readonly string[]> = {
  en: ["why", "when", "does", "s", "t", "d", "ll", "m", "re", "ve", "don", "doesn", "didn", "isn", "aren", "wasn", "won", "can't", "cannot", "i'm"],
  "es-419": ["es", "son", "está", "están", "estoy", "hay", "mis", "tus", "este", "esta", "esto", "estos", "estas", "ser", "fue", "era", "ha", "han", "he", "yo", "les", "unos", "unas", "tu"],
  "pt-BR": ["é", "são", "está", "estão", "estou", "foi", "ser", "ter", "tem", "têm", "há", "lo", "la", "los", "las"],
};

const STEMMER_NAME: Record<Locale, string> = { en: "english", "es-419": "spanish", "pt-BR": "portuguese" };
const STOP_LIST: Record<Locale, "eng" | "spa" | "por"> = { en: "eng", "es-419": "spa", "pt-BR": "por" };

/** Token characters: letters, combining marks, digits (after NFKC + lowercase). */
const TOKEN_RE = /[\p{L}\p{M}\p{N}]+/gu;
const MARKS_RE = /\p{M}+/gu;

const NON_ASCII_RE = /[^\u0000-\u007f]/;

/** Removes diacritics: NFD, drop combining marks, recompose. "Límite" → "Limite", "cartão" → "cartao". */
export function foldAccents(text: string): string {
  if (!NON_ASCII_RE.test(text)) return text;
  return text.normalize("NFD").replace(MARKS_RE, "").normalize("NFC");
}

/** NFKC then lowercase: the normalisation applied to the whole text before tokenising. */
function normalizeText(text: string): string {
  return text.normalize("NFKC").toLowerCase();
}

/**
 * Locale-independent tokenisation shared by every analyzer: NFKC, lowercase,
 * runs of letters/marks/digits, accent-folded. No stop words, no stemming.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const m of normalizeText(text).matchAll(TOKEN_RE)) {
    const folded = foldAccents(m[0]);
    if (folded.length > 0) out.push(folded);
  }
  return out;
}

/** Restores the suffix accents the Snowball stemmer needs on an already-folded token. */
function reaccentSuffix(locale: Locale, token: string): string {
  if (locale === "es-419") {
    if (token.length > 5 && /[cs]ion$/.test(token)) return `${token.slice(0, -3)}ión`;
    return token;
  }
  if (locale === "pt-BR") {
    if (token.length > 4 && token.endsWith("coes")) return `${token.slice(0, -4)}ção`;
    if (token.length > 3 && token.endsWith("oes")) return `${token.slice(0, -3)}ão`;
    if (token.length > 3 && token.endsWith("cao")) return `${token.slice(0, -3)}ção`;
    if (token.length > 2 && token.endsWith("ao")) return `${token.slice(0, -2)}ão`;
  }
  return token;
}

/** Per-locale analyzer with a bounded memo of token → term (analysis is the hot path of BM25 build). */
export class Analyzer {
  readonly locale: Locale;
  private readonly stemmer: Stemmer;
  private readonly stopWords: ReadonlySet<string>;
  private readonly memo = new Map<string, string | null>();
  private static readonly MEMO_LIMIT = 200_000;

  constructor(locale: Locale) {
    if (!isLocale(locale)) throw new InvalidArgumentError("locale", `one of ${LOCALES.join(", ")}`, locale);
    this.locale = locale;
    this.stemmer = newStemmer(STEMMER_NAME[locale]);
    const words = [...(stopwordLists[STOP_LIST[locale]] ?? []), ...EXTRA_STOP_WORDS[locale]];
    // Stop words go through the same normalisation and tokenisation as text, so "can't" → "can", "t".
    this.stopWords = new Set(words.flatMap((w) => tokenize(w)));
  }

  /** True when `token` (already tokenised) is a stop word of this locale. */
  isStopWord(token: string): boolean {
    return this.stopWords.has(token);
  }

  /** The analysed terms of `text`, in order, duplicates kept (term frequency matters). */
  analyze(text: string): string[] {
    const out: string[] = [];
    const re = new RegExp(TOKEN_RE); // own lastIndex: safe however calls interleave
    const norm = normalizeText(text);
    for (let m = re.exec(norm); m !== null; m = re.exec(norm)) {
      const term = this.term(m[0]);
      if (term !== null) out.push(term);
    }
    return out;
  }

  /** Term of one normalised (not yet folded) token, or null for a stop word. */
  private term(raw: string): string | null {
    const cached = this.memo.get(raw);
    if (cached !== undefined) return cached;
    const token = foldAccents(raw);
    let term: string | null = null;
    if (token.length > 0 && !this.stopWords.has(token)) {
      term = foldAccents(this.stemmer.stem(reaccentSuffix(this.locale, token)));
      if (term.length === 0) term = token;
    }
    // Bounded memo: once full, new tokens are analysed without being remembered (the
    // frequent ones come early), so memory stays flat on open-ended vocabularies.
    if (this.memo.size < Analyzer.MEMO_LIMIT) this.memo.set(raw, term);
    return term;
  }
}

const analyzers = new Map<Locale, Analyzer>();

/** The shared analyzer of a locale. */
export function analyzerFor(locale: Locale): Analyzer {
  let a = analyzers.get(locale);
  if (a === undefined) {
    a = new Analyzer(locale);
    analyzers.set(locale, a);
  }
  return a;
}

/** Analyses `text` with `locale`'s analyzer: the same function for documents and queries. */
export function analyze(text: string, locale: Locale): string[] {
  return analyzerFor(locale).analyze(text);
}
