import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import {
  FUSION_METHODS,
  FUSION_REGISTRY,
  fuse,
  fusionMethod,
  fusionParams,
  type FusionInput,
} from "../../src/retrieval/fusion.js";
import { HybridRetriever } from "../../src/retrieval/hybrid.js";
import type { Ranked } from "../../src/retrieval/types.js";

const r = (id: string, rank: number, score: number): Ranked => ({ id, parentId: id, rank, score });
const lists: FusionInput[] = [
  { name: "dense", ranked: [r("a", 1, 0.9), r("b", 2, 0.5)] },
  { name: "bm25", ranked: [r("b", 1, 7), r("c", 2, 3)] },
];

describe("fusion registry", () => {
  it("lists each method once, in the documented order", () => {
    expect(FUSION_METHODS).toEqual(["rrf", "minmax", "zscore", "combmnz", "adaptive", "signals"]);
    expect(new Set(FUSION_REGISTRY.map((m) => m.name)).size).toBe(FUSION_REGISTRY.length);
  });

  it("refuses an unknown method, naming the setting and the known ones", () => {
    expect(() => fusionMethod("borda")).toThrow(InvalidArgumentError);
    expect(() => fuse(lists, { method: "borda" as never })).toThrow(
      'Expected `fusion` to be one of rrf, minmax, zscore, combmnz, adaptive, signals, got "borda"',
    );
    expect(() => fusionMethod(undefined, "locales.en.fusion")).toThrow("`locales.en.fusion`");
  });

  it("names a bad parameter by its field", () => {
    expect(() => fuse(lists, { method: "rrf", params: { k: -1 } })).toThrow(
      "Expected `rrf.k` to be a finite non-negative number, got -1",
    );
    expect(() => fuse(lists, { method: "rrf", rrfK: Number.NaN })).toThrow(
      "Expected `rrfK` to be a finite non-negative number",
    );
    expect(() => fuse(lists, { method: "signals", params: { top: 2.5 } })).toThrow(
      "Expected `signals.top` to be a positive integer, got 2.5",
    );
    expect(() => fuse(lists, { method: "adaptive", params: { beta: "1" } })).toThrow("`adaptive.beta`");
    expect(() => fuse(lists, { method: "rrf", params: { kk: 1 } })).toThrow("Expected `rrf.kk` to be one of k, got 1");
    expect(() => fuse(lists, { method: "minmax", params: { k: 1 } })).toThrow(
      "Expected `minmax.k` to be no parameter (minmax takes none), got 1",
    );
  });

  it("fills unset parameters from the declared defaults and keeps an explicit 0", () => {
    expect(fusionParams("rrf")).toEqual({ k: 60 });
    expect(fusionParams("adaptive")).toEqual({ beta: 0.5, top: 10 });
    expect(fusionParams("signals", { shift: 0 })).toEqual({ shift: 0, beta: 2, gamma: -2, top: 10 });
    expect(fusionParams("minmax")).toEqual({});
    for (const m of FUSION_REGISTRY) expect(fusionParams(m.name, m.defaults)).toEqual(m.defaults);
  });

  it("dispatches to the method with its parameters (RRF, k = 1, computed by hand)", () => {
    // a: dense #1 → 1/(1+1) = 0.5; b: dense #2 + bm25 #1 → 1/3 + 1/2 = 0.8333…; c: bm25 #2 → 1/3.
    const fused = fuse(lists, { method: "rrf", params: { k: 1 } });
    expect(fused.map((f) => f.id)).toEqual(["b", "a", "c"]);
    expect(fused.map((f) => f.score)).toEqual([1 / 3 + 1 / 2, 0.5, 1 / 3].map((x) => expect.closeTo(x, 12)));
    // `params` wins over the retriever-level alias rrfK.
    expect(fuse(lists, { method: "rrf", rrfK: 100, params: { k: 1 } })[0]!.score).toBeCloseTo(1 / 3 + 1 / 2, 12);
  });

  it("is the validation the retriever uses for its fusion settings", () => {
    const make = (defaults: Record<string, unknown>) => () =>
      new HybridRetriever({
        chunks: [],
        embedder: { id: "fake", dimension: 1, embedQuery: async () => [1], embedDocuments: async () => [] } as never,
        dense: { search: async () => [] } as never,
        defaults: defaults as never,
      });
    expect(make({ fusion: "borda" })).toThrow("Expected `fusion` to be one of rrf,");
    expect(make({ rrfK: -2 })).toThrow("Expected `rrfK` to be a finite non-negative number, got -2");
  });
});
