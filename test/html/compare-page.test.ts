/**
 * The comparison's moved turns (docs/html-report.md; the compare page's
 * secondary list, the PR comment's and the terminal's): turns whose hit@k
 * held but whose recall@k or nDCG@k moved by at least the threshold, on
 * hand-made turns with the arithmetic next to them.
 */
import { describe, expect, it } from "vitest";
import { SHIFT_THRESHOLD, movedTurns, type RunSide } from "../../src/eval/gate/compare.js";
import type { TurnReport } from "../../src/eval/report/types.js";

/** A run side of bare turns (no report around them: the order is the first side's turn order). */
const side = (turns: TurnReport[]): RunSide => ({ file: "x", datasetHash: "h", k: 5, keys: [], source: { turns } });
const shiftedTurns = (a: { turns: TurnReport[] }, b: { turns: TurnReport[] }, threshold?: number) =>
  movedTurns(side(a.turns), side(b.turns), threshold);

function turn(caseId: string, scores: { hit: number; recall: number; ndcg: number } | null): TurnReport {
  const results =
    scores === null
      ? []
      : [
          { key: "retrieval_hit_at_k", score: scores.hit },
          { key: "retrieval_recall_at_k", score: scores.recall },
          { key: "retrieval_ndcg_at_k", score: scores.ndcg },
        ];
  return {
    caseId,
    turn: 0,
    locale: "en",
    kind: "golden",
    user: caseId,
    gold: scores === null ? [] : ["g"],
    expect: "answer",
    retrievedIds: [],
    citedIds: [],
    refused: false,
    answer: "",
    results,
  };
}
const s = (hit: number, recall: number, ndcg: number) => ({ hit, recall, ndcg });

// A → B, threshold 0.2:
// up:      nDCG 0.5 → 1 (+0.5)                      listed, key +0.5 (last)
// down:    nDCG 1 → 0.631 (−0.369), recall same     listed, key −0.369
// worst:   recall 1 → 0.5 (−0.5), nDCG −0.3         listed, key −0.5 (first)
// small:   nDCG 1 → 0.9 (−0.1)                      below threshold
// flip:    hit 1 → 0 (a flip, listed elsewhere)     left out
// nogold:  no scores                                 left out
// edge:    recall 0.5 → 0.7 (+0.2, exactly)         listed, key +0.2
// onlyA:   not in B                                  left out
const A = [
  turn("up", s(1, 1, 0.5)),
  turn("down", s(1, 1, 1)),
  turn("worst", s(1, 1, 0.8)),
  turn("small", s(1, 1, 1)),
  turn("flip", s(1, 1, 1)),
  turn("nogold", null),
  turn("edge", s(1, 0.5, 0.6)),
  turn("onlyA", s(1, 1, 1)),
];
const B = [
  turn("edge", s(1, 0.7, 0.6)),
  turn("worst", s(1, 0.5, 0.5)),
  turn("up", s(1, 1, 1)),
  turn("down", s(1, 1, 0.631)),
  turn("small", s(1, 1, 0.9)),
  turn("flip", s(0, 0, 0)),
  turn("nogold", null),
];

describe("movedTurns", () => {
  it("lists unflipped turns whose recall@k or nDCG@k moved by at least the threshold, biggest drop first", () => {
    expect(SHIFT_THRESHOLD).toBe(0.2);
    const got = shiftedTurns({ turns: A }, { turns: B });
    expect(got.map((x) => x.id)).toEqual(["worst#0", "down#0", "edge#0", "up#0"]);
    const worst = got[0]!;
    expect(worst.hit).toBe(1);
    expect(worst.recall).toBeCloseTo(-0.5, 12);
    expect(worst.ndcg).toBeCloseTo(-0.3, 12);
  });

  it("breaks equal changes by A's order, and lists every scored unflipped turn at threshold 0", () => {
    const a = [turn("x", s(0, 0, 0)), turn("y", s(0, 0, 0))];
    const b = [turn("y", s(0, 0, 0.4)), turn("x", s(0, 0, 0.4))];
    expect(shiftedTurns({ turns: a }, { turns: b }).map((x) => x.id)).toEqual(["x#0", "y#0"]);
    // small (−0.1) joins at 0; flip, nogold and onlyA still do not.
    expect(shiftedTurns({ turns: A }, { turns: B }, 0).map((x) => x.id)).toEqual([
      "worst#0",
      "down#0",
      "small#0",
      "edge#0",
      "up#0",
    ]);
  });
});
