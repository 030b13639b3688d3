/**
 * The Vitest matchers of the testing module: pass/fail on hand-made traces
 * and on the hand-checked report fixture, and failure messages that say
 * where the gold went.
 */
import { describe, expect, it } from "vitest";
import type { RetrievalTrace } from "../../src/retrieval/types.js";
import { checkFloors, checkRetrieve, retraceMatchers, type RetraceMatchers } from "../../src/testing/index.js";
import { fixtureReport, storelessReport } from "../eval/report-fixture.js";

declare module "vitest" {
  interface Assertion<T> extends RetraceMatchers<T> {}
}
expect.extend(retraceMatchers);

const r = (id: string, rank: number) => ({ id, parentId: id.split("#")[0]!, score: 1 / rank, rank });
/** card-a: dense 1st, BM25 absent, fused 2nd, parents 2nd → in the top-2. card-b: dense 3rd, fused 4th, parents 3rd → cut at k=2. card-z: nowhere. */
const trace: RetrievalTrace = {
  turn: 0,
  query: "q",
  k: 2,
  config: {
    embedder: "e",
    denseK: 3,
    bm25K: 3,
    fusion: { method: "rrf", params: { k: 60 } },
    rerank: null,
    mode: "hybrid",
  },
  stages: {
    dense: [r("card-a#1", 1), r("card-c#1", 2), r("card-b#2", 3)],
    bm25: [r("card-c#2", 1), r("card-d#1", 2)],
    fused: [r("card-c#1", 1), r("card-a#1", 2), r("card-c#2", 3), r("card-b#2", 4)],
    parents: [r("card-c", 1), r("card-a", 2), r("card-b", 3)],
  },
  retrievedIds: ["card-c", "card-a"],
  timingsMs: {},
};

describe("toRetrieve", () => {
  it("passes when every card is in the top-k, and .not inverts it", () => {
    expect(trace).toRetrieve(["card-a"]);
    expect(trace).not.toRetrieve(["card-b"]);
    expect(trace).toRetrieve(["card-a", "card-b"], { any: true });
    expect(trace).not.toRetrieve(["card-b"], { k: 3 }); // k cuts the final list, which holds 2 cards: card-b is not in it
  });

  it("says where each missing card went", () => {
    const res = checkRetrieve(trace, ["card-b", "card-z"], { k: 2 });
    expect(res.pass).toBe(false);
    expect(res.message).toBe(
      [
        "expected the top-2 [card-c, card-a] to contain [card-b, card-z]",
        "  card-b: 3rd in dense, absent in BM25 (2 listed), 4th after fusion, 3rd card after parent dedup, cut at k=2",
        "  card-z: absent in dense (3 listed), absent in BM25 (2 listed), absent after fusion (4 listed), absent card after parent dedup (3 listed), not retrieved by any branch (dense top-3, BM25 top-3)",
      ].join("\n"),
    );
    expect(() => expect(trace).toRetrieve(["card-b"], { k: 2 })).toThrow(/card-b: 3rd in dense.*cut at k=2/);
  });

  it("works on plain ids with an explicit k", () => {
    expect(["x", "y", "z"]).toRetrieve(["z"], { k: 3 });
    expect(checkRetrieve(["x", "y", "z"], ["z"], { k: 2 }).message).toContain("z: rank 3, cut at k=2");
  });
});

describe("toMeetFloors", () => {
  it("passes and fails on the fixture's means (hit@3 = 3/4 = 0.75 over its 4 scored turns)", async () => {
    const report = await fixtureReport();
    expect(report).toMeetFloors({ retrieval_hit_at_k: 0.75 });
    expect(report).not.toMeetFloors({ retrieval_hit_at_k: 0.76 });
  });

  it("names the failing group with mean, n and floor, and where the missed turns' gold went", async () => {
    const report = await fixtureReport();
    const res = checkFloors(report, { retrieval_hit_at_k: 0.7 }, { split: "locale" });
    expect(res.pass).toBe(false);
    // es-419 has one scored turn (g2#1) and it missed: 0 (n=1).
    expect(res.message).toContain("hit@3 [locale=es-419]: 0.000 (n=1) is below the floor 0.7");
    expect(res.message).not.toContain("[locale=en]");
    expect(res.message).toContain("missed turns (1, first 1):");
    expect(res.message).toContain("g2#1");
  });

  it("fails a floor on a metric the run did not measure", async () => {
    const res = checkFloors(await storelessReport(), { retrieval_recall_at_k: 0.1 });
    expect(res.pass).toBe(false);
    expect(res.message).toMatch(/recall@3 \(lower bound\): not measured \(no store\), so the floor 0.1 cannot be met/);
  });
});
