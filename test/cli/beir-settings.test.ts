/**
 * `retrace beir`'s settings line names only the parameters the chosen fusion
 * uses (issue 50, item 4): `rrfK` is rrf's `k`, so it shows with `rrf` and
 * not with `combmnz`, `minmax` or `signals`.
 */
import { describe, expect, it } from "vitest";
import { settingsText } from "../../src/cli/commands/beir.js";

const base = {
  retrievalConfig: {},
  depth: 100,
  settings: { fusion: "rrf", rrfK: 60, weights: { dense: 0.5, bm25: 0.5 }, bm25: { k1: 0.9, b: 0.4 } },
};

describe("beir's settings line", () => {
  it("prints rrfK with rrf", () => {
    expect(settingsText(base)).toBe(
      "fusion=rrf rrfK=60 weights dense 0.5, bm25 0.5; BM25 k1=0.9 b=0.4; depth 100 per branch; exact dense search",
    );
  });

  for (const fusion of ["combmnz", "minmax", "zscore", "adaptive"])
    it(`leaves rrfK out with ${fusion}`, () => {
      const text = settingsText({ ...base, settings: { ...base.settings, fusion } });
      expect(text).toBe(
        `fusion=${fusion} weights dense 0.5, bm25 0.5; BM25 k1=0.9 b=0.4; depth 100 per branch; exact dense search`,
      );
    });

  it("prints signals' shift with signals, and no rrfK", () => {
    const text = settingsText({ ...base, settings: { ...base.settings, fusion: "signals", signalsShift: 0.1 } });
    expect(text).toBe(
      "fusion=signals weights dense 0.5, bm25 0.5; signals shift 0.1; BM25 k1=0.9 b=0.4; depth 100 per branch; exact dense search",
    );
  });
});
