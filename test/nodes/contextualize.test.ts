/**
 * The contextualizer: follow-up detection per locale, the deterministic query
 * expansion, the node's turn index, and the chat-model rewrite path.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import type { Locale } from "../../src/kb/types.js";
import {
  MAX_CARRIED_CHARS,
  contextualize,
  contextualizeQuery,
  followUpReason,
  isFollowUp,
} from "../../src/nodes/contextualize.js";

const FOLLOW_UPS: [Locale, string, "opener" | "reference" | "short"][] = [
  ["en", "and how long does that take?", "opener"],
  ["en", "ok, and what about the fee?", "opener"],
  ["en", "what if I'm abroad when I need a new card?", "opener"],
  ["en", "also can I keep using my old card number after a replacement arrives", "opener"],
  ["en", "can I cancel it?", "reference"],
  ["en", "should I just freeze those cards instead?", "reference"],
  ["en", "how fast can I get the plastic one?", "reference"],
  ["en", "fees?", "short"],
  ["en", "what do I write on the back?", "short"],
  ["es-419", "¿y cuánto tarda?", "opener"],
  ["es-419", "¿Y si lo saco estando de viaje en Madrid?", "opener"],
  ["es-419", "Bueno, ¿y no hay forma de pausarla?", "opener"],
  ["es-419", "¿O sea que ya lo perdí?", "opener"],
  ["es-419", "¿Cuánto me cobran por eso cuando viajo a Europa?", "reference"],
  ["es-419", "¿Hasta cuándo tengo chance de reclamarlo?", "reference"],
  ["es-419", "¿tarjeta nueva?", "short"],
  ["pt-BR", "e quanto custa?", "opener"],
  ["pt-BR", "tá, e se eu perder o cartão de novo amanhã cedo?", "opener"],
  ["pt-BR", "preciso pagar alguma tarifa por isso no fim do mês?", "reference"],
  ["pt-BR", "consigo cancelá-lo pelo aplicativo ainda hoje?", "reference"],
  ["pt-BR", "cobra juros?", "short"],
];

const SELF_CONTAINED: [Locale, string][] = [
  ["en", "how do I freeze my Pavo debit card from the app?"],
  ["en", "my wallet got stolen on the subway, what do I do about my Pavo card"],
  ["en", "different thing: I paid a stranger for concert tickets and he ghosted me, can I do a chargeback?"],
  ["es-419", "¿Cómo congelo mi tarjeta desde la aplicación del celular?"],
  ["es-419", "Por cierto, ¿ustedes tienen tarjeta de crédito? Prefiero una de esas"],
  ["pt-BR", "como cadastro meu celular como chave pix no aplicativo?"],
  ["pt-BR", "outra coisa: como pago um boleto vencido pelo aplicativo?"],
];

describe("follow-up detection", () => {
  it.each(FOLLOW_UPS)("%s %j is a follow-up (%s)", (locale, text, reason) => {
    expect(followUpReason(text, locale)).toBe(reason);
    expect(isFollowUp(text, locale)).toBe(true);
  });

  it.each(SELF_CONTAINED)("%s %j is self-contained", (locale, text) => {
    expect(followUpReason(text, locale)).toBeNull();
  });

  it("uses every locale's markers when the locale is unknown", () => {
    expect(isFollowUp("¿y cuánto tarda en llegar el reembolso a mi cuenta?")).toBe(true);
    expect(isFollowUp("e quanto custa pra mandar um pix de madrugada?")).toBe(true);
    expect(isFollowUp("outra coisa: isso vale para boletos?")).toBe(false);
  });

  it('matches whole words only ("itinerary" is not "it", "thats" is not a marker)', () => {
    expect(followUpReason("please explain the itinerary charges on foreign purchases", "en")).toBeNull();
    expect(followUpReason("explain foreign transaction charges for italian purchases", "en")).toBeNull();
  });
});

describe("contextualizeQuery", () => {
  it("expands a follow-up with the previous query and keeps a self-contained question as is", () => {
    expect(contextualizeQuery("and how long does that take?", "how do I freeze my card?", "en")).toEqual({
      query: "and how long does that take? how do I freeze my card?",
      followUp: "opener",
    });
    expect(contextualizeQuery("¿y cuánto tarda?", "¿Cómo congelo mi tarjeta?", "es-419").query).toBe(
      "¿y cuánto tarda? ¿Cómo congelo mi tarjeta?",
    );
    expect(contextualizeQuery("e quanto custa?", "como faço um saque no caixa 24h?", "pt-BR").query).toBe(
      "e quanto custa? como faço um saque no caixa 24h?",
    );
    const self = "how do I freeze my Pavo debit card from the app?";
    expect(contextualizeQuery(self, "what are the ATM fees?", "en")).toEqual({ query: self, followUp: null });
  });

  it("never expands the first turn", () => {
    expect(contextualizeQuery("and that?", undefined, "en")).toEqual({ query: "and that?", followUp: null });
    expect(contextualizeQuery("and that?", "   ", "en")).toEqual({ query: "and that?", followUp: null });
  });

  it("bounds the carried context: the query never exceeds the message plus MAX_CARRIED_CHARS + 1", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 80 }),
        fc.array(fc.string({ maxLength: 60 }), { maxLength: 40 }),
        (extra, words) => {
          const previous = words.join(" ");
          const text = `and ${extra}`.trim();
          const { query } = contextualizeQuery(text, previous, "en");
          expect(query.startsWith(text)).toBe(true);
          expect(query.length).toBeLessThanOrEqual(text.length + 1 + MAX_CARRIED_CHARS);
        },
      ),
      { seed: 42, numRuns: 200 },
    );
  });
});

describe("contextualize node", () => {
  it("sets the turn index from the human messages and expands from state.query", async () => {
    const messages = [
      new HumanMessage("how do I freeze my card?"),
      new AIMessage("Tap Freeze."),
      new HumanMessage("and does it cost anything?"),
    ];
    const update = await contextualize({ messages, locale: "en", query: "how do I freeze my card?" }, {});
    expect(update).toEqual({ turn: 1, query: "and does it cost anything? how do I freeze my card?" });
  });

  it("rebuilds the carried subject from the conversation when no query is in state (a fresh thread fed it: run.replay recorded)", async () => {
    const messages = [
      new HumanMessage("how do I freeze my card?"),
      new AIMessage("Tap Freeze."),
      new HumanMessage("and does it cost anything?"),
    ];
    // The assistant's reply first (what a follow-up most likely refers to), then the previous query.
    expect((await contextualize({ messages, locale: "en" }, {})).query).toBe(
      "and does it cost anything? Tap Freeze. how do I freeze my card?",
    );
    // Over several turns, as the rules would have chained them turn by turn: a self-contained question resets the subject.
    const longer = [
      new HumanMessage("how long do refunds take?"),
      new AIMessage("Three to five days."),
      new HumanMessage("why was my card declined at the shop?"),
      new AIMessage("The Acme Hotel declined it."),
      new HumanMessage("and their phone number?"),
    ];
    expect((await contextualize({ messages: longer, locale: "en" }, {})).query).toBe(
      "and their phone number? The Acme Hotel declined it. why was my card declined at the shop?",
    );
  });

  it("rejects a conversation without a human message", async () => {
    await expect(contextualize({ messages: [new AIMessage("hello")] }, {})).rejects.toThrow(InvalidArgumentError);
    await expect(contextualize({ messages: [new HumanMessage("  ")] }, {})).rejects.toThrow(InvalidArgumentError);
  });

  it("asks a configured chat model to rewrite follow-ups (FAKE scripted model), only when there is history", async () => {
    const model = new FakeListChatModel({ responses: ['"¿Cuánto tarda congelar la tarjeta?"'] });
    const first = await contextualize(
      { messages: [new HumanMessage("¿Cómo congelo mi tarjeta?")], locale: "es-419" },
      { configurable: { model } },
    );
    expect(first).toEqual({ turn: 0, query: "¿Cómo congelo mi tarjeta?" });
    const messages = [
      new HumanMessage("¿Cómo congelo mi tarjeta?"),
      new AIMessage("Toca Congelar."),
      new HumanMessage("¿y cuánto tarda?"),
    ];
    const second = await contextualize(
      { messages, locale: "es-419", query: "¿Cómo congelo mi tarjeta?" },
      { configurable: { model } },
    );
    expect(second).toEqual({ turn: 1, query: "¿Cuánto tarda congelar la tarjeta?" });
  });

  it("keeps the rules when the model rewrite is switched off or the model replies nothing", async () => {
    const messages = [
      new HumanMessage("how do I freeze my card?"),
      new AIMessage("Tap Freeze."),
      new HumanMessage("and the fee?"),
    ];
    const state = { messages, locale: "en" as const, query: "how do I freeze my card?" };
    const never = new FakeListChatModel({ responses: ["SHOULD NOT BE USED"] });
    expect((await contextualize(state, { configurable: { model: never, rewriteWithModel: false } })).query).toBe(
      "and the fee? how do I freeze my card?",
    );
    const empty = new FakeListChatModel({ responses: ["   "] });
    expect((await contextualize(state, { configurable: { model: empty } })).query).toBe(
      "and the fee? how do I freeze my card?",
    );
  });
});
