import path from "node:path";
import { describe, expect, it } from "vitest";
import { lexicalOverlapStats, termOverlap } from "../../src/research/paraphrase.js";
import { loadData } from "../../src/system.js";
import { MINI_KB } from "../helpers/fixtures.js";

describe("termOverlap", () => {
  it("is the share of the question's distinct content stems found in the card's terms", () => {
    // "how do I freeze my cards?" → content stems {freez, card} ("how", "do", "i", "my" are stop words)
    expect(termOverlap("how do I freeze my cards?", "en", new Set(["card"]))).toBe(0.5);
    expect(termOverlap("how do I freeze my cards?", "en", new Set(["card", "freez"]))).toBe(1);
    expect(termOverlap("my card got swallowed", "en", new Set(["atm"]))).toBe(0);
    // a question without content words cannot be a paraphrase of anything
    expect(termOverlap("and then?", "en", new Set())).toBe(1);
  });
});

describe("lexicalOverlapStats", () => {
  it("counts gold-bearing turns only, and those under the threshold as paraphrases", async () => {
    const { kb, cases } = await loadData(MINI_KB, path.join(MINI_KB, "eval", "cases.jsonl"));
    const all = lexicalOverlapStats(kb, cases, 1.01); // every turn is "under" a threshold above 1
    expect(all.goldBearingTurns).toBe(5);
    expect(all.paraphrases).toBe(5);
    const none = lexicalOverlapStats(kb, cases, 0);
    expect(none.paraphrases).toBe(0);
    expect(none.share).toBe(0);
  });
});
