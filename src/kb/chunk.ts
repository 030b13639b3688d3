/**
 * Chunk cards into retrievable sections (docs/architecture.md §2.1): one chunk per `## `
 * section, id `<card-id>#<n>` (n from 1), parent id `<card-id>`. A section
 * longer than MAX_CHUNK_WORDS is split further on paragraph boundaries.
 * Ids depend only on the card's own text, so they stay stable when other
 * cards change.
 */
import { splitSections } from "./cards.js";
import type { Card, Chunk, KnowledgeBase } from "./types.js";

/** Sections longer than this (whitespace-separated words) are split on blank lines. */
export const MAX_CHUNK_WORDS = 220;

export function countWords(text: string): number {
  const t = text.trim();
  return t === "" ? 0 : t.split(/\s+/).length;
}

/** Greedily pack paragraphs into pieces of at most `maxWords` (a single longer paragraph stays whole). */
export function packParagraphs(text: string, maxWords: number = MAX_CHUNK_WORDS): string[] {
  const paragraphs = text.split(/\n\s*\n/).map((p) => p.trim()).filter((p) => p !== "");
  const pieces: string[] = [];
  let current: string[] = [];
  let words = 0;
  for (const p of paragraphs) {
    const w = countWords(p);
    if (current.length > 0 && words + w > maxWords) {
      pieces.push(current.join("\n\n"));
      current = [];
      words = 0;
    }
    current.push(p);
    words += w;
  }
  if (current.length > 0) pieces.push(current.join("\n\n"));
  return pieces;
}

export function chunkCard(card: Card, maxWords: number = MAX_CHUNK_WORDS): Chunk[] {
  const chunks: Chunk[] = [];
  for (const section of splitSections(card.body)) {
    for (const piece of packParagraphs(section.text, maxWords)) {
      chunks.push({
        id: `${card.id}#${chunks.length + 1}`,
        parentId: card.id,
        locale: card.locale,
        title: card.title,
        section: section.heading,
        text: `${card.title}\n${section.heading}\n${piece}`,
      });
    }
  }
  return chunks;
}

export function chunkKnowledgeBase(kb: KnowledgeBase, maxWords: number = MAX_CHUNK_WORDS): Chunk[] {
  return kb.cards.flatMap((card) => chunkCard(card, maxWords));
}
