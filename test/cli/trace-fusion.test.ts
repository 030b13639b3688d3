import { describe, expect, it } from "vitest";
import { contributionText } from "../../src/cli/commands/trace.js";
import { fusionText } from "../../src/eval/report/render/shared.js";
import { reciprocalRankFusion } from "../../src/retrieval/fusion.js";

describe("retrace trace: fusion rendering", () => {
  it("shows each list's rank and share of a fused score", () => {
    // a: dense #1 → 1/61 = 0.0164, bm25 #2 → 1/62 = 0.0161
    const fused = reciprocalRankFusion([
      { name: "dense", ranked: [{ id: "a", parentId: "a", score: 0.9, rank: 1 }] },
      {
        name: "bm25",
        ranked: [
          { id: "b", parentId: "b", score: 9, rank: 1 },
          { id: "a", parentId: "a", score: 3, rank: 2 },
        ],
      },
    ]);
    const a = fused.find((r) => r.id === "a")!;
    expect(contributionText(a)).toBe("   = bm25 #2 0.0161 + dense #1 0.0164");
    expect(contributionText({ id: "x", parentId: "x", score: 1, rank: 1 })).toBe("");
  });

  it("names the method and its parameters", () => {
    expect(fusionText({ fusion: { method: "rrf", params: { k: 60 } } })).toBe("rrf(k=60)");
    expect(fusionText({ fusion: { method: "minmax", params: {} } })).toBe("minmax()");
    // keys sorted at every level, nested objects as dotted paths, strings bare, arrays as JSON
    expect(
      fusionText({ fusion: { method: "m", params: { z: "on", a: { y: 2, b: null }, list: [1, 2], t: true } } }),
    ).toBe("m(a.b=null, a.y=2, list=[1,2], t=true, z=on)");
  });
});
