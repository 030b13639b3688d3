/**
 * Analyzer settings belong to the objects that analyse (issue 20 item 4): two
 * systems over two KBs with different `analyzers.json` for the same locale,
 * opened in one process, each rank with their own analyzers, and opening the
 * second changes nothing about the first — nor about the default profile.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chunkKnowledgeBase } from "../../src/kb/chunk.js";
import { loadKnowledgeBase } from "../../src/kb/cards.js";
import type { Locale } from "../../src/kb/types.js";
import { ensureConfiguration } from "../../src/nodes/configuration.js";
import { analyze, analyzerProfile, createAnalyzers, DEFAULT_ANALYZERS } from "../../src/retrieval/analyzer.js";
import { BM25Index } from "../../src/retrieval/bm25.js";
import { openRetriever, openSystem, type RetraceSystem } from "../../src/system.js";
import { copyKb, MINI_KB } from "../helpers/fixtures.js";

const en = "en" as Locale;
// Matches card-freeze ("Freezing blocks ... ATM withdrawals") only through stemming: blocked/blocks → block, withdrawal(s) → withdraw.
const STEM_ONLY_QUERY = "blocked withdrawal";

describe("two systems with different analyzers in one process", () => {
  let stemmedKb: { dir: string; cleanup: () => Promise<void> };
  let unstemmedKb: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    stemmedKb = await copyKb(MINI_KB);
    unstemmedKb = await copyKb(MINI_KB);
    await writeFile(path.join(unstemmedKb.dir, "analyzers.json"), JSON.stringify({ en: { stemmer: "none" } }));
  });
  afterAll(async () => {
    await stemmedKb?.cleanup();
    await unstemmedKb?.cleanup();
  });

  const bm25Ids = async (system: RetraceSystem) =>
    (await system.retriever!.retrieve(STEM_ONLY_QUERY, { k: 3, locale: en, mode: "bm25" })).retrievedIds;

  it("each ranks with its own KB's analyzers; opening the second leaves the first's results unchanged", async () => {
    const stemmed = await openSystem({ kbDir: stemmedKb.dir, casesFile: null, store: "memory", embedder: "builtin" });
    const before = await bm25Ids(stemmed);
    expect(before[0]).toBe("card-freeze");

    const unstemmed = await openSystem({
      kbDir: unstemmedKb.dir,
      casesFile: null,
      store: "memory",
      embedder: "builtin",
    });
    expect(unstemmed.analyzers.profile("en").stemmer).toBeNull();
    expect(unstemmed.retriever!.analyzers).toBe(unstemmed.analyzers);
    const other = await bm25Ids(unstemmed);
    expect(other).not.toContain("card-freeze");

    // The first system still stems, and ranks exactly as before the second was opened.
    expect(stemmed.analyzers.profile("en").stemmer).toBe("english");
    expect(await bm25Ids(stemmed)).toEqual(before);
    // And so does the default profile (what a component given no analyzers uses).
    expect(analyzerProfile("en").stemmer).toBe("english");
    expect(analyze("withdrawals", en)).toEqual(analyze("withdrawal", en));

    // A worker thread's retriever, reopened from the plain-data recipe, analyses as its system does.
    expect(unstemmed.retrieverRecipe!.analyzers).toEqual({ en: { stemmer: "none" } });
    expect(stemmed.retrieverRecipe!.analyzers).toEqual({});
    const reopened = await openRetriever(
      structuredClone({ ...unstemmed.retrieverRecipe!, dense: null }),
      unstemmed.chunks,
    );
    expect((await reopened.retrieve(STEM_ONLY_QUERY, { k: 3, locale: en, mode: "bm25" })).retrievedIds).toEqual(other);

    // The graph's answerer and follow-up detection take the retriever's analyzers when none are bound.
    expect(ensureConfiguration({ configurable: { retriever: unstemmed.retriever } }).analyzers).toBe(
      unstemmed.analyzers,
    );
    expect(ensureConfiguration({ configurable: { retriever: stemmed.retriever } }).analyzers).toBe(stemmed.analyzers);
    expect(
      ensureConfiguration({ configurable: { retriever: unstemmed.retriever, analyzers: DEFAULT_ANALYZERS } }).analyzers,
    ).toBe(DEFAULT_ANALYZERS);

    await stemmed.close();
    await unstemmed.close();
  });

  it("the LSA embedder is fitted with its system's analyzers: different vocabularies, each reproducible", async () => {
    const open = (dir: string) => openSystem({ kbDir: dir, casesFile: null, store: "memory", embedder: "lsa" });
    const a1 = await open(stemmedKb.dir);
    const b = await open(unstemmedKb.dir);
    const a2 = await open(stemmedKb.dir);
    expect(b.embedder!.id).not.toBe(a1.embedder!.id);
    expect(a2.embedder!.id).toBe(a1.embedder!.id);
    for (const s of [a1, b, a2]) await s.close();
  }, 60_000);
});

describe("BM25 indexes with their own analyzers", () => {
  it("stop words on and off for the same locale, side by side", async () => {
    const chunks = chunkKnowledgeBase(await loadKnowledgeBase(MINI_KB));
    const withStopWords = BM25Index.build(chunks);
    const withoutStopWords = BM25Index.build(chunks, undefined, createAnalyzers({ en: { stopWords: false } }));
    // "while the" is all stop words by default: no term, no hit.
    expect(withStopWords.search("while the", { topN: 3, locale: en })).toEqual([]);
    const hits = withoutStopWords.search("while the", { topN: 3, locale: en });
    expect(hits.length).toBeGreaterThan(0);
    // Building the second index changed nothing about the first.
    expect(withStopWords.analyzers).toBe(DEFAULT_ANALYZERS);
    expect(withStopWords.search("while the", { topN: 3, locale: en })).toEqual([]);
    expect(withoutStopWords.analyzers.profile("en").stopWords).toBe(false);
  });

  it("an analyzer set is fixed when built: changing the overrides object afterwards changes nothing", () => {
    const overrides: Record<string, { stemmer?: string }> = { en: { stemmer: "none" } };
    const set = createAnalyzers(overrides);
    overrides.en!.stemmer = "english";
    overrides.de = { stemmer: "none" };
    expect(set.profile("en").stemmer).toBeNull();
    expect(set.profile("de").stemmer).toBe("german");
    expect(Object.isFrozen(set.overrides)).toBe(true);
    expect(createAnalyzers({})).toBe(DEFAULT_ANALYZERS);
  });
});
