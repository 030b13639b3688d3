/**
 * The one "lost at" rule (src/eval/report/attribution.ts lostAt) behind
 * `retrace trace`, `retrace trace --graph` and the HTML turn view, on
 * hand-made chains whose answer is written next to them.
 */
import { describe, expect, it } from "vitest";
import {
  capturedChains,
  CUT_AT_K,
  explainGold,
  lostAt,
  lostAtText,
  NOT_RETRIEVED,
  pipelineChain,
  verdictOf,
} from "../../src/eval/report/attribution.js";
import { explainCapturedGold } from "../../src/eval/report/captured-turn.js";
import type { RetrievalTrace } from "../../src/retrieval/types.js";

describe("lostAt", () => {
  it("retrace's pipeline: in the top-k, cut at k, dropped by fusion, not retrieved", () => {
    const at = (
      dense: number | null,
      bm25: number | null,
      fused: number | null,
      parents: number | null,
      inTopK = false,
    ) => lostAt([pipelineChain({ dense, bm25, fused, parents })], inTopK);
    expect(at(1, 1, 1, 1, true)).toBeNull();
    // In parents (the scored candidates), not in the top-k: cut at k.
    expect(at(null, 3, 5, 3)).toBe(CUT_AT_K);
    // A branch listed it, fusion did not keep it: lost at fused.
    expect(at(4, null, null, null)).toBe("fused");
    // No list held it.
    expect(at(null, null, null, null)).toBe(NOT_RETRIEVED);
    // The chain's groups: the two branches side by side, then each later stage.
    expect(pipelineChain({ parents: 2, bm25: null, dense: 1, fused: 1, other: 9 })).toEqual([
      [
        { stage: "dense", rank: 1 },
        { stage: "bm25", rank: null },
      ],
      [{ stage: "fused", rank: 1 }],
      [{ stage: "parents", rank: 2 }],
    ]);
  });

  it("captured calls: one chain per scored call (its child runs, then its own list)", () => {
    const stages = [
      { key: "BM25", role: "child" as const, ids: ["x", "g"] },
      { key: "Vector", role: "child" as const, ids: ["y"] },
      { key: "Ensemble", role: "final" as const, ids: ["x", "y"] },
      { key: "Tool", role: "final" as const, ids: ["z", "h"] },
    ];
    expect(capturedChains(stages, "g")).toEqual([
      [
        [
          { stage: "BM25", rank: 2 },
          { stage: "Vector", rank: null },
        ],
        [{ stage: "Ensemble", rank: null }],
      ],
      [[], [{ stage: "Tool", rank: null }]],
    ]);
    // g: only a child run of Ensemble listed it.
    expect(lostAt(capturedChains(stages, "g"), false)).toBe("Ensemble");
    // h: the second call listed it 2nd, below k.
    expect(lostAt(capturedChains(stages, "h"), false)).toBe(CUT_AT_K);
    // q: no call, no child run listed it.
    expect(lostAt(capturedChains(stages, "q"), false)).toBe(NOT_RETRIEVED);
    // No retriever run at all: not retrieved.
    expect(lostAt([], false)).toBe(NOT_RETRIEVED);
    expect([null, CUT_AT_K, NOT_RETRIEVED, "fused"].map(verdictOf)).toEqual([
      "retrieved",
      "cut_at_k",
      "not_retrieved",
      "not_retrieved",
    ]);
  });

  it("words the cut for each kind of turn", () => {
    expect(lostAtText(CUT_AT_K, false)).toBe("cut at k");
    expect(lostAtText(CUT_AT_K, true)).toBe("cut at k");
    expect(lostAtText(NOT_RETRIEVED, false)).toBe("not retrieved (no branch listed it)");
    expect(lostAtText(NOT_RETRIEVED, true)).toBe("not retrieved (no retriever call listed it)");
    expect(lostAtText("fused", false)).toBe("not retrieved: lost at fusion");
    expect(lostAtText("Ensemble", true)).toBe("not retrieved: dropped by Ensemble (only its child runs listed it)");
  });

  it("the trace and the HTML say the same: a gold card no list held is 'not retrieved', not 'cut at k'", () => {
    // Issue 21: a never-retrieved gold card of a --graph turn was 'lost at: cut at k' in the HTML while `trace` said 'not retrieved'.
    const stages = [
      { key: "KeywordRetriever", role: "final" as const, ids: [], error: null },
      { key: "KeywordRetriever#2", role: "final" as const, ids: ["refund-timelines"], error: null },
    ];
    expect(explainCapturedGold(stages, [], ["refund-timelines"], "es-congelar-tarjeta", 1)).toMatch(/, not retrieved$/);
    expect(lostAt(capturedChains(stages, "es-congelar-tarjeta"), false)).toBe(NOT_RETRIEVED);
    const ensemble = [
      { key: "BM25Retriever", role: "child" as const, ids: ["x", "g"], error: null },
      { key: "EnsembleRetriever", role: "final" as const, ids: ["x"], error: null },
    ];
    expect(explainCapturedGold(ensemble, [], ["x"], "g", 5)).toBe(
      "g: 2nd in #1 child BM25Retriever, absent after #1 EnsembleRetriever (1 listed), not retrieved: dropped by #1 EnsembleRetriever (only its child runs listed it)",
    );
  });
});

describe("explainGold", () => {
  it("says a card a branch listed but fusion dropped was lost at fusion, not 'not retrieved by any branch'", () => {
    const r = (id: string, rank: number) => ({ id, parentId: id.split("#")[0]!, score: 1 / rank, rank });
    const trace: RetrievalTrace = {
      turn: 0,
      query: "q",
      k: 1,
      config: {
        embedder: "e",
        denseK: 20,
        bm25K: 20,
        fusion: { method: "rrf", params: { k: 60 } },
        rerank: null,
        mode: "hybrid",
      },
      stages: { dense: [r("a#1", 1), r("g#1", 2)], bm25: [r("a#1", 1)], fused: [r("a#1", 1)], parents: [r("a", 1)] },
      retrievedIds: ["a"],
      timingsMs: {},
    };
    expect(explainGold(trace, "g")).toMatchObject({
      verdict: "not_retrieved",
      text: "g: 2nd in dense, absent in BM25 (1 listed), absent after fusion (1 listed), absent card after parent dedup (1 listed), not retrieved: lost at fusion",
    });
  });
});
