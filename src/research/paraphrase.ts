/**
 * How lexically close each gold-bearing question is to the cards it needs:
 * the share of the question's content terms (the locale's analyzer, from the
 * analyzer set given: stop words out, Snowball stems, accents folded) that
 * occur anywhere in its gold cards. A turn whose share is below
 * PARAPHRASE_THRESHOLD counts as a paraphrase — it shares few content words
 * with its card, so lexical retrieval cannot simply match it.
 */
import { chunkCard } from "../kb/chunk.js";
import type { EvalCase, KnowledgeBase } from "../kb/types.js";
import { DEFAULT_ANALYZERS, type Analyzers } from "../retrieval/analyzer.js";

export const PARAPHRASE_THRESHOLD = 0.5;

export interface OverlapStats {
  goldBearingTurns: number;
  paraphrases: number;
  /** paraphrases / goldBearingTurns (0 when there are none). */
  share: number;
  /** Median overlap share over gold-bearing turns. */
  medianOverlap: number;
}

/** Share of `question`'s distinct content terms found in `cardTerms` (1 when the question has no content term). */
export function termOverlap(
  question: string,
  locale: EvalCase["locale"],
  cardTerms: ReadonlySet<string>,
  analyzers: Analyzers = DEFAULT_ANALYZERS,
): number {
  const terms = new Set(analyzers.analyze(question, locale));
  if (terms.size === 0) return 1;
  let found = 0;
  for (const t of terms) if (cardTerms.has(t)) found += 1;
  return found / terms.size;
}

export function lexicalOverlapStats(
  kb: KnowledgeBase,
  cases: readonly EvalCase[],
  threshold: number = PARAPHRASE_THRESHOLD,
  analyzers: Analyzers = DEFAULT_ANALYZERS,
): OverlapStats {
  const termsOf = new Map<string, Set<string>>();
  const cardTerms = (id: string): Set<string> => {
    let set = termsOf.get(id);
    if (set === undefined) {
      const card = kb.byId.get(id);
      set = new Set(card === undefined ? [] : chunkCard(card).flatMap((c) => analyzers.analyze(c.text, card.locale)));
      termsOf.set(id, set);
    }
    return set;
  };
  const overlaps: number[] = [];
  for (const c of cases)
    for (const t of c.turns) {
      if (t.must_cite_one_of === undefined || t.must_cite_one_of.length === 0) continue;
      const union = new Set(t.must_cite_one_of.flatMap((g) => [...cardTerms(g)]));
      overlaps.push(termOverlap(t.user, c.locale, union, analyzers));
    }
  const paraphrases = overlaps.filter((o) => o < threshold).length;
  const sorted = [...overlaps].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  const median =
    sorted.length === 0
      ? 0
      : sorted.length % 2 === 1
        ? sorted[Math.floor(mid)]!
        : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return {
    goldBearingTurns: overlaps.length,
    paraphrases,
    share: overlaps.length === 0 ? 0 : paraphrases / overlaps.length,
    medianOverlap: median,
  };
}
