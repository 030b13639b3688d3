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
import { existsSync } from "node:fs";
import path from "node:path";
import { readTextFileSyncOrThrow } from "../kb/text.js";
import { algorithms, newStemmer, type Stemmer } from "snowball-stemmers";
import { DataValidationError, InvalidArgumentError, type DataIssue } from "../errors.js";
import { isLocale, languageOf, type Locale } from "../kb/types.js";
import { parseJsonOrThrow } from "../kb/json.js";
import { EXTRA_STOP_WORDS, STEMMER_BY_LANGUAGE, STOP_LIST_BY_LANGUAGE, stopwordLists } from "./analyzer-languages.js";
export * from "./analyzer-languages.js";

/** Per-locale analyzer overrides (docs/languages.md): stop words on/off, stemmer choice (a Snowball name, or "none"). */
export interface AnalyzerOverride {
  stopWords?: boolean;
  stemmer?: string;
}

/** What an analyzer does for a locale, after defaults and overrides. */
export interface AnalyzerProfile {
  locale: string;
  language: string;
  /** Snowball algorithm, or null (no stemming). */
  stemmer: string | null;
  /** `stopword` list key, or null (none). */
  stopList: string | null;
  stopWords: boolean;
  /** "regex" (runs of letters/marks/digits, accent-folded) or "segmenter" (Intl.Segmenter words, for languages without a stemmer). */
  tokenizer: "regex" | "segmenter";
}

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
function reaccentSuffix(language: string, token: string): string {
  if (language === "es") {
    if (token.length > 5 && /[cs]ion$/.test(token)) return `${token.slice(0, -3)}ión`;
    return token;
  }
  if (language === "pt") {
    if (token.length > 4 && token.endsWith("coes")) return `${token.slice(0, -4)}ção`;
    if (token.length > 3 && token.endsWith("oes")) return `${token.slice(0, -3)}ão`;
    if (token.length > 3 && token.endsWith("cao")) return `${token.slice(0, -3)}ção`;
    if (token.length > 2 && token.endsWith("ao")) return `${token.slice(0, -2)}ão`;
  }
  return token;
}

/**
 * Per-locale analyzer overrides keyed by locale tag or language subtag
 * (`<kb>/analyzers.json`, docs/languages.md). Plain data: a worker thread
 * builds the same analyzers from it.
 */
export type AnalyzerConfig = Readonly<Record<string, Readonly<AnalyzerOverride>>>;

const NO_OVERRIDES: AnalyzerConfig = Object.freeze({});

/**
 * The analysis a locale gets: the Snowball stemmer of its language subtag when
 * the project ships one (tokens: runs of letters/marks/digits, accent-folded),
 * else no stemming and Intl.Segmenter word segmentation (Chinese, Japanese,
 * Korean, Thai, …); the `stopword` list of its language when there is one.
 * `overrides` (by exact tag, else by language subtag) switch stop words off or
 * choose another stemmer ("none" for no stemming). Pure: without overrides,
 * the default profile.
 */
export function analyzerProfile(locale: string, overrides: AnalyzerConfig = NO_OVERRIDES): AnalyzerProfile {
  const language = languageOf(locale);
  const o =
    (Object.hasOwn(overrides, locale) ? overrides[locale] : undefined) ??
    (Object.hasOwn(overrides, language) ? overrides[language] : undefined) ??
    {};
  const stemmer =
    o.stemmer !== undefined ? (o.stemmer === "none" ? null : o.stemmer) : (STEMMER_BY_LANGUAGE[language] ?? null);
  const stopList = STOP_LIST_BY_LANGUAGE[language] ?? null;
  const tokenizer = (STEMMER_BY_LANGUAGE[language] ?? null) === null ? "segmenter" : "regex";
  return { locale, language, stemmer, stopList, stopWords: o.stopWords ?? true, tokenizer };
}

/** Per-locale analyzer with a bounded memo of token → term (analysis is the hot path of BM25 build). */
export class Analyzer {
  readonly locale: Locale;
  readonly profile: Readonly<AnalyzerProfile>;
  private readonly stemmer: Stemmer | null;
  private readonly stopWords: ReadonlySet<string>;
  private readonly segmenter: Intl.Segmenter | null;
  private readonly memo = new Map<string, string | null>();
  private static readonly MEMO_LIMIT = 200_000;

  /** The analyzer of `locale` after `overrides` (none: the default profile). */
  constructor(locale: Locale, overrides: AnalyzerConfig = NO_OVERRIDES) {
    if (!isLocale(locale))
      throw new InvalidArgumentError(
        "locale",
        "a canonical BCP-47 language tag (e.g. en, de, fr-CA, ja, zh-Hans)",
        locale,
      );
    this.locale = locale;
    this.profile = Object.freeze(analyzerProfile(locale, overrides));
    this.stemmer = this.profile.stemmer === null ? null : newStemmer(this.profile.stemmer);
    this.segmenter =
      this.profile.tokenizer === "segmenter" ? new Intl.Segmenter(locale, { granularity: "word" }) : null;
    const words = this.profile.stopWords
      ? [
          ...(this.profile.stopList === null ? [] : (stopwordLists[this.profile.stopList] ?? [])),
          ...(EXTRA_STOP_WORDS[this.profile.language] ?? []),
        ]
      : [];
    // Stop words go through the same normalisation and tokenisation as text, so "can't" → "can", "t".
    this.stopWords = new Set(words.flatMap((w) => this.tokens(w).map((t) => this.fold(t))));
  }

  /** Accent folding applies to the regex path only (folding kana would drop dakuten: が → か). */
  private fold(token: string): string {
    return this.segmenter === null ? foldAccents(token) : token;
  }

  /** Normalised (not yet folded) tokens of `text`. */
  private tokens(text: string): string[] {
    const norm = normalizeText(text);
    if (this.segmenter !== null) {
      const out: string[] = [];
      for (const seg of this.segmenter.segment(norm)) if (seg.isWordLike) out.push(seg.segment);
      return out;
    }
    const out: string[] = [];
    const re = new RegExp(TOKEN_RE); // own lastIndex: safe however calls interleave
    for (let m = re.exec(norm); m !== null; m = re.exec(norm)) out.push(m[0]);
    return out;
  }

  /** True when `token` (already tokenised) is a stop word of this locale. */
  isStopWord(token: string): boolean {
    return this.stopWords.has(token);
  }

  /** The analysed terms of `text`, in order, duplicates kept (term frequency matters). */
  analyze(text: string): string[] {
    const out: string[] = [];
    for (const raw of this.tokens(text)) {
      const term = this.term(raw);
      if (term !== null) out.push(term);
    }
    return out;
  }

  /** Term of one normalised (not yet folded) token, or null for a stop word. */
  private term(raw: string): string | null {
    const cached = this.memo.get(raw);
    if (cached !== undefined) return cached;
    const token = this.fold(raw);
    let term: string | null = null;
    if (token.length > 0 && !this.stopWords.has(token)) {
      term = this.stemmer === null ? token : this.fold(this.stemmer.stem(reaccentSuffix(this.profile.language, token)));
      if (term.length === 0) term = token;
    }
    // Bounded memo: once full, new tokens are analysed without being remembered (the
    // frequent ones come early), so memory stays flat on open-ended vocabularies.
    if (this.memo.size < Analyzer.MEMO_LIMIT) this.memo.set(raw, term);
    return term;
  }
}

/**
 * A per-locale analyzer set built from overrides (`createAnalyzers`): what
 * BM25, the LSA embedder, the answerer, follow-up detection and the
 * paraphrase measure analyse text with. Its settings never change after it is
 * built; each index, retriever or graph holds the set it was given, so two
 * systems over KBs with different `analyzers.json` in one process each
 * analyse with their own.
 */
export interface Analyzers {
  /** The overrides it was built from (frozen plain data: `createAnalyzers(a.overrides)` builds an equal set, e.g. in a worker thread). */
  readonly overrides: AnalyzerConfig;
  /** What the analyzer of `locale` does. */
  profile(locale: string): AnalyzerProfile;
  /** The analyzer of `locale` (built once per set and locale). */
  analyzerFor(locale: Locale): Analyzer;
  /** The analysed terms of `text` with `locale`'s analyzer: the same function for documents and queries. */
  analyze(text: string, locale: Locale): string[];
}

class AnalyzerSet implements Analyzers {
  readonly overrides: AnalyzerConfig;
  /** A cache of analyzers built from the fixed overrides, not configuration. */
  private readonly byLocale = new Map<string, Analyzer>();

  constructor(overrides: AnalyzerConfig) {
    this.overrides = Object.freeze(
      Object.fromEntries(Object.entries(overrides).map(([tag, o]) => [tag, Object.freeze({ ...o })])),
    );
  }

  profile(locale: string): AnalyzerProfile {
    return analyzerProfile(locale, this.overrides);
  }

  analyzerFor(locale: Locale): Analyzer {
    let a = this.byLocale.get(locale);
    if (a === undefined) {
      a = new Analyzer(locale, this.overrides);
      this.byLocale.set(locale, a);
    }
    return a;
  }

  analyze(text: string, locale: Locale): string[] {
    return this.analyzerFor(locale).analyze(text);
  }
}

/** The default profile of every locale (no overrides): what a component given no analyzers uses. */
export const DEFAULT_ANALYZERS: Analyzers = new AnalyzerSet(NO_OVERRIDES);

/**
 * The analyzers of every locale after `overrides` (the shape of
 * `<kb>/analyzers.json`: `{ "<locale or language>": { stopWords?, stemmer? } }`);
 * none or `{}` gives DEFAULT_ANALYZERS. The overrides are validated
 * (DataValidationError naming the field, exit 2) and copied: changing the
 * object afterwards changes nothing.
 */
export function createAnalyzers(overrides: AnalyzerConfig = NO_OVERRIDES): Analyzers {
  const { config, issues } = validateAnalyzerConfig(overrides, "analyzer overrides");
  if (issues.length > 0) throw new DataValidationError(issues);
  return Object.keys(config).length === 0 ? DEFAULT_ANALYZERS : new AnalyzerSet(config);
}

/** True when `a` analyses with the default profile of every locale (no overrides). */
export function isDefaultAnalyzers(a: Analyzers): boolean {
  return Object.keys(a.overrides).length === 0;
}

/** The default-profile analyzer of a locale (no overrides; see `createAnalyzers` for a KB's). */
export function analyzerFor(locale: Locale): Analyzer {
  return DEFAULT_ANALYZERS.analyzerFor(locale);
}

/** Analyses `text` with `locale`'s default-profile analyzer: the same function for documents and queries. */
export function analyze(text: string, locale: Locale): string[] {
  return DEFAULT_ANALYZERS.analyze(text, locale);
}

/**
 * Validates analyzer overrides `{ "<locale or language>": { stopWords?: boolean, stemmer?: "<snowball name>" | "none" } }`;
 * returns the issues (naming `file` and the field).
 */
export function validateAnalyzerConfig(
  raw: unknown,
  file: string,
): { config: Record<string, AnalyzerOverride>; issues: DataIssue[] } {
  const issues: DataIssue[] = [];
  const config: Record<string, AnalyzerOverride> = {};
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return { config, issues: [{ file, message: "expected a JSON object keyed by locale tag" }] };
  const names = algorithms();
  for (const [tag, value] of Object.entries(raw as Record<string, unknown>)) {
    if (!isLocale(tag))
      issues.push({ file, field: tag, message: `expected a canonical BCP-47 tag as key, got ${JSON.stringify(tag)}` });
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      issues.push({ file, field: tag, message: "expected an object { stopWords?, stemmer? }" });
      continue;
    }
    const o: AnalyzerOverride = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (k === "stopWords") {
        if (typeof v !== "boolean")
          issues.push({ file, field: `${tag}.stopWords`, message: `expected true or false, got ${JSON.stringify(v)}` });
        else o.stopWords = v;
      } else if (k === "stemmer") {
        if (typeof v !== "string" || (v !== "none" && !names.includes(v)))
          issues.push({
            file,
            field: `${tag}.stemmer`,
            message: `expected "none" or one of ${names.join(", ")}, got ${JSON.stringify(v)}`,
          });
        else o.stemmer = v;
      } else issues.push({ file, field: `${tag}.${k}`, message: "unknown field; expected only stopWords, stemmer" });
    }
    config[tag] = o;
  }
  return { config, issues };
}

/** The analyzer config file of a KB: `<kb>/analyzers.json` (docs/languages.md). */
export const ANALYZER_CONFIG_FILE = "analyzers.json";

/** Reads and validates an analyzer config file: its overrides, or null when there is no such file; throws DataValidationError (exit 2) when it is invalid. */
export function readAnalyzerConfigFile(file: string): AnalyzerConfig | null {
  if (!existsSync(file)) return null;
  const text = readTextFileSyncOrThrow(file); // the one text loader's rules (src/kb/text.ts)
  const raw = parseJsonOrThrow(text, { file, expected: "an analyzer config JSON object (docs/languages.md)" }); // src/kb/json.ts
  const { config, issues } = validateAnalyzerConfig(raw, file);
  if (issues.length > 0) throw new DataValidationError(issues);
  return config;
}

/**
 * The analyzers of the KB in `kbDir`: built from `<kb>/analyzers.json` when
 * it exists (validated: DataValidationError, exit 2), else the defaults;
 * `file` is the file read, or null.
 */
export function loadKbAnalyzers(kbDir: string): { analyzers: Analyzers; file: string | null } {
  const file = path.join(kbDir, ANALYZER_CONFIG_FILE);
  const config = readAnalyzerConfigFile(file);
  return config === null ? { analyzers: DEFAULT_ANALYZERS, file: null } : { analyzers: createAnalyzers(config), file };
}
