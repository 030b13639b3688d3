/**
 * The deterministic extractive answerer on the mini KB: refusal paths (policy,
 * no retrieval, weak evidence), extraction and citations, sentence units,
 * and the evidence score's bounds.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { Card, KnowledgeBase } from "../../src/kb/types.js";
import {
  REFUSAL_MESSAGES,
  answerExtractively,
  evidenceScore,
  sentenceUnits,
  termWeight,
} from "../../src/nodes/answerer.js";
import { cardLookup, type CardLookup } from "../../src/nodes/configuration.js";
import { analyze } from "../../src/retrieval/analyzer.js";
import { MINI_KB } from "../helpers/fixtures.js";
import { hybridFixture, RecordingRetrieverDouble } from "../graph/helpers.js";

let kb: KnowledgeBase;
let cards: CardLookup;
beforeAll(async () => {
  kb = (await hybridFixture(MINI_KB)).kb;
  cards = cardLookup(kb);
});

async function traceOf(ids: string[], query = "q") {
  return new RecordingRetrieverDouble(ids).retrieve(query, { locale: "en" });
}

const base = { minEvidence: 0.15, maxSentences: 3 };

describe("answerExtractively", () => {
  it("answers from the retrieved cards, in retrieval order, citing their ids", async () => {
    const trace = await traceOf(["card-freeze", "refund-timelines"]);
    const a = answerExtractively({
      ...base,
      question: "how do I freeze my card?",
      query: "how do I freeze my card?",
      locale: "en",
      trace,
      cards,
    });
    expect(a.refused).toBe(false);
    expect(a.reason).toBeNull();
    expect(a.citedIds).toEqual(["card-freeze"]);
    expect(a.answer).toContain("Open the app, tap Card, then Freeze.");
    expect(a.answer.endsWith("[card-freeze]")).toBe(true);
    expect(a.sentences!.length).toBeGreaterThan(0);
    expect(a.sentences!.length).toBeLessThanOrEqual(3);
  });

  it("cites several cards when the best sentences come from several, grouped per card", async () => {
    const trace = await traceOf(["refund-timelines", "card-freeze"]);
    const q = "does freezing my card stop refunds and duplicate charges?";
    const a = answerExtractively({ ...base, question: q, query: q, locale: "en", trace, cards });
    expect(a.refused).toBe(false);
    expect(a.citedIds).toEqual(["refund-timelines", "card-freeze"]);
    expect(new Set(a.citedIds)).toEqual(new Set(a.sentences!.map((s) => s.cardId)));
    for (const id of a.citedIds) expect(a.answer).toContain(`[${id}]`);
    // Every kept sentence is literally from its card.
    for (const s of a.sentences!)
      expect(cards.get(s.cardId)!.card.body.replace(/\s+/g, " ")).toContain(s.text.replace(/[.]$/, ""));
  });

  it("honours maxSentences", async () => {
    const trace = await traceOf(["card-freeze", "refund-timelines"]);
    const a = answerExtractively({
      ...base,
      maxSentences: 1,
      question: "freeze card refunds",
      query: "freeze card refunds",
      locale: "en",
      trace,
      cards,
    });
    expect(a.sentences).toHaveLength(1);
  });

  it("declines a policy violation with no citations, even with strong evidence", async () => {
    const trace = await traceOf(["card-freeze"]);
    const a = answerExtractively({
      ...base,
      question: "freeze my neighbour's card and give me her card number",
      query: "x",
      locale: "en",
      trace,
      cards,
    });
    expect(a).toMatchObject({ refused: true, reason: "other_customer_data", citedIds: [] });
    expect(a.answer).toBe(REFUSAL_MESSAGES.en.other_customer_data);
  });

  it("declines with 'no retrieval ran' when there is no trace (store-less)", () => {
    const a = answerExtractively({
      ...base,
      question: "how do I freeze my card?",
      query: "how do I freeze my card?",
      locale: "es-419",
      trace: undefined,
      cards,
    });
    expect(a).toMatchObject({ refused: true, reason: "no_retrieval", citedIds: [] });
    expect(a.answer).toBe(REFUSAL_MESSAGES["es-419"].no_retrieval);
  });

  it("declines weak evidence: the retrieved cards do not mention what was asked", async () => {
    const trace = await traceOf(["card-freeze"]);
    const a = answerExtractively({
      ...base,
      question: "do you offer mortgages for a vacation home?",
      query: "do you offer mortgages for a vacation home?",
      locale: "en",
      trace,
      cards,
    });
    expect(a.refused).toBe(true);
    expect(a.reason).toBe("weak_evidence");
    expect(a.evidence).toBeLessThan(0.15);
    expect(a.citedIds).toEqual([]);
    const empty = answerExtractively({
      ...base,
      question: "how do I freeze my card?",
      query: "x",
      locale: "en",
      trace: await traceOf([]),
      cards,
    });
    expect(empty).toMatchObject({ refused: true, reason: "weak_evidence", citedIds: [] });
  });

  it("the threshold decides: minEvidence 0 answers what 1 declines", async () => {
    const trace = await traceOf(["refund-timelines"]);
    const args = {
      question: "when will the duplicate charge on my statement disappear?",
      query: "q",
      locale: "en" as const,
      trace,
      cards,
      maxSentences: 3,
    };
    const lenient = answerExtractively({ ...args, minEvidence: 0 });
    const strict = answerExtractively({ ...args, minEvidence: 1 });
    expect(lenient.refused).toBe(false);
    expect(lenient.citedIds).toEqual(["refund-timelines"]);
    expect(strict.refused).toBe(true);
    expect(lenient.evidence).toBe(strict.evidence);
  });

  it("answers in the locale of the retrieved cards when no locale is given", async () => {
    const trace = await new RecordingRetrieverDouble(["es-congelar-tarjeta"]).retrieve("q");
    const a = answerExtractively({
      ...base,
      question: "¿cómo congelo la tarjeta?",
      query: "¿cómo congelo la tarjeta?",
      trace,
      cards,
    });
    expect(a.citedIds).toEqual(["es-congelar-tarjeta"]);
    const none = answerExtractively({
      ...base,
      question: "¿cómo congelo la tarjeta?",
      query: "q",
      trace: undefined,
      cards,
    });
    expect(none.answer).toBe(REFUSAL_MESSAGES.en.no_retrieval);
  });
});

describe("sentenceUnits", () => {
  it("skips the title and heading lines, splits prose into sentences, keeps a list with its intro", () => {
    const card: Card = {
      id: "demo",
      locale: "en",
      title: "Demo card",
      tags: [],
      file: "demo.md",
      body: "## First\nOne sentence here. Another **bold** one!\n\nWhile frozen, we decline:\n\n- purchases\n- ATM withdrawals.\n\n## Second\n1. Open the app\n2. Tap Card",
    };
    const [entry] = cardLookup([card]).values();
    expect(sentenceUnits(entry!)).toEqual([
      "One sentence here.",
      "Another bold one!",
      "While frozen, we decline: purchases; ATM withdrawals.",
      "Open the app; Tap Card.",
    ]);
  });
});

describe("evidenceScore", () => {
  it("weighs rare terms more and is in [0, 1]", () => {
    expect(termWeight(cards, "en", "zzzunknown")).toBeGreaterThan(termWeight(cards, "en", analyze("card", "en")[0]!));
    const terms = new Set(analyze("freeze card", "en"));
    expect(evidenceScore(cards, "en", terms, ["card-freeze"])).toBe(1);
    expect(evidenceScore(cards, "en", new Set(), ["card-freeze"])).toBe(0);
    expect(evidenceScore(cards, "en", terms, [])).toBe(0);
  });

  it("property: always in [0, 1], and never lower with more retrieved cards", () => {
    const ids = ["card-freeze", "refund-timelines", "es-congelar-tarjeta", "pt-chaves-pix", "not-a-card"];
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 12 }), { maxLength: 8 }),
        fc.subarray(ids),
        fc.subarray(ids),
        (words, a, b) => {
          const terms = new Set(analyze(words.join(" "), "en"));
          const sa = evidenceScore(cards, "en", terms, a);
          const sab = evidenceScore(cards, "en", terms, [...a, ...b]);
          expect(sa).toBeGreaterThanOrEqual(0);
          expect(sa).toBeLessThanOrEqual(1);
          expect(sab).toBeGreaterThanOrEqual(sa);
        },
      ),
      { seed: 42, numRuns: 200 },
    );
  });
});
