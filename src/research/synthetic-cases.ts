/**
 * Multi-turn known-item cases (docs/synthetic-cases.md), pure and seeded:
 *
 * - turn 1: a known-item query from one chunk of the card (./synthetic.ts),
 *   phrased with a question template of the locale (en, es-419, pt-BR, and
 *   locales of the same language) or as bare keywords otherwise;
 * - each follow-up: another chunk of the same card, phrased elliptically
 *   with one or two of its terms ("And what about {x}?"), the full query
 *   (turn 1's subject terms + the follow-up's) kept as `standalone`;
 * - with probability `topicShift`, the last turn of a case of 2+ turns is a
 *   fresh question about another card of the locale (its gold: that card);
 * - gold of each turn is the card its chunk belongs to; `expect: "answer"`.
 *
 * Each case draws from its own stream (`rngFor(seed, index)`), so the same
 * seed, corpus and settings give byte-identical cases.
 */
import { MAX_SYNTH_TURNS } from "../kb/schemas.js";
import { tableLocaleFor, type Locale } from "../kb/types.js";
import { DEFAULT_ANALYZERS } from "../retrieval/analyzer.js";
import type { BeirDataset, BeirQuery } from "./beir.js";
import {
  CorpusStats,
  GENERATOR_VERSION,
  generatorName,
  knownItemTerms,
  rngFor,
  type QuerySettings,
  type SynthDoc,
} from "./synthetic.js";
import type { Qrels } from "../eval/ir/trec.js";

/** Question templates per built-in locale: `first` for a fresh question, `follow` for an elliptical follow-up; `{q}` is the terms. */
export const TEMPLATES: Readonly<Record<string, { first: readonly string[]; follow: readonly string[] }>> =
  Object.freeze({
    en: {
      first: [
        "{q}?",
        "How does {q} work?",
        "What should I know about {q}?",
        "Can you help me with {q}?",
        "Question about {q}",
      ],
      follow: ["And {q}?", "What about {q}?", "And how about {q}?", "And {q} - how does that work?"],
    },
    "es-419": {
      first: [
        "¿{q}?",
        "¿Cómo funciona {q}?",
        "¿Qué debo saber sobre {q}?",
        "¿Me ayudas con {q}?",
        "Pregunta sobre {q}",
      ],
      follow: ["¿Y {q}?", "¿Y qué pasa con {q}?", "¿Y sobre {q}?", "¿Y {q}, cómo funciona?"],
    },
    "pt-BR": {
      first: [
        "{q}?",
        "Como funciona {q}?",
        "O que devo saber sobre {q}?",
        "Pode me ajudar com {q}?",
        "Dúvida sobre {q}",
      ],
      follow: ["E {q}?", "E quanto a {q}?", "E sobre {q}?", "E {q}, como funciona?"],
    },
  });

export interface CaseSettings extends QuerySettings {
  seed: number;
  /** Turns per case, 1..MAX_SYNTH_TURNS (fewer when the card has fewer usable chunks). */
  turns: number;
  topicShift: number;
  /** Use templates (true) or bare keyword queries (false); BEIR corpora use bare queries. */
  templates: boolean;
}

export interface SynthTurn {
  user: string;
  must_cite_one_of: string[];
  expect: "answer";
  standalone?: string;
}

export interface SynthCase {
  id: string;
  locale: string;
  kind: "synthetic";
  origin: { generator: string; version: string; seed: number; card: string; chunk: string; chunks: string[] };
  turns: SynthTurn[];
}

function pick<T>(xs: readonly T[], rng: () => number): T {
  return xs[Math.floor(rng() * xs.length)] as T;
}

function phrase(
  locale: Locale,
  kind: "first" | "follow",
  terms: readonly string[],
  rng: () => number,
  templates: boolean,
): string {
  const q = terms.join(" ");
  const table = templates ? tableLocaleFor(locale) : null;
  const t = table !== null ? TEMPLATES[table] : undefined;
  return t === undefined ? q : pick(t[kind], rng).replace("{q}", q);
}

/** The usable chunks of a card: those with at least `minTerms` distinct terms. */
export function usableChunks(stats: CorpusStats, doc: SynthDoc, minTerms: number): string[] {
  return doc.chunks.map((c) => c.id).filter((id) => stats.termCount(id) >= minTerms);
}

/**
 * The case of one card (index `i` of the output): null when the card has no
 * usable chunk. `others` are the cards a topic shift may move to (same locale).
 */
export function synthCase(
  stats: CorpusStats,
  doc: SynthDoc,
  i: number,
  s: CaseSettings,
  others: readonly SynthDoc[],
): SynthCase | null {
  const rng = rngFor(s.seed, `${i}\u0000${doc.card}`);
  const usable = usableChunks(stats, doc, s.minTerms);
  if (usable.length === 0) return null;
  // Chunks in a seeded order: turn 1's first, then the follow-ups'.
  const order = [...usable];
  for (let j = order.length - 1; j > 0; j--) {
    const k = Math.floor(rng() * (j + 1));
    [order[j], order[k]] = [order[k] as string, order[j] as string];
  }
  const first = order[0] as string;
  const terms = knownItemTerms(stats, first, s, rng);
  if (terms === null) return null;
  const turns: SynthTurn[] = [
    { user: phrase(doc.locale, "first", terms, rng, s.templates), must_cite_one_of: [doc.card], expect: "answer" },
  ];
  const chunks = [first];
  const wanted = Math.min(Math.max(1, s.turns), MAX_SYNTH_TURNS);
  const shift =
    wanted >= 2 && rng() < s.topicShift ? others.filter((o) => o.card !== doc.card && o.locale === doc.locale) : [];
  const follows = Math.min(wanted - 1 - (shift.length > 0 ? 1 : 0), order.length - 1);
  for (let f = 1; f <= follows; f++) {
    const chunk = order[f] as string;
    // The follow-up names what is particular to its chunk: not the title's terms, nor turn 1's words.
    const exclude = new Set([
      ...stats.titleTermsOf(chunk),
      ...terms.flatMap((w) => stats.analyzers.analyzerFor(doc.locale).analyze(w)),
    ]);
    const fterms = knownItemTerms(stats, chunk, { ...s, strategy: "naive", minTerms: 1, maxTerms: 2 }, rng, exclude);
    if (fterms === null) break;
    const subject = terms.filter((t) => !fterms.includes(t));
    turns.push({
      user: phrase(doc.locale, "follow", fterms, rng, s.templates),
      standalone: [...subject, ...fterms].join(" "),
      must_cite_one_of: [doc.card],
      expect: "answer",
    });
    chunks.push(chunk);
  }
  if (shift.length > 0) {
    const other = pick(shift, rng);
    const ou = usableChunks(stats, other, s.minTerms);
    const oc = ou.length > 0 ? pick(ou, rng) : undefined;
    const oterms = oc !== undefined ? knownItemTerms(stats, oc, s, rng) : null;
    if (oc !== undefined && oterms !== null) {
      turns.push({
        user: phrase(other.locale, "first", oterms, rng, s.templates),
        must_cite_one_of: [other.card],
        expect: "answer",
      });
      chunks.push(oc);
    }
  }
  return {
    id: `syn-${s.seed}-${i + 1}`,
    locale: doc.locale,
    kind: "synthetic",
    origin: {
      generator: generatorName(s.strategy),
      version: GENERATOR_VERSION,
      seed: s.seed,
      card: doc.card,
      chunk: first,
      chunks,
    },
    turns,
  };
}

/**
 * The cards a run draws cases from: every card in the order given (one case
 * each) without `n`; with `n`, seeded rounds over a shuffled order until n.
 */
export function cardSchedule(cards: readonly SynthDoc[], n: number | undefined, seed: number): SynthDoc[] {
  if (n === undefined) return [...cards];
  const rng = rngFor(seed, "schedule");
  const out: SynthDoc[] = [];
  while (out.length < n && cards.length > 0) {
    const round = [...cards];
    for (let j = round.length - 1; j > 0; j--) {
      const k = Math.floor(rng() * (j + 1));
      [round[j], round[k]] = [round[k] as SynthDoc, round[j] as SynthDoc];
    }
    out.push(...round.slice(0, n - out.length));
  }
  return out;
}

/** The documents of a BEIR corpus as one-chunk English cards (file order; text = title + " " + text, as retrace beir indexes them). */
export function beirDocs(corpus: ReadonlyArray<{ id: string; title: string; text: string }>): SynthDoc[] {
  return corpus.map((d) => ({
    card: d.id,
    locale: "en" as Locale,
    title: d.title,
    chunks: [{ id: d.id, section: "", text: d.title === "" ? d.text : `${d.title} ${d.text}` }],
  }));
}

/** N synthetic known-item queries of a BEIR corpus (ids `syn-1`…, bare keywords), each with its source document as the one relevant document. */
export function syntheticQueries(
  data: Pick<BeirDataset, "corpus">,
  n: number,
  seed: number,
  settings: QuerySettings,
): { queries: BeirQuery[]; qrels: Qrels } {
  const docs = beirDocs(data.corpus);
  const stats = new CorpusStats(docs, DEFAULT_ANALYZERS);
  const usable = docs.filter((d) => usableChunks(stats, d, settings.minTerms).length > 0);
  const queries: BeirQuery[] = [];
  const qrels: Qrels = new Map();
  for (const [i, doc] of cardSchedule(usable, n, seed).entries()) {
    const terms = knownItemTerms(stats, doc.card, settings, rngFor(seed, `${i}\u0000${doc.card}`));
    if (terms === null) continue;
    const id = `syn-${i + 1}`;
    queries.push({ id, text: terms.join(" ") });
    qrels.set(id, new Map([[doc.card, 1]]));
  }
  return { queries, qrels };
}
