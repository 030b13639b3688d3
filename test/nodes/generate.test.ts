/**
 * The generate node: model-reply parsing, the sources prompt, and the node's
 * two paths (extractive answerer by default; a scripted FAKE chat model).
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { beforeAll, describe, expect, it } from "vitest";
import type { KnowledgeBase } from "../../src/kb/types.js";
import { cardLookup } from "../../src/nodes/configuration.js";
import { NO_SOURCES_NOTE, formatSources, generate, parseModelAnswer } from "../../src/nodes/generate.js";
import { MINI_KB } from "../helpers/fixtures.js";
import { hybridFixture, RecordingRetrieverDouble } from "../graph/helpers.js";

let kb: KnowledgeBase;
beforeAll(async () => {
  kb = (await hybridFixture(MINI_KB)).kb;
});

describe("parseModelAnswer", () => {
  it("collects bracketed card ids in order of first appearance, chunk ids reduced to cards", () => {
    expect(
      parseModelAnswer(
        "Freeze it [card-freeze]. Refunds still arrive [refund-timelines, card-freeze] [refund-timelines#2].",
      ),
    ).toEqual({
      answer: "Freeze it [card-freeze]. Refunds still arrive [refund-timelines, card-freeze] [refund-timelines#2].",
      citedIds: ["card-freeze", "refund-timelines"],
      refused: false,
    });
  });

  it("ignores brackets that are not card ids, keeps ids it cannot verify (the evaluators score them)", () => {
    expect(parseModelAnswer("See [Note: Card] and [made-up-card].").citedIds).toEqual(["made-up-card"]);
    expect(parseModelAnswer("No citations here.").citedIds).toEqual([]);
  });

  it("detects the refusal marker and cites nothing on a refusal", () => {
    expect(parseModelAnswer("  refuse: I can't share that [card-freeze]")).toEqual({
      answer: "I can't share that [card-freeze]",
      citedIds: [],
      refused: true,
    });
    expect(parseModelAnswer("I won't REFUSE: this is an answer [card-freeze]").refused).toBe(false);
  });
});

describe("formatSources", () => {
  it("lists each retrieved card's top chunks under its id, in retrieval order", async () => {
    const trace = await new RecordingRetrieverDouble(["refund-timelines", "card-freeze", "ghost-card"]).retrieve("q");
    const text = formatSources(trace, cardLookup(kb));
    const iRefund = text.indexOf("[refund-timelines] How long refunds take: Card refunds");
    const iFreeze = text.indexOf("[card-freeze] Freeze or unfreeze your card: What freezing does");
    expect(iRefund).toBeGreaterThan(-1);
    expect(iFreeze).toBeGreaterThan(iRefund);
    expect(text).toContain("A merchant refund reaches your balance in 3 to 5 business days.");
    expect(text).toContain("[ghost-card]");
  });

  it("says so when no retrieval ran", () => {
    expect(formatSources(undefined, cardLookup(kb))).toBe(NO_SOURCES_NOTE);
  });
});

describe("generate node", () => {
  it("uses this turn's trace, answers extractively and appends an AIMessage", async () => {
    const t0 = await new RecordingRetrieverDouble(["refund-timelines"]).retrieve("q", { turn: 0 });
    const t1 = await new RecordingRetrieverDouble(["card-freeze"]).retrieve("q", { turn: 1 });
    const messages = [new HumanMessage("refunds?"), new AIMessage("..."), new HumanMessage("how do I freeze my card?")];
    const update = await generate(
      { messages, turn: 1, locale: "en", query: "how do I freeze my card?", retrieval: [t0, t1] },
      { configurable: { cards: kb } },
    );
    expect(update.refused).toBe(false);
    expect(update.citedIds).toEqual(["card-freeze"]);
    expect(update.messages).toHaveLength(1);
    expect(update.messages[0]!.text).toBe(update.answer);
    expect(Object.keys(update).sort()).toEqual(["answer", "citedIds", "messages", "refused"]);
  });

  it("declines when the retrieval of this turn is missing (an older turn's trace does not count)", async () => {
    const t0 = await new RecordingRetrieverDouble(["card-freeze"]).retrieve("q", { turn: 0 });
    const update = await generate(
      {
        messages: [new HumanMessage("a"), new HumanMessage("how do I freeze my card?")],
        turn: 1,
        locale: "pt-BR",
        retrieval: [t0],
      },
      { configurable: { cards: kb } },
    );
    expect(update.refused).toBe(true);
    expect(update.citedIds).toEqual([]);
    expect(update.answer).toMatch(/Nenhuma busca/);
  });

  it("with a FAKE scripted chat model: the model's reply, citations and refusal", async () => {
    const trace = await new RecordingRetrieverDouble(["card-freeze"]).retrieve("q", { turn: 0 });
    const model = new FakeListChatModel({ responses: ["Tap Freeze. [card-freeze]", "REFUSE: not in the sources"] });
    const state = {
      messages: [new HumanMessage("how do I freeze my card?")],
      turn: 0,
      locale: "en" as const,
      retrieval: [trace],
    };
    const a = await generate(state, { configurable: { cards: kb, model } });
    expect(a).toMatchObject({ answer: "Tap Freeze. [card-freeze]", citedIds: ["card-freeze"], refused: false });
    const b = await generate(state, { configurable: { cards: kb, model } });
    expect(b).toMatchObject({ answer: "not in the sources", citedIds: [], refused: true });
    expect(b.messages[0]!.text).toBe("not in the sources");
  });
});
