import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { Analyzer, analyze, foldAccents, tokenize } from "../../src/retrieval/analyzer.js";
import { LOCALES, type Locale } from "../../src/kb/types.js";

/** The single term of a one-word text (fails loudly if the word is a stop word or splits). */
function term(word: string, locale: Locale): string {
  const terms = analyze(word, locale);
  expect(terms, `analyze(${JSON.stringify(word)}, ${locale})`).toHaveLength(1);
  return terms[0]!;
}

describe("tokenize", () => {
  it("splits on anything but letters and digits, after NFKC and lowercasing", () => {
    expect(tokenize("Fees? (ATM) e-mail_address x2")).toEqual(["fees", "atm", "e", "mail", "address", "x2"]);
    // NFKC: full-width letters, ligatures and circled digits become plain ones.
    expect(tokenize("ＦＵＬＬ ﬁle ①")).toEqual(["full", "file", "1"]);
  });

  it("folds accents, including decomposed input", () => {
    expect(foldAccents("Límite cartão ÑANDÚ")).toBe("Limite cartao NANDU");
    expect(tokenize("cafe\u0301")).toEqual(["cafe"]);
  });
});

describe("analyze", () => {
  it("meets accented and unaccented spellings in Spanish and Portuguese", () => {
    expect(term("tarjeta", "es-419")).toBe(term("tarjetas", "es-419"));
    expect(term("límite", "es-419")).toBe(term("limite", "es-419"));
    expect(term("Límites", "es-419")).toBe(term("limite", "es-419"));
    expect(term("cancelación", "es-419")).toBe(term("cancelacion", "es-419"));
    expect(term("cancelación", "es-419")).toBe(term("cancelaciones", "es-419"));
    expect(term("cartão", "pt-BR")).toBe(term("cartao", "pt-BR"));
    expect(term("cartões", "pt-BR")).toBe(term("cartão", "pt-BR"));
    expect(term("cartoes", "pt-BR")).toBe(term("cartão", "pt-BR"));
    expect(term("transações", "pt-BR")).toBe(term("transacao", "pt-BR"));
    expect(term("cobrança", "pt-BR")).toBe(term("cobranca", "pt-BR"));
  });

  it("stems English inflections together", () => {
    const charge = term("charge", "en");
    expect(term("charges", "en")).toBe(charge);
    expect(term("charged", "en")).toBe(charge);
    expect(term("Charging", "en")).toBe(charge);
    expect(term("freezing", "en")).toBe(term("freeze", "en"));
    expect(term("refunds", "en")).toBe(term("refund", "en"));
  });

  it("drops stop words of each locale, accented or not", () => {
    expect(analyze("what is the fee for the card", "en")).toEqual([term("fee", "en"), term("card", "en")]);
    expect(analyze("el límite de la tarjeta", "es-419")).toEqual([term("límite", "es-419"), term("tarjeta", "es-419")]);
    expect(analyze("não sei o número do cartão", "pt-BR")).toEqual(analyze("nao sei numero cartao", "pt-BR"));
    expect(analyze("não", "pt-BR")).toEqual([]);
    expect(analyze("nao", "pt-BR")).toEqual([]);
    // Stop words are per locale: "con" is Spanish, not English.
    expect(analyze("con", "es-419")).toEqual([]);
    expect(analyze("con", "en")).toHaveLength(1);
  });

  it("never glues punctuation to a term", () => {
    expect(analyze("fees?", "en")).toEqual(["fee"]);
    expect(analyze("fees", "en")).toEqual(["fee"]);
    expect(analyze("¿tarjeta?", "es-419")).toEqual(analyze("tarjeta", "es-419"));
    expect(analyze("(cartão).", "pt-BR")).toEqual(analyze("cartão", "pt-BR"));
  });

  it("matches whole terms only, never substrings", () => {
    expect(term("cat", "en")).not.toBe(term("category", "en"));
    expect(analyze("category", "en")).not.toContain(term("cat", "en"));
  });

  it("keeps duplicates (term frequency) and numbers", () => {
    expect(analyze("card card 2FA 800", "en")).toEqual(["card", "card", "2fa", "800"]);
  });

  it("is the same function for any text: case, width and accents never change the terms", () => {
    const words = fc.constantFrom("Tarjeta", "límite", "COBRANÇA", "cartões", "Fees", "freezing", "NÚMERO", "déposito");
    fc.assert(
      fc.property(fc.array(words, { maxLength: 8 }), fc.constantFrom(...LOCALES), (ws, locale) => {
        const text = ws.join(" ");
        const variant = foldAccents(text).toUpperCase();
        expect(analyze(variant, locale)).toEqual(analyze(text, locale));
      }),
      { seed: 42, numRuns: 200 },
    );
  });

  it("rejects a tag that is not a canonical BCP-47 locale", () => {
    expect(() => new Analyzer("fr_FR" as Locale)).toThrow(InvalidArgumentError);
    expect(() => analyze("x", "PT-br" as Locale)).toThrow(
      /Expected `locale` to be a canonical BCP-47 language tag .*, got "PT-br"/,
    );
  });
});
