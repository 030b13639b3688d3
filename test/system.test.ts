/**
 * The composition root: one store vocabulary, and a system assembled from
 * options for every entry point (CLI, Studio, library users).
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../src/errors.js";
import { openSystem, resolveStoreChoice } from "../src/system.js";
import { MINI_KB } from "./helpers/fixtures.js";

const CASES = path.join(MINI_KB, "eval", "cases.jsonl");

describe("resolveStoreChoice", () => {
  it("auto means the CHROMA_URL server when set, else a local server", () => {
    expect(resolveStoreChoice("auto", {})).toEqual({ kind: "local" });
    expect(resolveStoreChoice("auto", { CHROMA_URL: "http://127.0.0.1:9" })).toEqual({ kind: "remote", url: "http://127.0.0.1:9" });
  });

  it("local ignores CHROMA_URL; a URL, memory and none are taken as said", () => {
    expect(resolveStoreChoice("local", { CHROMA_URL: "http://127.0.0.1:9" })).toEqual({ kind: "local" });
    expect(resolveStoreChoice("https://chroma.example:8000", {})).toEqual({ kind: "remote", url: "https://chroma.example:8000" });
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
    await expect(openSystem({ kbDir: "/does/not/exist", casesFile: null, store: "chroma" })).rejects.toThrow(InvalidArgumentError);
  });
});
