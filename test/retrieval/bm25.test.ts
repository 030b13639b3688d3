import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import type { Locale } from "../../src/kb/types.js";
import { analyze } from "../../src/retrieval/analyzer.js";
import { BM25Index, type BM25Document } from "../../src/retrieval/bm25.js";

const doc = (id: string, text: string, locale: Locale = "en"): BM25Document => ({
  id,
  parentId: id.split("#")[0]!,
  locale,
  text,
});

/*
 * Hand-checked corpus (en). Analysed terms: apple → "appl", banana → "banana", cherry → "cherri".
 *   z#1 "apple banana"        |D| = 2
 *   a#1 "apple apple cherry"  |D| = 3
 *   m#1 "banana"              |D| = 1
 * N = 3, avgdl = 6 / 3 = 2.
 * idf(apple)  = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln(1.6)   = 0.470003629
 * idf(banana) = ln(1.6)                                        = 0.470003629
 * idf(cherry) = ln(1 + (3 - 1 + 0.5) / (1 + 0.5)) = ln(8 / 3) = 0.980829253
 */
const CORPUS = [doc("z#1", "apple banana"), doc("a#1", "apple apple cherry"), doc("m#1", "banana")];
const LN16 = Math.log(1.6);
const LN83 = Math.log(8 / 3);

describe("BM25Index: scores by hand (k1 = 1.2, b = 0.75)", () => {
  const index = BM25Index.build(CORPUS);

  it("scores a one-term query", () => {
    // z#1: tf 1, norm = 1.2 · (0.25 + 0.75 · 2/2) = 1.2   → ln1.6 · 1 · 2.2 / (1 + 1.2)  = ln1.6 · 1         = 0.470004
    // a#1: tf 2, norm = 1.2 · (0.25 + 0.75 · 3/2) = 1.65  → ln1.6 · 2 · 2.2 / (2 + 1.65) = ln1.6 · 4.4/3.65  = 0.566580
    const hits = index.search("apple", { topN: 10 });
    expect(hits.map((h) => [h.id, h.rank])).toEqual([
      ["a#1", 1],
      ["z#1", 2],
    ]);
    expect(hits[0]!.score).toBeCloseTo((LN16 * 4.4) / 3.65, 12);
    expect(hits[0]!.score).toBeCloseTo(0.56658, 5);
    expect(hits[1]!.score).toBeCloseTo(LN16, 12);
    expect(hits[1]!.parentId).toBe("z");
  });

  it("sums over query terms", () => {
    // a#1: cherry tf 1, norm 1.65 → ln(8/3) · 2.2 / 2.65 = 0.814273
    // m#1: banana tf 1, norm = 1.2 · (0.25 + 0.75 · 1/2) = 0.75 → ln1.6 · 2.2 / 1.75 = 0.590862
    // z#1: banana tf 1, norm 1.2 → ln1.6 = 0.470004
    const hits = index.search("Banana? cherry!", { topN: 10 });
    expect(hits.map((h) => h.id)).toEqual(["a#1", "m#1", "z#1"]);
    expect(hits.map((h) => h.score)).toEqual([
      expect.closeTo((LN83 * 2.2) / 2.65, 12),
      expect.closeTo((LN16 * 2.2) / 1.75, 12),
      expect.closeTo(LN16, 12),
    ]);
    expect(hits.map((h) => h.rank)).toEqual([1, 2, 3]);
  });

  it("counts a repeated query term twice", () => {
    const once = index.search("cherry", { topN: 1 })[0]!.score;
    expect(index.search("cherry cherries", { topN: 1 })[0]!.score).toBeCloseTo(2 * once, 12);
  });

  it("cuts at topN and returns only documents sharing a term", () => {
    expect(index.search("apple banana cherry", { topN: 2 }).map((h) => h.rank)).toEqual([1, 2]);
    expect(index.search("durian", { topN: 10 })).toEqual([]);
    expect(index.search("the of and", { topN: 10 })).toEqual([]); // stop words only
    expect(index.search("", { topN: 10 })).toEqual([]);
  });

  it("never matches substrings", () => {
    const idx = BM25Index.build([doc("c#1", "category categories"), doc("d#1", "a cat")]);
    expect(idx.search("cat", { topN: 10 }).map((h) => h.id)).toEqual(["d#1"]);
    expect(idx.search("categ", { topN: 10 })).toEqual([]);
  });

  it("reports its size and stats", () => {
    expect(index.size).toBe(3);
    expect(index.documentFrequency("appl", "en")).toBe(2);
    expect(index.documentFrequency("appl", "es-419")).toBe(0);
    const stats = index.stats();
    expect(stats.partitions.en).toEqual({ documents: 3, terms: 3, postings: 5, tokens: 6, avgDocLength: 2 });
    expect(stats.approxBytes).toBeGreaterThan(0);
  });
});

describe("BM25Index: parameters", () => {
  it("respects an explicit k1 = 0 (tf ignored: every matching document scores idf)", () => {
    // k1 = 0: tf · 1 / (tf + 0) = 1, so z#1 and a#1 both score ln1.6 and tie; ties go by id ascending.
    const hits = BM25Index.build(CORPUS, { k1: 0 }).search("apple", { topN: 10 });
    expect(hits.map((h) => h.id)).toEqual(["a#1", "z#1"]);
    expect(hits[0]!.score).toBeCloseTo(LN16, 12);
    expect(hits[1]!.score).toBe(hits[0]!.score);
  });

  it("respects an explicit b = 0 (no length normalisation)", () => {
    // norm = k1 = 1.2 for every document: a#1 → ln1.6 · 2 · 2.2 / 3.2 ; m#1 → ln1.6 · 2.2 / 2.2.
    const idx = BM25Index.build(CORPUS, { b: 0 });
    expect(idx.search("apple", { topN: 1 })[0]!.score).toBeCloseTo((LN16 * 4.4) / 3.2, 12);
    expect(idx.search("banana", { topN: 3 }).map((h) => h.score)).toEqual([
      expect.closeTo(LN16, 12),
      expect.closeTo(LN16, 12),
    ]);
    expect(idx.b).toBe(0);
  });

  it("keeps idf positive for a term in every document", () => {
    // df = N = 2: ln(1 + 0.5 / 2.5) = ln 1.2 > 0.
    const hits = BM25Index.build([doc("a#1", "card"), doc("b#1", "card")], { k1: 0 }).search("card", { topN: 5 });
    expect(hits.map((h) => h.score)).toEqual([expect.closeTo(Math.log(1.2), 12), expect.closeTo(Math.log(1.2), 12)]);
  });

  it("rejects bad parameters, options and corpora", () => {
    expect(() => BM25Index.build(CORPUS, { k1: -1 })).toThrow(InvalidArgumentError);
    expect(() => BM25Index.build(CORPUS, { k1: Number.NaN })).toThrow(/Expected `k1`/);
    expect(() => BM25Index.build(CORPUS, { b: 1.5 })).toThrow("Expected `b` to be a number in [0, 1], got 1.5");
    expect(() => BM25Index.build([doc("a#1", "x"), doc("a#1", "y")])).toThrow(/unique ids, got "a#1"/);
    expect(() => BM25Index.build([doc("a#1", "x", "fr_FR" as Locale)])).toThrow(InvalidArgumentError);
    const idx = BM25Index.build(CORPUS);
    expect(() => idx.search("apple", { topN: 0 })).toThrow("Expected `topN` to be a positive integer, got 0");
    expect(() => idx.search("apple", { topN: 1.5 })).toThrow(InvalidArgumentError);
    expect(() => idx.search("apple", { topN: 3, locale: "de_DE" as Locale })).toThrow(InvalidArgumentError);
    // A valid locale with no documents has nothing to return.
    expect(idx.search("apple", { topN: 3, locale: "de" as Locale })).toEqual([]);
  });
});

describe("BM25Index: locale partitions", () => {
  const idx = BM25Index.build([
    doc("en-card#1", "Freeze your card"),
    doc("es-card#1", "Congelar tu tarjeta (card)", "es-419"),
    doc("pt-card#1", "Bloquear seu cartão", "pt-BR"),
    doc("es-limits#1", "Límites de la cuenta", "es-419"),
  ]);

  it("searches only the query's locale, analysed with its analyzer", () => {
    expect(idx.search("card", { topN: 10, locale: "en" }).map((h) => h.id)).toEqual(["en-card#1"]);
    expect(idx.search("card", { topN: 10, locale: "es-419" }).map((h) => h.id)).toEqual(["es-card#1"]);
    expect(idx.search("tarjetas", { topN: 10, locale: "es-419" }).map((h) => h.id)).toEqual(["es-card#1"]);
    expect(idx.search("tarjetas", { topN: 10, locale: "en" })).toEqual([]);
    expect(idx.search("cartoes", { topN: 10, locale: "pt-BR" }).map((h) => h.id)).toEqual(["pt-card#1"]);
    expect(idx.search("limite", { topN: 10, locale: "es-419" }).map((h) => h.id)).toEqual(["es-limits#1"]);
  });

  it("uses the partition's own statistics", () => {
    // en partition: N = 1, df(card) = 1 → idf = ln(1 + 0.5/1.5) = ln(4/3); |D| = avgdl so the tf part is 1.
    expect(idx.search("card", { topN: 1, locale: "en" })[0]!.score).toBeCloseTo(Math.log(4 / 3), 12);
    // es partition: N = 2, df(card) = 1 → idf = ln(1 + 1.5/1.5) = ln 2.
    // es-card#1 has 3 terms (congel, tarjet, card; "tu" is a stop word), es-limits#1 has 2 → avgdl 2.5.
    // norm = 1.2 · (0.25 + 0.75 · 3 / 2.5) = 1.38 → ln2 · 2.2 / 2.38
    expect(idx.search("card", { topN: 1, locale: "es-419" })[0]!.score).toBeCloseTo((Math.log(2) * 2.2) / 2.38, 12);
  });

  it("without a locale, searches every partition and merges by score", () => {
    const hits = idx.search("card", { topN: 10 });
    expect(hits.map((h) => h.id)).toEqual(["es-card#1", "en-card#1"]); // ln2·2.2/2.38 = 0.6407 > ln(4/3) = 0.2877
    expect(hits.map((h) => h.rank)).toEqual([1, 2]);
    expect(idx.search("card", { topN: 1 }).map((h) => h.id)).toEqual(["es-card#1"]);
    expect(idx.locales).toEqual(["en", "es-419", "pt-BR"]);
  });

  it("returns nothing for a locale with no documents", () => {
    const enOnly = BM25Index.build([doc("a#1", "card")]);
    expect(enOnly.search("card", { topN: 5, locale: "pt-BR" })).toEqual([]);
  });
});

/** Reference BM25 straight from the formula: a full scan, no index. */
function referenceSearch(docs: BM25Document[], query: string, locale: Locale, topN: number, k1: number, b: number) {
  const part = docs.filter((d) => d.locale === locale).map((d) => ({ d, terms: analyze(d.text, locale) }));
  const n = part.length;
  const avgdl = part.reduce((s, p) => s + p.terms.length, 0) / n;
  const q = analyze(query, locale);
  const scored = part.map(({ d, terms }) => {
    let score = 0;
    for (const t of q) {
      const tf = terms.filter((x) => x === t).length;
      if (tf === 0) continue;
      const df = part.filter((p) => p.terms.includes(t)).length;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      score += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * terms.length) / avgdl));
    }
    return { id: d.id, score };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
    .slice(0, topN);
}

describe("BM25Index agrees with a full-scan reference", () => {
  it("on random corpora, queries and parameters", () => {
    const word = fc.constantFrom(
      "card",
      "cards",
      "fee",
      "fees",
      "refund",
      "charged",
      "charge",
      "limit",
      "the",
      "atm",
      "abroad",
      "freeze",
      "pin",
    );
    const text = fc.array(word, { minLength: 0, maxLength: 12 }).map((ws) => ws.join(" "));
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.stringMatching(/^[a-e]{1,3}$/), text), {
          minLength: 1,
          maxLength: 12,
          selector: (t) => t[0],
        }),
        text,
        fc.integer({ min: 1, max: 15 }),
        fc.constantFrom(0, 0.5, 1.2, 2),
        fc.constantFrom(0, 0.3, 0.75, 1),
        (rows, query, topN, k1, b) => {
          const docs = rows.map(([id, t]) => doc(`${id}#1`, t));
          const got = BM25Index.build(docs, { k1, b }).search(query, { topN, locale: "en" });
          const want = referenceSearch(docs, query, "en", topN, k1, b);
          expect(got.map((h) => h.id)).toEqual(want.map((w) => w.id));
          got.forEach((h, i) => {
            expect(h.score).toBeCloseTo(want[i]!.score, 9);
            expect(h.rank).toBe(i + 1);
          });
        },
      ),
      { seed: 42, numRuns: 200 },
    );
  });
});
