import { describe, expect, it } from "vitest";
import { chunkCard, chunkKnowledgeBase, packParagraphs } from "../../src/kb/chunk.js";
import { loadKnowledgeBase } from "../../src/kb/cards.js";
import { kbHash } from "../../src/kb/hash.js";
import type { Card } from "../../src/kb/types.js";
import { MINI_KB } from "../helpers/fixtures.js";

const card = (id: string, body: string): Card => ({ id, locale: "en", title: `Title ${id}`, tags: [], body, file: `${id}.md` });

describe("chunkCard", () => {
  it("makes one chunk per section with ids <card>#n and the parent id", () => {
    const chunks = chunkCard(card("a", "## One\nalpha\n\n## Two\nbeta"));
    expect(chunks.map((c) => [c.id, c.parentId, c.section])).toEqual([["a#1", "a", "One"], ["a#2", "a", "Two"]]);
    expect(chunks[0]!.text).toBe("Title a\nOne\nalpha");
  });

  it("splits a long section on paragraph boundaries, numbering on across the card", () => {
    const para = (w: number, tag: string) => Array.from({ length: w }, () => tag).join(" ");
    const body = `## Long\n${para(8, "x")}\n\n${para(8, "y")}\n\n${para(3, "z")}\n\n## Short\nend`;
    // max 12 words: x (8) | y (8) + z (3) = 11 | "end" in its own section
    const chunks = chunkCard(card("a", body), 12);
    expect(chunks.map((c) => c.id)).toEqual(["a#1", "a#2", "a#3"]);
    expect(chunks[1]!.text.endsWith(`${para(8, "y")}\n\n${para(3, "z")}`)).toBe(true);
    expect(chunks[2]!.section).toBe("Short");
  });

  it("keeps a single paragraph longer than the limit whole", () => {
    expect(packParagraphs("a b c d e f", 3)).toEqual(["a b c d e f"]);
  });

  it("gives ids that do not change when other cards change", async () => {
    const kb = await loadKnowledgeBase(MINI_KB);
    const before = chunkKnowledgeBase(kb).filter((c) => c.parentId === "card-freeze");
    const edited = kb.cards.map((c) => (c.id === "refund-timelines" ? { ...c, body: `${c.body}\n\n## New\nmore` } : c));
    const after = chunkKnowledgeBase({ cards: edited, byId: new Map(edited.map((c) => [c.id, c])) }).filter((c) => c.parentId === "card-freeze");
    expect(after).toEqual(before);
    expect(kbHash({ cards: edited, byId: new Map() })).not.toBe(kbHash(kb));
    expect(kbHash({ cards: [...kb.cards].reverse(), byId: new Map() })).toBe(kbHash(kb));
  });
});
