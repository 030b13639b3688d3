/**
 * The `contextualize` node: builds this turn's retrieval query from the
 * conversation and sets the turn index.
 *
 * Reads `messages` (the latest human message is the turn's question) and
 * `query` (the previous turn's query, kept by the checkpointer; when empty,
 * on a fresh thread fed the whole conversation, the carried subject is
 * rebuilt from the messages, the assistant's replies included:
 * `carriedSubject`, docs/configuration.md#replay-own-or-recorded-history);
 * writes `query` and `turn`.
 *
 * Deterministic by default (`contextualizeQuery`): a follow-up is expanded
 * with the previous turn's query, so the earlier subject is carried ("and how
 * long does that take?" after "how do I freeze my card?" retrieves about
 * freezing); a self-contained question is used as is. A message is a
 * follow-up when, per locale (FOLLOW_UP_MARKERS, data below):
 *   - it opens with a continuation word ("and", "also", "what if"; "y",
 *     "¿y si", "o sea"; "e", "e se", "então"), after optional fillers ("ok",
 *     "ugh", "bueno", "tá"); or
 *   - it contains a word referring back ("it", "that", "those"; "eso",
 *     "ese", "ahí", an enclitic as in "reclamarlo"; "isso", "esse", "dele",
 *     "cancelá-lo"); or
 *   - it is short: at most MAX_FOLLOW_UP_TERMS content terms after analysis
 *     ("cobra juros?", "what do I write on the back?");
 * unless it announces a new topic ("different thing:", "por cierto",
 * "outra coisa"), or there is no previous query (the first turn).
 *
 * `historyTurns` (configuration; `retrace eval --history N`) bounds what the
 * query may use: unset, every earlier turn (the previous turn's query is
 * carried, itself carrying the one before); N, the query is rebuilt from the
 * last N earlier messages only; 0, the raw message is the query.
 *
 * When a chat model is configured (`model`, with `rewriteWithModel` true, the
 * default) and the conversation has earlier turns, the model rewrites the
 * question as a standalone query in the user's language instead; an empty
 * reply falls back to the rules.
 */
import { AIMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { InvalidArgumentError } from "../errors.js";
import { LOCALES, isBlankText, tableLocaleFor, type Locale } from "../kb/types.js";
import { DEFAULT_ANALYZERS, tokenize, type Analyzers } from "../retrieval/analyzer.js";
import { ensureConfiguration } from "./configuration.js";
import { currentTurnIndex, humanTexts, isHuman, messageText, stateLocale, type ConversationState } from "./shared.js";

/** A message with at most this many content terms (analyzer stems, stop words removed) counts as a follow-up. */
export const MAX_FOLLOW_UP_TERMS = 2;
/** The carried previous query is cut to this many characters (at a word boundary), so chains of follow-ups stay bounded. */
export const MAX_CARRIED_CHARS = 300;

export interface FollowUpMarkers {
  /** Words skipped at the start before looking for an opener ("ok", "ugh", "bueno"). */
  fillers: readonly string[];
  /** Phrases that, opening the message, continue the previous turn. */
  openers: readonly string[];
  /** Words that refer back to something said before. */
  references: readonly string[];
  /** Word endings that carry a pronoun referring back (Spanish enclitics: "reclamarlo", "cancelarla"). */
  referenceSuffixes: readonly string[];
  /** Phrases announcing a new, unrelated question: never a follow-up. */
  topicSwitches: readonly string[];
}

/**
 * Follow-up markers per locale, as data. Written naturally (accents,
 * apostrophes); matched on the analyzer's tokens (lowercase, accent-folded),
 * whole words only.
 */
export const FOLLOW_UP_MARKERS: Readonly<Record<Locale, FollowUpMarkers>> = {
  en: {
    fillers: [
      "ok",
      "okay",
      "oh",
      "ah",
      "ugh",
      "cool",
      "great",
      "thanks",
      "alright",
      "well",
      "hmm",
      "yes",
      "yeah",
      "right",
      "actually",
    ],
    openers: ["and", "also", "but", "so", "or", "plus", "then", "what if", "what about", "how about", "in that case"],
    references: [
      "it",
      "its",
      "that",
      "this",
      "those",
      "these",
      "them",
      "they",
      "one",
      "same",
      "instead",
      "too",
      "either",
    ],
    referenceSuffixes: [],
    topicSwitches: [
      "different thing",
      "different question",
      "another question",
      "unrelated",
      "by the way",
      "btw",
      "new question",
      "something else",
    ],
  },
  "es-419": {
    fillers: ["ok", "okey", "ah", "oh", "bueno", "pues", "oye", "ya", "vale", "gracias", "perfecto", "sale", "ándale"],
    openers: ["y", "e", "también", "pero", "entonces", "o sea", "además", "mientras tanto", "y si", "o"],
    references: [
      "eso",
      "esto",
      "esa",
      "ese",
      "esas",
      "esos",
      "aquello",
      "aquel",
      "aquella",
      "ahí",
      "allí",
      "allá",
      "mismo",
      "misma",
      "otra",
      "otro",
    ],
    referenceSuffixes: [
      "arlo",
      "arla",
      "arlos",
      "arlas",
      "erlo",
      "erla",
      "erlos",
      "erlas",
      "irlo",
      "irla",
      "irlos",
      "irlas",
      "ándolo",
      "ándola",
      "iéndolo",
      "iéndola",
    ],
    topicSwitches: ["por cierto", "otra pregunta", "otra cosa", "cambiando de tema", "aparte"],
  },
  "pt-BR": {
    fillers: ["ok", "ah", "oh", "tá", "ta", "beleza", "valeu", "obrigado", "obrigada", "bom", "certo", "então"],
    openers: ["e", "mas", "também", "então", "aí", "e se", "ou", "além disso", "enquanto isso"],
    // "lo", "la": the clitic of "cancelá-lo", "pagá-la" (Portuguese articles are "o", "a").
    references: [
      "isso",
      "isto",
      "esse",
      "essa",
      "esses",
      "essas",
      "aquilo",
      "aquele",
      "aquela",
      "dele",
      "dela",
      "nisso",
      "disso",
      "desse",
      "dessa",
      "nesse",
      "nessa",
      "lá",
      "mesmo",
      "mesma",
      "e agora",
      "lo",
      "la",
      "los",
      "las",
    ],
    referenceSuffixes: [],
    topicSwitches: ["outra coisa", "outra pergunta", "mudando de assunto", "aliás", "falando nisso"],
  },
};

interface CompiledMarkers {
  fillers: Set<string>;
  openers: string[][];
  references: string[][];
  referenceSuffixes: string[];
  topicSwitches: string[][];
}

/** Markers of a locale with no built-in table: none. */
const GENERIC_MARKERS: FollowUpMarkers = {
  fillers: [],
  openers: [],
  references: [],
  referenceSuffixes: [],
  topicSwitches: [],
};

const compiled = new Map<Locale, CompiledMarkers>();

function compile(locale: Locale): CompiledMarkers {
  let c = compiled.get(locale);
  if (c === undefined) {
    // Generic rules for a language without tables: no marker lists, only the "short message" rule (docs/languages.md).
    const table = tableLocaleFor(locale);
    const m = table === null ? GENERIC_MARKERS : FOLLOW_UP_MARKERS[table];
    c = {
      fillers: new Set(m.fillers.flatMap((f) => tokenize(f))),
      openers: m.openers.map((p) => tokenize(p)),
      references: m.references.map((p) => tokenize(p)),
      referenceSuffixes: m.referenceSuffixes.flatMap((x) => tokenize(x)),
      topicSwitches: m.topicSwitches.map((p) => tokenize(p)),
    };
    compiled.set(locale, c);
  }
  return c;
}

function startsWith(tokens: readonly string[], at: number, phrase: readonly string[]): boolean {
  if (phrase.length === 0 || at + phrase.length > tokens.length) return false;
  return phrase.every((w, i) => tokens[at + i] === w);
}

function contains(tokens: readonly string[], phrase: readonly string[]): boolean {
  for (let i = 0; i + phrase.length <= tokens.length; i++) if (startsWith(tokens, i, phrase)) return true;
  return false;
}

/** Why a message counts as a follow-up (or null when it is self-contained). */
export type FollowUpReason = "opener" | "reference" | "short" | null;

/**
 * Whether `text` continues the previous turn, by the markers of `locale`
 * (every locale's markers when undefined); shortness is judged in terms of
 * `analyzers` (the KB's; default: the default profile). Pure.
 */
export function followUpReason(
  text: string,
  locale?: Locale,
  analyzers: Analyzers = DEFAULT_ANALYZERS,
): FollowUpReason {
  const tokens = tokenize(text);
  const locales = locale === undefined ? LOCALES : [locale];
  for (const l of locales) if (compile(l).topicSwitches.some((p) => contains(tokens, p))) return null;
  for (const l of locales) {
    const m = compile(l);
    let at = 0;
    while (at < tokens.length && m.fillers.has(tokens[at] as string)) at++;
    if (m.openers.some((p) => startsWith(tokens, at, p))) return "opener";
  }
  for (const l of locales) {
    const m = compile(l);
    if (m.references.some((p) => contains(tokens, p))) return "reference";
    if (tokens.some((t) => m.referenceSuffixes.some((x) => t.length > x.length + 1 && t.endsWith(x))))
      return "reference";
  }
  // Without a locale, the English analyzer judges shortness (stop words of the other locales then count as terms).
  const terms = new Set(analyzers.analyze(text, locale ?? "en"));
  if (terms.size <= MAX_FOLLOW_UP_TERMS) return "short";
  return null;
}

export function isFollowUp(text: string, locale?: Locale, analyzers: Analyzers = DEFAULT_ANALYZERS): boolean {
  return followUpReason(text, locale, analyzers) !== null;
}

/** Cuts `text` to at most `max` characters at a word boundary. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(" ");
  return (space > 0 ? cut.slice(0, space) : cut).trim();
}

/**
 * The deterministic retrieval query of a turn: `text` itself, or, for a
 * follow-up with a previous query, `text` followed by the previous query
 * (cut to MAX_CARRIED_CHARS). Pure.
 */
export function contextualizeQuery(
  text: string,
  previousQuery: string | undefined,
  locale?: Locale,
  analyzers: Analyzers = DEFAULT_ANALYZERS,
): { query: string; followUp: FollowUpReason } {
  const current = text.trim();
  const previous = (previousQuery ?? "").trim();
  if (isBlankText(previous)) return { query: current, followUp: null };
  const reason = followUpReason(current, locale, analyzers);
  if (reason === null) return { query: current, followUp: null };
  return { query: `${current} ${clip(previous, MAX_CARRIED_CHARS)}`.trim(), followUp: reason };
}

/** System prompt of the model rewrite. */
export const REWRITE_PROMPT = [
  "You turn the user's latest message into a standalone search query for a customer-support knowledge base.",
  "If the message depends on earlier turns (pronouns, 'and what about...', a short follow-up), carry over the subject from the conversation.",
  "If it is already self-contained, return it unchanged.",
  "Write the query in the same language as the user's latest message.",
  "Reply with the query only: no quotes, no explanation.",
].join("\n");

export type ContextualizeState = Pick<ConversationState, "messages" | "locale" | "query">;
export interface ContextualizeUpdate {
  query: string;
  turn: number;
}

/** The `contextualize` node. */
export async function contextualize(state: ContextualizeState, config?: RunnableConfig): Promise<ContextualizeUpdate> {
  const conf = ensureConfiguration(config);
  const turn = currentTurnIndex(state.messages);
  const texts = humanTexts(state.messages);
  const text = texts[texts.length - 1];
  if (text === undefined || isBlankText(text)) {
    throw new InvalidArgumentError(
      "messages",
      "a conversation with a non-empty human message (the turn's question; not only white space or invisible format characters)",
      text ?? null,
    );
  }
  const locale = stateLocale(state);
  const window = conf.historyTurns;
  const earlier = window === undefined ? texts.length - 1 : Math.min(window, texts.length - 1);
  if (conf.model !== null && conf.rewriteWithModel && earlier > 0) {
    const reply = await conf.model.invoke(
      [new SystemMessage(REWRITE_PROMPT), ...lastTurns(state.messages ?? [], earlier + 1)],
      config,
    );
    const rewritten = messageText(reply)
      .trim()
      .replace(/^["'“”«]+|["'“”»]+$/g, "")
      .trim();
    if (!isBlankText(rewritten)) return { query: rewritten, turn };
  }
  if (window !== undefined) {
    // A window of N earlier turns: the query is rebuilt from those turns alone (0: the raw message).
    let previous: string | undefined;
    for (const earlierText of texts.slice(texts.length - 1 - earlier, texts.length - 1))
      previous = contextualizeQuery(earlierText, previous, locale, conf.analyzers).query;
    return { query: contextualizeQuery(text, previous, locale, conf.analyzers).query, turn };
  }
  // The previous turn's query (kept by the checkpointer); without one (a fresh
  // thread fed the conversation, as `run.replay: recorded` does) the carried
  // subject is rebuilt from the messages, the assistant's replies included.
  const previous =
    (state.query ?? "") !== "" ? state.query : carriedSubject(state.messages ?? [], locale, conf.analyzers);
  return { query: contextualizeQuery(text, previous, locale, conf.analyzers).query, turn };
}

/**
 * The subject a follow-up carries, rebuilt from a conversation passed in whole
 * (no previous query in state: a fresh thread fed the recorded conversation,
 * docs/configuration.md#replay-own-or-recorded-history): each earlier user
 * message is contextualized in turn as the rules would have done turn by
 * turn, and the carried subject before each user message is the assistant's
 * reply just before it (when there is one, first: a follow-up's "their" names
 * what the assistant just said) followed by the previous query, cut to
 * MAX_CARRIED_CHARS. Undefined when there is no earlier user message.
 */
export function carriedSubject(
  messages: readonly BaseMessage[],
  locale: Locale | undefined,
  analyzers: Analyzers = DEFAULT_ANALYZERS,
): string | undefined {
  let last = -1;
  for (let i = messages.length - 1; i >= 0; i--)
    if (isHuman(messages[i] as BaseMessage)) {
      last = i;
      break;
    }
  let query: string | undefined;
  let reply = "";
  let humans = 0;
  const carried = () => {
    const both = `${reply} ${query ?? ""}`.trim();
    return both === "" ? undefined : clip(both, MAX_CARRIED_CHARS);
  };
  for (let i = 0; i < last; i++) {
    const m = messages[i] as BaseMessage;
    if (isHuman(m)) {
      query = contextualizeQuery(messageText(m), humans === 0 ? undefined : carried(), locale, analyzers).query;
      reply = "";
      humans++;
    } else if (AIMessage.isInstance(m)) {
      const said = messageText(m).trim();
      if (said !== "") reply = reply === "" ? said : `${reply} ${said}`;
    }
  }
  return humans === 0 ? undefined : carried();
}

/** The messages from the `humans`-th last human message on (the model sees only the window's turns). */
function lastTurns(messages: readonly BaseMessage[], humans: number): BaseMessage[] {
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (isHuman(messages[i] as BaseMessage) && ++seen === humans) return messages.slice(i);
  }
  return [...messages];
}
