/**
 * Any BCP-47 locale: a KB with cards/de/ and cards/ja/ passes `retrace check`,
 * chunks and indexes, and BM25 ranks the right card first for a German query
 * with an inflected form (Karten → Karte, via the German Snowball stemmer) and
 * for Japanese queries (Intl.Segmenter words, non-zero scores).
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadKnowledgeBase } from "../../src/kb/cards.js";
import { loadCases } from "../../src/kb/cases.js";
import { chunkKnowledgeBase } from "../../src/kb/chunk.js";
import { canonicalLocale, isLocale, tableLocaleFor, toLocale, type Locale } from "../../src/kb/types.js";
import { analyze, analyzerProfile, createAnalyzers, readAnalyzerConfigFile, validateAnalyzerConfig } from "../../src/retrieval/analyzer.js";
import { BM25Index } from "../../src/retrieval/bm25.js";
import { InMemoryDenseIndex } from "../../src/retrieval/dense.js";
import { HashingEmbedder } from "../../src/retrieval/embedders/builtin.js";
import { DataValidationError } from "../../src/errors.js";
import { answerExtractively } from "../../src/nodes/answerer.js";
import { runCli, ROOT } from "../helpers/cli.js";

const KB = path.join(ROOT, "test", "fixtures", "kb-de-ja");

describe("BCP-47 locales", () => {
  it("validates and canonicalises tags", () => {
    expect(toLocale("zh-Hans")).toBe("zh-Hans");
    expect(isLocale("fr-CA")).toBe(true);
    expect(isLocale("pt-br")).toBe(false);
    expect(canonicalLocale("pt-br")).toBe("pt-BR");
    expect(() => toLocale("pt_BR")).toThrow(/BCP-47/);
    expect(() => toLocale("EN")).toThrow(/canonical BCP-47 form "en"/);
    expect(tableLocaleFor("es-MX")).toBe("es-419");
    expect(tableLocaleFor("de")).toBeNull();
  });

  it("chooses the analyzer by language subtag: Snowball when shipped, Intl.Segmenter otherwise", () => {
    expect(analyzerProfile("de")).toMatchObject({ stemmer: "german", stopList: "deu", tokenizer: "regex" });
    expect(analyzerProfile("fr-CA")).toMatchObject({ stemmer: "french", tokenizer: "regex" });
    expect(analyzerProfile("ja")).toMatchObject({ stemmer: null, stopList: "jpn", tokenizer: "segmenter" });
    expect(analyzerProfile("zh-Hans")).toMatchObject({ stemmer: null, tokenizer: "segmenter" });
    expect(analyze("Karten", "de" as Locale)).toEqual(analyze("Karte", "de" as Locale));
    // Japanese is segmented into words (a regex would keep the whole run as one token).
    expect(analyze("銀行口座への振込", "ja" as Locale).length).toBeGreaterThan(1);
  });

  it("a de + ja KB passes check, chunks, indexes, and BM25 puts the right card first", async () => {
    const kb = await loadKnowledgeBase(KB);
    const cases = await loadCases(path.join(KB, "eval", "cases.jsonl"), kb);
    expect(cases).toHaveLength(3);
    const chunks = chunkKnowledgeBase(kb);
    expect(new Set(chunks.map((c) => c.locale))).toEqual(new Set(["de", "ja"]));
    const bm25 = BM25Index.build(chunks);
    const first = (q: string, locale: string) => bm25.search(q, { topN: 3, locale: locale as Locale })[0];
    // "sperre" and "Karten" are inflected forms of the card's "sperren" / "Karte".
    expect(first("Wie sperre ich meine Karten?", "de")?.id.split("#")[0]).toBe("karte-sperren");
    expect(first("wie lange dauern Überweisungen?", "de")?.id.split("#")[0]).toBe("ueberweisungen");
    const ja = first("カードを停止するにはどうすればいいですか", "ja");
    expect(ja?.id.split("#")[0]).toBe("kado-teishi");
    expect(ja?.score).toBeGreaterThan(0);
    expect(first("銀行への振込は何日かかりますか", "ja")?.id.split("#")[0]).toBe("furikomi");
    // The dense side ingests too (built-in embedder, in-memory index).
    const dense = await InMemoryDenseIndex.fromChunks(chunks, new HashingEmbedder());
    expect((await dense.search(await new HashingEmbedder().embedQuery("振込"), { topN: 1, locale: "ja" as Locale }))[0]?.parentId).toBe("furikomi");

    const r = await runCli(["check", "--kb", KB]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("6 cards (de 3, ja 3)");
    expect(r.stdout).not.toMatch(/\ben\b|es-419|pt-BR/);
    expect(r.stdout).toContain("generic rules (no follow-up, policy or refusal tables) for de, ja");
  }, 120_000);

  it("the built-in answerer refuses with generic (English) messages in a locale without tables", () => {
    const a = answerExtractively({ question: "x", query: "x", locale: "ja" as Locale, cards: new Map(), minEvidence: 1, maxSentences: 2 } as never);
    expect(a.refused).toBe(true);
    expect(a.answer).toMatch(/[A-Za-z]/);
  });

  it("per-locale overrides switch stop words off and choose the stemmer; bad config names the field", () => {
    const overridden = createAnalyzers({ de: { stopWords: false, stemmer: "none" } });
    expect(overridden.analyze("die Karten", "de" as Locale)).toEqual(["die", "karten"]);
    expect(overridden.profile("de-AT")).toMatchObject({ stemmer: null, stopWords: false });
    expect(analyzerProfile("de", { de: { stemmer: "none" } }).stemmer).toBeNull();
    // The default profile is untouched by any set built with overrides.
    expect(analyze("die Karten", "de" as Locale)).toEqual(["kart"]);
    expect(analyzerProfile("de").stemmer).toBe("german");
    const { issues } = validateAnalyzerConfig({ de: { stemmer: "klingon", stopwords: true } }, "kb/analyzers.json");
    expect(issues.map((i) => i.field)).toEqual(["de.stemmer", "de.stopwords"]);
    expect(() => createAnalyzers({ de: { stemmer: "klingon" } })).toThrow(DataValidationError);
    expect(() => readAnalyzerConfigFile(path.join(KB, "eval", "cases.jsonl"))).toThrow(DataValidationError);
    expect(readAnalyzerConfigFile(path.join(KB, "no-such-file.json"))).toBeNull();
  });
});
