/**
 * The deterministic, offline extractive answerer behind the `generate` node
 * (used when no chat model is configured). Pure: same inputs, same answer.
 *
 *   1. Policy: a message that violates a rule of ./policy.ts is declined.
 *   2. Retrieval: no trace for this turn (the store-less graph) → declined
 *      ("no retrieval ran"); a trace with no cards → declined.
 *   3. Evidence: the question's content terms (analyzer stems of the user's
 *      message; the retrieval query's when the message has none) are looked
 *      up in the retrieved cards' text. Each term weighs its BM25 IDF over
 *      the cards of the locale (a term no card contains weighs the most), and
 *      evidence = weight of the terms found / weight of all terms, in [0, 1].
 *      Below `minEvidence` (default 0.15) → declined as weak evidence: the
 *      cards do not talk about what was asked.
 *   4. Extraction: the retrieved cards are cut into sentences (a markdown
 *      list counts as one unit, joined to the sentence that introduces it);
 *      each scores the IDF weight of the question's terms it contains, plus
 *      half the weight of the query's other terms (the carried subject of a
 *      follow-up). The best `maxSentences` (default 3) scoring at least
 *      MIN_RELATIVE_SCORE (half) of the best one's score are kept, shown
 *      in retrieval order (card rank, then position), each card's group
 *      followed by its id in brackets: `... [card-freeze]`.
 *   5. Citations: the ids of the cards the kept sentences come from, in
 *      order. A refusal cites nothing.
 */
import { tableLocaleFor, type Locale } from "../kb/types.js";
import { DEFAULT_ANALYZERS, type Analyzers } from "../retrieval/analyzer.js";
import type { RetrievalTrace } from "../retrieval/types.js";
import type { CardEntry, CardLookup } from "./configuration.js";
import { checkPolicy, type PolicyCategory } from "./policy.js";

/** A sentence is kept only if it scores at least this share of the best sentence's score. */
export const MIN_RELATIVE_SCORE = 0.5;

export type RefusalReason = PolicyCategory | "weak_evidence" | "no_retrieval";

export interface AnswerInput {
  /** The user's message of this turn. */
  question: string;
  /** This turn's retrieval query (the question plus any carried subject). */
  query: string;
  locale?: Locale;
  /** This turn's retrieval trace; undefined when no retrieval ran. */
  trace: RetrievalTrace | undefined;
  cards: CardLookup;
  minEvidence: number;
  maxSentences: number;
  /** The analyzers terms come from (the KB's; default: the default profile). */
  analyzers?: Analyzers;
}

export interface ExtractedSentence {
  cardId: string;
  text: string;
  score: number;
}

export interface Answer {
  answer: string;
  citedIds: string[];
  refused: boolean;
  /** Why it declined; null when it answered. */
  reason: RefusalReason | null;
  /** The evidence score, when it was computed. */
  evidence?: number;
  /** The kept sentences, when it answered. */
  sentences?: ExtractedSentence[];
}

/** Refusal messages per locale and reason (what the user reads). */
export const REFUSAL_MESSAGES: Readonly<Record<Locale, Readonly<Record<RefusalReason, string>>>> = {
  en: {
    other_customer_data:
      "I can't look up or share information about another person's account. I can only help with your own account.",
    bypass_limits_or_verification:
      "I can't help get around identity verification, sign-in codes, reviews or account limits.",
    prompt_injection:
      "I can't follow instructions embedded in a message or change how I work. I can answer questions from the help articles.",
    out_of_scope:
      "That's outside what I can help with here. I can answer questions about your account, card, transfers and fees.",
    weak_evidence:
      "I couldn't find this in the help articles, so I'd rather not guess. Could you rephrase, or contact support?",
    no_retrieval: "No retrieval ran for this turn, so I have no help articles to answer from.",
  },
  "es-419": {
    other_customer_data:
      "No puedo consultar ni compartir información de la cuenta de otra persona. Solo puedo ayudarte con tu propia cuenta.",
    bypass_limits_or_verification:
      "No puedo ayudarte a saltarte la verificación de identidad, los códigos de acceso, las revisiones ni los límites de la cuenta.",
    prompt_injection:
      "No puedo seguir instrucciones incluidas en un mensaje ni cambiar cómo funciono. Puedo responder con base en los artículos de ayuda.",
    out_of_scope:
      "Eso está fuera de lo que puedo ayudarte aquí. Puedo responder preguntas sobre tu cuenta, tarjeta, transferencias y comisiones.",
    weak_evidence:
      "No encontré esto en los artículos de ayuda y prefiero no adivinar. ¿Puedes reformular la pregunta o contactar a soporte?",
    no_retrieval: "No se consultaron artículos de ayuda en este turno, así que no tengo de dónde responder.",
  },
  "pt-BR": {
    other_customer_data:
      "Não posso consultar nem compartilhar informações da conta de outra pessoa. Só posso ajudar com a sua própria conta.",
    bypass_limits_or_verification:
      "Não posso ajudar a contornar a verificação de identidade, os códigos de acesso, as análises ou os limites da conta.",
    prompt_injection:
      "Não posso seguir instruções embutidas em uma mensagem nem mudar meu funcionamento. Posso responder com base nos artigos de ajuda.",
    out_of_scope:
      "Isso está fora do que posso ajudar aqui. Posso responder dúvidas sobre sua conta, cartão, transferências e tarifas.",
    weak_evidence:
      "Não encontrei isso nos artigos de ajuda e prefiro não chutar. Pode reformular a pergunta ou falar com o suporte?",
    no_retrieval: "Nenhuma busca foi feita neste turno, então não tenho artigos de ajuda para responder.",
  },
};

// ---------------------------------------------------------------------------
// Term statistics of a card lookup (memoised per analyzer set and lookup object).

interface LocaleStats {
  cards: number;
  df: Map<string, number>;
}

interface LookupStats {
  byLocale: Map<Locale, LocaleStats>;
  cardTerms: Map<string, Set<string>>;
  /** Each card's sentence units with their analysed terms, keyed `locale\0cardId` (analysed once, not once per turn). */
  units: Map<string, { text: string; terms: Set<string> }[]>;
}

const statsCache = new WeakMap<Analyzers, WeakMap<CardLookup, LookupStats>>();

/** Markdown emphasis and code marks removed, whitespace collapsed. */
function plain(text: string): string {
  return text
    .replace(/\*\*([^*]+)\*\*/g, "$1")
    .replace(/__([^_]+)__/g, "$1")
    .replace(/`([^`]+)`/g, "$1")
    .replace(/\s+/g, " ")
    .trim();
}

const LIST_ITEM = /^\s*(?:[-*+]|\d+[.)])\s+/;

/** One sentence segmenter per locale (building one costs far more than segmenting a card; `segment` keeps no state). */
const sentenceSegmenters = new Map<string, Intl.Segmenter>();
function sentenceSegmenter(locale: string): Intl.Segmenter {
  let s = sentenceSegmenters.get(locale);
  if (s === undefined) {
    s = new Intl.Segmenter(locale, { granularity: "sentence" });
    sentenceSegmenters.set(locale, s);
  }
  return s;
}

/**
 * The sentence units of a card: its chunks' section text (the title and
 * heading lines that start each chunk's text are skipped), prose split into
 * sentences with Intl.Segmenter, a list kept as one unit and joined to the
 * sentence before it when that one ends with a colon.
 */
export function sentenceUnits(entry: CardEntry): string[] {
  const segmenter = sentenceSegmenter(entry.card.locale);
  const units: string[] = [];
  for (const chunk of entry.chunks) {
    const lines = chunk.text.split("\n");
    // Chunk text is `title\nsection\npiece` (src/kb/chunk.ts).
    const body = lines[0] === chunk.title && lines[1] === chunk.section ? lines.slice(2).join("\n") : chunk.text;
    for (const block of body.split(/\n\s*\n/)) {
      const blockLines = block.split("\n").filter((l) => l.trim() !== "");
      if (blockLines.length === 0) continue;
      if (blockLines.every((l) => LIST_ITEM.test(l))) {
        const items = blockLines.map((l) => plain(l.replace(LIST_ITEM, "")).replace(/[.;]$/, ""));
        const list = items.join("; ");
        const last = units[units.length - 1];
        if (last !== undefined && last.endsWith(":")) units[units.length - 1] = `${last} ${list}.`;
        else units.push(`${list}.`);
        continue;
      }
      for (const s of segmenter.segment(plain(block))) {
        const text = s.segment.trim();
        if (text !== "") units.push(text);
      }
    }
  }
  return units;
}

function statsOf(cards: CardLookup, analyzers: Analyzers): LookupStats {
  let byLookup = statsCache.get(analyzers);
  if (byLookup === undefined) {
    byLookup = new WeakMap();
    statsCache.set(analyzers, byLookup);
  }
  let stats = byLookup.get(cards);
  if (stats !== undefined) return stats;
  stats = { byLocale: new Map(), cardTerms: new Map(), units: new Map() };
  for (const [id, entry] of cards) {
    const locale = entry.card.locale;
    const text = [entry.card.title, entry.card.tags.join(" "), ...entry.chunks.map((c) => c.text)].join("\n");
    const terms = new Set(analyzers.analyze(text, locale));
    stats.cardTerms.set(id, terms);
    let ls = stats.byLocale.get(locale);
    if (ls === undefined) {
      ls = { cards: 0, df: new Map() };
      stats.byLocale.set(locale, ls);
    }
    ls.cards++;
    for (const t of terms) ls.df.set(t, (ls.df.get(t) ?? 0) + 1);
  }
  byLookup.set(cards, stats);
  return stats;
}

/** BM25's IDF of a term among the cards of a locale (analysed with `analyzers`): ln(1 + (N − df + 0.5) / (df + 0.5)); always > 0. */
export function termWeight(
  cards: CardLookup,
  locale: Locale,
  term: string,
  analyzers: Analyzers = DEFAULT_ANALYZERS,
): number {
  const ls = statsOf(cards, analyzers).byLocale.get(locale);
  const n = ls?.cards ?? 0;
  const df = ls?.df.get(term) ?? 0;
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/**
 * IDF-weighted share of `terms` present in the given cards' text (analysed
 * with `analyzers`), in [0, 1]; 0 when there are no terms or no (known) cards.
 */
export function evidenceScore(
  cards: CardLookup,
  locale: Locale,
  terms: ReadonlySet<string>,
  cardIds: readonly string[],
  analyzers: Analyzers = DEFAULT_ANALYZERS,
): number {
  if (terms.size === 0) return 0;
  const stats = statsOf(cards, analyzers);
  const present = new Set<string>();
  for (const id of cardIds) for (const t of stats.cardTerms.get(id) ?? []) present.add(t);
  let found = 0;
  let total = 0;
  for (const t of terms) {
    const w = termWeight(cards, locale, t, analyzers);
    total += w;
    if (present.has(t)) found += w;
  }
  return total === 0 ? 0 : found / total;
}

function unitsOf(
  cards: CardLookup,
  id: string,
  locale: Locale,
  analyzers: Analyzers,
): { text: string; terms: Set<string> }[] {
  const stats = statsOf(cards, analyzers);
  // Terms depend on the analysing locale (the turn's), so the memo is keyed by both.
  const key = `${locale}\u0000${id}`;
  let units = stats.units.get(key);
  if (units === undefined) {
    const entry = cards.get(id);
    units =
      entry === undefined
        ? []
        : sentenceUnits(entry).map((text) => ({ text, terms: new Set(analyzers.analyze(text, locale)) }));
    stats.units.set(key, units);
  }
  return units;
}

function refusal(locale: Locale, reason: RefusalReason, evidence?: number): Answer {
  // Generic rules for a language without a table: the English messages (docs/languages.md).
  return {
    answer: REFUSAL_MESSAGES[tableLocaleFor(locale) ?? "en"][reason],
    citedIds: [],
    refused: true,
    reason,
    ...(evidence !== undefined ? { evidence } : {}),
  };
}

/** Runs the answerer. See the module comment for the steps. */
export function answerExtractively(input: AnswerInput): Answer {
  const retrieved = (input.trace?.retrievedIds ?? []).filter((id) => input.cards.has(id));
  const locale: Locale =
    input.locale ?? input.trace?.locale ?? input.cards.get(retrieved[0] ?? "")?.card.locale ?? "en";

  const violation = checkPolicy(input.question, input.locale);
  if (violation !== null) return refusal(locale, violation.category);
  if (input.trace === undefined) return refusal(locale, "no_retrieval");
  if (retrieved.length === 0) return refusal(locale, "weak_evidence", 0);

  const analyzers = input.analyzers ?? DEFAULT_ANALYZERS;
  const questionTerms = new Set(analyzers.analyze(input.question, locale));
  const queryTerms = new Set(analyzers.analyze(input.query, locale));
  const asked = questionTerms.size > 0 ? questionTerms : queryTerms;
  const evidence = evidenceScore(input.cards, locale, asked, retrieved, analyzers);
  if (evidence < input.minEvidence) return refusal(locale, "weak_evidence", evidence);

  const candidates: (ExtractedSentence & { rank: number; position: number })[] = [];
  retrieved.forEach((cardId, rank) => {
    unitsOf(input.cards, cardId, locale, analyzers).forEach(({ text, terms }, position) => {
      let score = 0;
      for (const t of asked) if (terms.has(t)) score += termWeight(input.cards, locale, t, analyzers);
      for (const t of queryTerms)
        if (!asked.has(t) && terms.has(t)) score += 0.5 * termWeight(input.cards, locale, t, analyzers);
      if (score > 0) candidates.push({ cardId, text, score, rank, position });
    });
  });
  if (candidates.length === 0) return refusal(locale, "weak_evidence", evidence);

  const best = Math.max(...candidates.map((c) => c.score));
  const kept = candidates
    .filter((c) => c.score >= MIN_RELATIVE_SCORE * best)
    .sort((a, b) => b.score - a.score || a.rank - b.rank || a.position - b.position)
    .slice(0, input.maxSentences)
    .sort((a, b) => a.rank - b.rank || a.position - b.position);

  const citedIds: string[] = [];
  const parts: string[] = [];
  kept.forEach((s, i) => {
    parts.push(s.text);
    if (!citedIds.includes(s.cardId)) citedIds.push(s.cardId);
    if (kept[i + 1]?.cardId !== s.cardId) parts.push(`[${s.cardId}]`);
  });
  return {
    answer: parts.join(" "),
    citedIds,
    refused: false,
    reason: null,
    evidence,
    sentences: kept.map(({ cardId, text, score }) => ({ cardId, text, score })),
  };
}
