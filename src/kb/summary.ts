/** Counts that describe a KB and a dataset (what `retrace check` prints). */
import { chunkKnowledgeBase, countWords } from "./chunk.js";
import { splitSections } from "./cards.js";
import { isToLabel, type EvalCase, type KnowledgeBase, type Locale } from "./types.js";

export interface DatasetCounts {
  cases: number;
  turns: number;
  goldBearingTurns: number;
  /** Turns with `must_cite_one_of: []` (the assistant should find no card). */
  noMatchTurns: number;
  /** Turns with graded `relevant` but no `must_cite_one_of`: relevance only, scored for nDCG only (as `retrace eval` scores them; docs/labelling.md), not no-match. */
  relevanceOnlyTurns: number;
  /** Turns without `must_cite_one_of`, `expect` and `relevant` (imported, to label): they score nothing. */
  toLabelTurns: number;
  refuseTurns: number;
  multiTurnCases: number;
  /** multiTurnCases / cases (0 when there are no cases). */
  multiTurnShare: number;
  /** Gold-bearing turns that list two or more acceptable cards. */
  disjunctiveTurns: number;
  /** disjunctiveTurns / goldBearingTurns (0 when there are none). */
  disjunctiveShare: number;
}

export interface KbCounts {
  cards: number;
  chunks: number;
  minSections: number;
  maxSections: number;
  minWords: number;
  maxWords: number;
}

export interface Summary {
  kb: { total: KbCounts; byLocale: Record<string, KbCounts> };
  /** Keys: `<locale>/<kind>`, `<locale>/all`, `all/<kind>`, `all/all`. */
  dataset: Record<string, DatasetCounts>;
  adversarialByCategory: Record<string, number>;
}

export function countCases(cases: readonly EvalCase[]): DatasetCounts {
  const turns = cases.flatMap((c) => c.turns);
  const gold = turns.filter((t) => (t.must_cite_one_of ?? []).length > 0);
  const toLabel = turns.filter(isToLabel).length;
  const relevanceOnly = turns.filter((t) => t.must_cite_one_of === undefined && !isToLabel(t)).length;
  const multi = cases.filter((c) => c.turns.length > 1).length;
  const disjunctive = gold.filter((t) => (t.must_cite_one_of ?? []).length >= 2).length;
  return {
    cases: cases.length,
    turns: turns.length,
    goldBearingTurns: gold.length,
    noMatchTurns: turns.length - gold.length - toLabel - relevanceOnly,
    relevanceOnlyTurns: relevanceOnly,
    toLabelTurns: toLabel,
    refuseTurns: turns.filter((t) => t.expect === "refuse").length,
    multiTurnCases: multi,
    multiTurnShare: cases.length === 0 ? 0 : multi / cases.length,
    disjunctiveTurns: disjunctive,
    disjunctiveShare: gold.length === 0 ? 0 : disjunctive / gold.length,
  };
}

function countKb(kb: KnowledgeBase, locale?: string): KbCounts {
  const cards = kb.cards.filter((c) => locale === undefined || c.locale === locale);
  const sections = cards.map((c) => splitSections(c.body).length);
  const words = cards.map((c) => countWords(c.body.replace(/^#+ /gm, "")));
  const sub = { cards, byId: new Map(cards.map((c) => [c.id, c])) };
  return {
    cards: cards.length,
    chunks: chunkKnowledgeBase(sub).length,
    minSections: sections.length ? Math.min(...sections) : 0,
    maxSections: sections.length ? Math.max(...sections) : 0,
    minWords: words.length ? Math.min(...words) : 0,
    maxWords: words.length ? Math.max(...words) : 0,
  };
}

/** The locales present in the KB or the cases, sorted (no fixed list: a KB may use any BCP-47 tags). */
export function localesPresent(kb: KnowledgeBase, cases: readonly EvalCase[]): string[] {
  return [...new Set([...kb.cards.map((c) => c.locale as string), ...cases.map((c) => c.locale as string)])].sort();
}

export function summarize(kb: KnowledgeBase, cases: readonly EvalCase[]): Summary {
  const dataset: Record<string, DatasetCounts> = {};
  const present = localesPresent(kb, cases);
  const locales = ["all", ...present];
  for (const locale of locales)
    for (const kind of ["all", "golden", "adversarial", "synthetic"]) {
      const subset = cases.filter((c) => (locale === "all" || c.locale === locale) && (kind === "all" || c.kind === kind));
      dataset[`${locale}/${kind}`] = countCases(subset);
    }
  const adversarialByCategory: Record<string, number> = {};
  for (const c of cases)
    if (c.kind === "adversarial") adversarialByCategory[c.category ?? "uncategorised"] = (adversarialByCategory[c.category ?? "uncategorised"] ?? 0) + 1;
  const byLocale: Record<string, KbCounts> = {};
  for (const l of present) byLocale[l] = countKb(kb, l as Locale);
  return { kb: { total: countKb(kb), byLocale }, dataset, adversarialByCategory };
}
