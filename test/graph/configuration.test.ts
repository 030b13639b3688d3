/**
 * Configuration: documented defaults, validation with typed errors, the card
 * lookup, and what the graph factory binds.
 */
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import {
  CONFIG_DEFAULTS,
  cardLookup,
  configurableFor,
  ensureConfiguration,
  toCardLookup,
} from "../../src/graph/configuration.js";
import type { KnowledgeBase } from "../../src/kb/types.js";
import { DEFAULT_ANALYZERS } from "../../src/retrieval/analyzer.js";
import { HYBRID_DEFAULTS } from "../../src/retrieval/hybrid.js";
import { MINI_KB } from "../helpers/fixtures.js";
import { hybridFixture, RecordingRetrieverDouble } from "./helpers.js";

let kb: KnowledgeBase;
beforeAll(async () => {
  kb = (await hybridFixture(MINI_KB)).kb;
});

describe("ensureConfiguration", () => {
  it("treats null as unset and lets LangGraph's own keys pass through (ConfigurableSchema)", () => {
    const c = ensureConfiguration({
      configurable: { k: null, minEvidence: null, thread_id: null, checkpoint_ns: "x", __pregel_extra: 1 },
    });
    expect(c).toEqual({
      minEvidence: 0.15,
      maxSentences: 3,
      rewriteWithModel: true,
      retriever: null,
      cards: new Map(),
      model: null,
      analyzers: DEFAULT_ANALYZERS,
      threadId: null,
    });
  });

  it("applies the documented defaults; retrieval keys stay unset so the retriever's defaults apply", () => {
    const c = ensureConfiguration({});
    expect(c).toEqual({
      minEvidence: 0.15,
      maxSentences: 3,
      rewriteWithModel: true,
      retriever: null,
      cards: new Map(),
      model: null,
      analyzers: DEFAULT_ANALYZERS,
      threadId: null,
    });
    expect(ensureConfiguration(undefined).minEvidence).toBe(CONFIG_DEFAULTS.minEvidence);
    // The documented retrieval defaults (the configuration table) are what HybridRetriever applies.
    expect(CONFIG_DEFAULTS).toMatchObject({ k: 5, denseK: 20, bm25K: 20, mode: "hybrid", rerank: false });
    expect(HYBRID_DEFAULTS).toMatchObject({ k: 5, denseK: 20, bm25K: 20, mode: "hybrid", rerank: false });
  });

  it("reads set keys, explicit zero-like values included, and the thread id", () => {
    const retriever = new RecordingRetrieverDouble([]);
    const model = new FakeListChatModel({ responses: ["x"] });
    const c = ensureConfiguration({
      configurable: {
        k: 3,
        denseK: 7,
        bm25K: 9,
        mode: "dense",
        rerank: false,
        minEvidence: 0,
        maxSentences: 1,
        rewriteWithModel: false,
        retriever,
        model,
        cards: kb,
        thread_id: "abc",
      },
    });
    expect(c).toMatchObject({
      k: 3,
      denseK: 7,
      bm25K: 9,
      mode: "dense",
      rerank: false,
      minEvidence: 0,
      maxSentences: 1,
      rewriteWithModel: false,
      threadId: "abc",
    });
    expect(c.retriever).toBe(retriever);
    expect(c.model).toBe(model);
    expect([...c.cards.keys()].sort()).toEqual([
      "card-freeze",
      "es-congelar-tarjeta",
      "pt-chaves-pix",
      "refund-timelines",
    ]);
    expect(ensureConfiguration({ configurable: { thread_id: 7 } }).threadId).toBe("7");
  });

  it.each([
    [{ k: 0 }, "Expected `k` to be a positive integer, got 0"],
    [{ denseK: 2.5 }, "Expected `denseK` to be a positive integer, got 2.5"],
    [{ bm25K: "20" }, 'Expected `bm25K` to be a positive integer, got "20"'],
    [{ mode: "sparse" }, 'Expected `mode` to be one of hybrid, dense, bm25, got "sparse"'],
    [{ rerank: "yes" }, 'Expected `rerank` to be a boolean, got "yes"'],
    [{ minEvidence: 1.5 }, "Expected `minEvidence` to be a number in [0, 1], got 1.5"],
    [{ maxSentences: 11 }, "Expected `maxSentences` to be an integer from 1 to 10, got 11"],
    [{ maxSentences: 0 }, "Expected `maxSentences` to be an integer from 1 to 10, got 0"],
    [{ minEvidence: -0.5 }, "Expected `minEvidence` to be a number in [0, 1], got -0.5"],
    [
      { retriever: { search: () => [] } },
      "Expected `retriever` to be an object with a retrieve(query, options) method",
    ],
    [{ model: "gpt" }, "Expected `model` to be a chat model"],
    [
      { analyzers: { en: { stemmer: "none" } } },
      "Expected `analyzers` to be an analyzer set (createAnalyzers(overrides)",
    ],
    [{ cards: 42 }, "Expected `cards` to be a card lookup (Map), a KnowledgeBase or an array of cards, got 42"],
    [{ thread_id: {} }, "Expected `thread_id` to be a string"],
  ])("rejects %j", (configurable, message) => {
    expect(() => ensureConfiguration({ configurable })).toThrow(InvalidArgumentError);
    expect(() => ensureConfiguration({ configurable })).toThrow(message);
  });
});

describe("card lookup", () => {
  it("is built from a KnowledgeBase or a card array, memoised per source, and validated when given as a Map", () => {
    const a = toCardLookup(kb);
    expect(toCardLookup(kb)).toBe(a);
    const entry = a.get("refund-timelines")!;
    expect(entry.card.title).toBe("How long refunds take");
    expect(entry.chunks.map((c) => c.id)).toEqual(["refund-timelines#1", "refund-timelines#2"]);
    expect([...cardLookup(kb.cards).keys()]).toEqual([...a.keys()]);
    expect(toCardLookup(a)).toBe(a);
    const bad = new Map([["x", { card: { id: "y" }, chunks: [] }]]);
    expect(() => toCardLookup(bad)).toThrow(
      'Expected `cards["x"]` to be a { card, chunks } entry keyed by its card id',
    );
  });
});

describe("configurableFor", () => {
  it("binds the dependencies and only the defaults that were given", () => {
    const retriever = new RecordingRetrieverDouble([]);
    const c = configurableFor({ store: retriever, cards: kb, defaults: { k: 4 } });
    expect(c.retriever).toBe(retriever);
    expect(c.k).toBe(4);
    expect("denseK" in c).toBe(false);
    expect("model" in c).toBe(false);
    expect(c.minEvidence).toBe(0.15);
    const storeLess = configurableFor({ store: null, cards: kb });
    expect("retriever" in storeLess).toBe(false);
  });

  it("rejects a missing store or cards at build time", () => {
    expect(() => configurableFor({ store: undefined, cards: kb })).toThrow(
      "Expected `store` to be a Retriever, or null for the store-less graph",
    );
    expect(() => configurableFor({ store: null, cards: null })).toThrow(InvalidArgumentError);
    expect(() => configurableFor({ store: null, cards: kb, defaults: { rerank: 1 as never } })).toThrow(
      "Expected `rerank` to be a boolean, got 1",
    );
  });
});

describe("configurable: fusion keys", () => {
  it("accepts fusion, rrfK and weights, and names a bad key", async () => {
    const { resolveRetrievalSettings } = await import("../../src/nodes/configuration.js");
    expect(resolveRetrievalSettings({ fusion: "zscore", rrfK: 10, weights: { bm25: 0.7 } })).toEqual({
      fusion: "zscore",
      rrfK: 10,
      weights: { bm25: 0.7 },
    });
    expect(() => resolveRetrievalSettings({ fusion: "borda" })).toThrow("`fusion`");
    expect(() => resolveRetrievalSettings({ weights: { sparse: 1 } })).toThrow("weights.sparse");
    expect(() => resolveRetrievalSettings({ rrfK: -1 })).toThrow("`rrfK`");
  });
});

describe("configurable: per-locale overrides (locales)", () => {
  it("validates locales keys as canonical tags and their values as retrieval keys, naming the bad one", async () => {
    const { resolveRetrievalSettings } = await import("../../src/nodes/configuration.js");
    const ok = resolveRetrievalSettings({
      fusion: "rrf",
      locales: { "es-419": { fusion: "minmax", weights: { dense: 0.2 } }, de: { bm25K: 50 } },
    });
    expect(ok.locales).toEqual({ "es-419": { fusion: "minmax", weights: { dense: 0.2 } }, de: { bm25K: 50 } });
    expect(() => resolveRetrievalSettings({ locales: { "pt-br": { k: 3 } } })).toThrow("locales.pt-br");
    expect(() => resolveRetrievalSettings({ locales: { en: { fusion: "borda" } } })).toThrow("locales.en.fusion");
    expect(() => resolveRetrievalSettings({ locales: { en: { locales: {} } } })).toThrow("locales.en");
  });

  it("retrievalSettingsFor: the exact tag wins over its language, weights merge branch by branch, other locales keep the base", async () => {
    const { retrievalSettingsFor, resolveRetrievalSettings } = await import("../../src/nodes/configuration.js");
    const conf = resolveRetrievalSettings({
      fusion: "rrf",
      denseK: 20,
      weights: { dense: 1, bm25: 1 },
      locales: { es: { fusion: "zscore" }, "es-419": { fusion: "minmax", weights: { dense: 0.2 } } },
    });
    expect(retrievalSettingsFor(conf, "es-419")).toEqual({
      fusion: "minmax",
      denseK: 20,
      weights: { dense: 0.2, bm25: 1 },
    });
    expect(retrievalSettingsFor(conf, "es-MX")).toEqual({
      fusion: "zscore",
      denseK: 20,
      weights: { dense: 1, bm25: 1 },
    });
    expect(retrievalSettingsFor(conf, "en")).toEqual({ fusion: "rrf", denseK: 20, weights: { dense: 1, bm25: 1 } });
    expect(retrievalSettingsFor(conf)).toEqual({ fusion: "rrf", denseK: 20, weights: { dense: 1, bm25: 1 } });
  });
});
