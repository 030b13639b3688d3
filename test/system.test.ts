/**
 * The composition root: one store vocabulary, and a system assembled from
 * options for every entry point (CLI, Studio, library users).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DataValidationError, InvalidArgumentError } from "../src/errors.js";
import { openSystem, resolveStoreChoice } from "../src/system.js";
import { copyKb, MINI_KB } from "./helpers/fixtures.js";

const CASES = path.join(MINI_KB, "eval", "cases.jsonl");

describe("resolveStoreChoice", () => {
  it("auto means the CHROMA_URL server when set, else a local server", () => {
    expect(resolveStoreChoice("auto", {})).toEqual({ kind: "local" });
    expect(resolveStoreChoice("auto", { CHROMA_URL: "http://127.0.0.1:9" })).toEqual({
      kind: "remote",
      url: "http://127.0.0.1:9",
    });
  });

  it("local ignores CHROMA_URL; a URL, memory and none are taken as said", () => {
    expect(resolveStoreChoice("local", { CHROMA_URL: "http://127.0.0.1:9" })).toEqual({ kind: "local" });
    expect(resolveStoreChoice("https://chroma.example:8000", {})).toEqual({
      kind: "remote",
      url: "https://chroma.example:8000",
    });
    expect(resolveStoreChoice("memory", {})).toEqual({ kind: "memory" });
    expect(resolveStoreChoice("none", {})).toEqual({ kind: "none" });
  });

  it("rejects words outside the vocabulary, naming what is accepted", () => {
    for (const bad of ["chroma", "pinecone", "", "ftp://x"]) {
      expect(() => resolveStoreChoice(bad, {})).toThrow(InvalidArgumentError);
    }
    expect(() => resolveStoreChoice("chroma", {})).toThrow(/auto, local, memory, none or an http\(s\) URL/);
  });
});

describe("openSystem", () => {
  it("memory: the exact in-process index behind a HybridRetriever, nothing started", async () => {
    const system = await openSystem({ kbDir: MINI_KB, casesFile: CASES, store: "memory", embedder: "builtin" });
    expect(system.storeKind).toBe("memory");
    expect(system.collection).toBeNull();
    expect(system.cases.length).toBeGreaterThan(0);
    const trace = await system.retriever!.retrieve("how do I freeze my card?", { k: 3, locale: "en" });
    expect(trace.retrievedIds[0]).toBe("card-freeze");
    await system.close();
  });

  it("none: no retriever and no embedder; cases are optional", async () => {
    const system = await openSystem({ kbDir: MINI_KB, casesFile: null, store: "none" });
    expect(system.retriever).toBeNull();
    expect(system.embedder).toBeNull();
    expect(system.storeKind).toBe("none");
    expect(system.cases).toEqual([]);
  });

  it("a bad store word fails before anything is loaded", async () => {
    await expect(openSystem({ kbDir: "/does/not/exist", casesFile: null, store: "chroma" })).rejects.toThrow(
      InvalidArgumentError,
    );
  });
});

describe("openSystem and <kb>/analyzers.json (docs/languages.md)", () => {
  it("applies the KB's analyzer overrides to the BM25 branch, and a KB without the file gets the defaults back", async () => {
    const kb = await copyKb(MINI_KB);
    try {
      // Stemming is what lets "blocked withdrawal" find the card that says "blocks ... withdrawals": turn it off for en and the BM25 list changes.
      const bm25Ids = async (kbDir: string) => {
        const system = await openSystem({ kbDir, casesFile: null, store: "memory", embedder: "builtin" });
        const trace = await system.retriever!.retrieve("blocked withdrawal", { k: 3, locale: "en", mode: "bm25" });
        await system.close();
        expect(system.retriever!.analyzers).toBe(system.analyzers);
        expect(system.retrieverRecipe!.analyzers).toEqual(system.analyzers.overrides);
        return { ids: trace.retrievedIds, stemmer: system.analyzers.profile("en").stemmer };
      };
      const stemmed = await bm25Ids(kb.dir);
      expect(stemmed.stemmer).not.toBeNull();
      expect(stemmed.ids).toContain("card-freeze");
      await writeFile(path.join(kb.dir, "analyzers.json"), JSON.stringify({ en: { stemmer: "none" } }));
      const unstemmed = await bm25Ids(kb.dir);
      expect(unstemmed.stemmer).toBeNull();
      expect(unstemmed.ids).not.toEqual(stemmed.ids);
      // Another KB without the file: the defaults again, not the previous KB's overrides.
      expect((await bm25Ids(MINI_KB)).stemmer).toBe(stemmed.stemmer);
    } finally {
      await kb.cleanup();
    }
  });

  it("an invalid analyzers.json is a data error naming the file and field, before any store is opened", async () => {
    const kb = await copyKb(MINI_KB);
    try {
      await writeFile(path.join(kb.dir, "analyzers.json"), JSON.stringify({ en: { stemmer: "klingon" } }));
      // A remote store nobody listens on: reaching it would be a service error (exit 3), not this data error.
      const opened = openSystem({ kbDir: kb.dir, casesFile: null, store: "http://127.0.0.1:9", embedder: "builtin" });
      await expect(opened).rejects.toThrow(DataValidationError);
      await expect(
        openSystem({ kbDir: kb.dir, casesFile: null, store: "http://127.0.0.1:9", embedder: "builtin" }),
      ).rejects.toThrow(/analyzers\.json.*en\.stemmer/s);
    } finally {
      await kb.cleanup();
    }
  });
});
