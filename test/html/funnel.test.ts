/**
 * The pipeline view behind the HTML report's funnel, curves and "lost at"
 * column, on hand-made turns whose arithmetic is written next to them; and
 * the compressed data embedding and CSP of the page shell.
 */
import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { CLIENT_CSS, CLIENT_JS } from "../../src/eval/report/html/client.js";
import { funnelStages } from "../../src/eval/report/funnel-stats.js";
import { pipelineView } from "../../src/eval/report/html/funnel.js";
import { cutStage, goldLostAtOf, lostAtOf } from "../../src/eval/report/lost-at.js";
import { recallCurves } from "../../src/eval/report/recall-curves.js";
import { contentSecurityPolicy, embedData, renderPage } from "../../src/eval/report/html/page.js";
import { roundScore, stageHeads } from "../../src/eval/report/trace-summary.js";
import type { Report, TurnReport } from "../../src/eval/report/types.js";

function turn(
  id: string,
  gold: string[],
  positions: Record<string, Record<string, number | null>>,
  retrievedIds: string[],
  locale = "en",
): TurnReport {
  return {
    caseId: id,
    turn: 0,
    locale,
    kind: "golden",
    user: id,
    gold,
    expect: "answer",
    retrievedIds,
    citedIds: [],
    refused: false,
    answer: "",
    results: [],
    trace: {
      query: id,
      k: 2,
      retrievedIds,
      goldPositions: positions,
      stageSizes: { dense: 4, bm25: 4, fused: 6, parents: 3 },
    },
  };
}
const S = (dense: number | null, bm25: number | null, fused: number | null, parents: number | null) => ({
  dense,
  bm25,
  fused,
  parents,
});

// k = 2.
// t1: gold a in both branches, fused 1, parents 1, final 1            → reached the top-k
// t2: gold b only in BM25 (rank 3), fused 5, parents 3, not in top-2  → cut at k ("final")
// t3: gold c in no branch                                              → "retrieval"
// t4: gold [d, e]: d dense 2 / fused 2 / parents 2 / final 2; e absent → d reached; e "retrieval"
const T = [
  turn("t1", ["a"], { a: S(1, 1, 1, 1) }, ["a", "x"]),
  turn("t2", ["b"], { b: S(null, 3, 5, 3) }, ["x", "y"]),
  turn("t3", ["c"], { c: S(null, null, null, null) }, ["x", "y"], "es-419"),
  turn("t4", ["d", "e"], { d: S(2, null, 2, 2), e: S(null, null, null, null) }, ["x", "d"], "es-419"),
];

describe("cutStage", () => {
  it("names the stage that lost each gold card", () => {
    expect(cutStage(T[0]!, "a")).toBeNull();
    expect(cutStage(T[1]!, "b")).toBe("final");
    expect(cutStage(T[2]!, "c")).toBe("retrieval");
    expect(cutStage(T[3]!, "d")).toBeNull();
    expect(cutStage(T[3]!, "e")).toBe("retrieval");
    // Listed by a branch but missing after fusion: fusion lost it.
    expect(cutStage(turn("t5", ["f"], { f: S(4, null, null, null) }, ["x"]), "f")).toBe("fused");
    // No trace: nothing to say.
    expect(cutStage({ ...T[0]!, trace: undefined }, "a")).toBeNull();
  });

  it("goldLostAtOf keeps only the missed cards, in gold order, and is absent when none missed", () => {
    expect(goldLostAtOf(T[0]!)).toBeUndefined(); // a reached the top-2
    expect(goldLostAtOf(T[1]!)).toEqual({ b: { at: "final", text: "cut at k" } });
    // d reached the top-2 (rank 2), e was in no list.
    expect(goldLostAtOf(T[3]!)).toEqual({ e: { at: "retrieval", text: "not retrieved (no branch listed it)" } });
    expect(goldLostAtOf({ ...T[1]!, trace: undefined })).toBeUndefined(); // no trace: nothing to say
    expect(goldLostAtOf({ ...T[1]!, gold: [] })).toBeUndefined();
    // A gold-bearing turn that made no retriever run: every card, "no retrieval".
    expect(goldLostAtOf({ ...T[3]!, trace: undefined, noRetrieval: true })).toEqual({
      d: { at: "retrieval", text: "no retrieval" },
      e: { at: "retrieval", text: "no retrieval" },
    });
  });
});

describe("the report's funnel over these turns (what the page draws)", () => {
  const counts = (turns: TurnReport[]) =>
    funnelStages(turns).map((r) => ({ stage: r.stage, present: r.present, n: r.n }));
  it("counts gold-bearing turns with any gold card in each stage's list", () => {
    // dense: t1, t4 → 2; bm25: t1, t2 → 2; fused: t1, t2, t4 → 3; parents: same 3; of the 4 traced turns. No hit@k score: no final row.
    expect(counts(T)).toEqual([
      { stage: "dense", present: 2, n: 4 },
      { stage: "bm25", present: 2, n: 4 },
      { stage: "fused", present: 3, n: 4 },
      { stage: "parents", present: 3, n: 4 },
    ]);
  });
  it("is empty without gold-bearing traced turns", () => {
    expect(funnelStages([{ ...T[0]!, gold: [] }])).toEqual([]);
  });
});

describe("recallCurves", () => {
  it("averages per-turn recall at each k over gold-bearing traced turns", () => {
    const { maxK, curves } = recallCurves(T, 2);
    expect(maxK).toBe(6); // the longest stage list (fused, 6)
    const final = curves.find((c) => c.stage === "final")!.values;
    // k=1: t1 1, t2 0, t3 0, t4 0 → 1/4. k=2: t1 1, t4 1/2 → 1.5/4 = 0.375; flat after.
    expect(final.slice(0, 3)).toEqual([0.25, 0.375, 0.375]);
    const fused = curves.find((c) => c.stage === "fused")!.values;
    // k=1: 1/4; k=2: (1 + 0.5)/4; k=5: (1 + 1 + 0.5)/4 = 0.625
    expect([fused[0], fused[1], fused[4]]).toEqual([0.25, 0.375, 0.625]);
  });
});

describe("page shell", () => {
  it("embeds the data as gzip in base64: no character of markup, a fixed header, and it unpacks to the same value", () => {
    const value = { s: "</script><script>alert(1)</script><!-- & \u2028 > ñ 🙂", n: [1, 0.5, null] };
    const text = embedData(value);
    expect(text).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    const gz = Buffer.from(text, "base64");
    // RFC 1952: ID1 ID2 = 1f 8b, CM 8 (deflate), FLG 0 (no name/comment/extra), MTIME 0, XFL 2 (max compression), OS 255 (unknown).
    expect([...gz.subarray(0, 10)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255]);
    expect(JSON.parse(gunzipSync(gz).toString("utf8"))).toEqual(value);
    // Same value, same bytes; a different value, different bytes.
    expect(embedData(structuredClone(value))).toBe(text);
    expect(embedData({ ...value, s: "x" })).not.toBe(text);
  });
  it("renders the same page for the same data, with the data in one non-executable element", () => {
    const data = {
      kind: "report",
      turns: Array.from({ length: 200 }, (_, i) => ({ id: `case-${i}`, user: `"><img src=x onerror=alert(${i})>` })),
    };
    const html = renderPage("t", data);
    expect(renderPage("t", JSON.parse(JSON.stringify(data)))).toBe(html);
    const m =
      /<script type="application\/octet-stream" id="retrace-data" data-encoding="gzip\+base64">([^<]*)<\/script>/.exec(
        html,
      );
    expect(m).not.toBeNull();
    expect(JSON.parse(gunzipSync(Buffer.from(m![1]!, "base64")).toString("utf8"))).toEqual(data);
    expect(html).not.toContain("onerror");
    // Compression pays: the page's data is far smaller than its JSON.
    expect(m![1]!.length).toBeLessThan(JSON.stringify(data).length / 5);
  });
  it("allows exactly the page's own script and style by their SHA-256", () => {
    const hash = (s: string) => createHash("sha256").update(s).digest("base64");
    const csp = contentSecurityPolicy(CLIENT_JS, CLIENT_CSS);
    expect(csp).toContain(`script-src 'sha256-${hash(CLIENT_JS)}'`);
    expect(csp).toContain(`style-src 'sha256-${hash(CLIENT_CSS)}'`);
    expect(csp).toMatch(/^default-src 'none'/);
    const html = renderPage("t <b>", { kind: "report" });
    expect(html).toContain("<title>t &lt;b&gt;</title>");
    expect(html).toContain(`<script>${CLIENT_JS}</script>`);
  });
});

describe("stageHeads", () => {
  it("keeps the head of each stage that ran, scores to 4 significant digits, and each list's full size", () => {
    const r = (id: string, score: number, rank: number) => ({ id, parentId: id.split("#")[0]!, score, rank });
    const heads = stageHeads(
      {
        turn: 0,
        query: "q",
        k: 1,
        config: {
          embedder: "e",
          denseK: 3,
          bm25K: 3,
          fusion: { method: "rrf", params: { k: 60 } },
          rerank: null,
          mode: "dense",
        },
        stages: {
          dense: [r("a#1", 0.123456, 1), r("b#1", 0.1, 2), r("c#1", 0, 3)],
          fused: [],
          parents: [r("a", 0.0163934, 1)],
        },
        retrievedIds: ["a"],
        timingsMs: {},
      },
      2,
    );
    expect(heads).toEqual({
      stages: {
        dense: [
          ["a#1", 0.1235],
          ["b#1", 0.1],
        ],
        fused: [],
        parents: [["a", 0.01639]],
      },
      stageSizes: { dense: 3, fused: 0, parents: 1 },
    });
    expect(roundScore(Number.NaN)).toBeNaN();
  });
});

describe("a --graph run's turns (captured retriever calls)", () => {
  // k = 1. Three calls in one step; turn c1: gold g listed 2nd by the first call → cut at k; turn c2: gold h in no list → not retrieved;
  // turn c3: no retriever run (gold-bearing) → "no retrieval"; turn c4: only a child run listed gold m → dropped by its call.
  const captured = (
    id: string,
    gold: string[],
    stages: { key: string; role: "child" | "final"; ids: string[] }[],
    retrievedIds: string[],
  ): TurnReport => ({
    caseId: id,
    turn: 0,
    locale: "en",
    kind: "golden",
    user: id,
    gold,
    expect: "answer",
    retrievedIds,
    citedIds: [],
    refused: false,
    answer: "",
    results: [],
    trace: { query: id, k: 1, retrievedIds, goldPositions: {} },
    captured: {
      source: "callbacks",
      retrievers: stages.filter((s) => s.role === "final").map((s) => s.key),
      topLevelRuns: 3,
      steps: 1,
      stages: stages.map((s) => ({ ...s, error: null, step: 1 })),
      noChildRuns: [],
    },
  });
  const c1 = captured(
    "c1",
    ["g"],
    [
      { key: "R", role: "final", ids: ["x", "g"] },
      { key: "R#2", role: "final", ids: ["x"] },
      { key: "R#3", role: "final", ids: [] },
    ],
    ["x"],
  );
  const c2 = captured(
    "c2",
    ["h"],
    [
      { key: "R", role: "final", ids: [] },
      { key: "R#2", role: "final", ids: ["x"] },
      { key: "R#3", role: "final", ids: [] },
    ],
    ["x"],
  );
  const c3: TurnReport = {
    ...c1,
    caseId: "c3",
    gold: ["g"],
    trace: undefined,
    captured: undefined,
    noRetrieval: true,
    retrievedIds: [],
  };
  const c4 = captured(
    "c4",
    ["m"],
    [
      { key: "Child", role: "child", ids: ["y", "m"] },
      { key: "Merge", role: "final", ids: ["y"] },
    ],
    ["y"],
  );

  it("tells not retrieved from cut at k by the captured lists, and labels a turn with no retriever run", () => {
    expect(cutStage(c1, "g")).toBe("final");
    expect(cutStage(c2, "h")).toBe("retrieval");
    expect(cutStage(c3, "g")).toBe("retrieval");
    expect(cutStage(c4, "m")).toBe("Merge");
    expect([c1, c2, c3, c4].map((t) => lostAtOf(t, t.gold[0]!)?.text)).toEqual([
      "cut at k",
      "not retrieved (no retriever call listed it)",
      "no retrieval",
      "not retrieved: dropped by Merge (only its child runs listed it)",
    ]);
  });

  it("counts child runs, the joined scored lists and the final top-k in the report's funnel; a no-retrieval turn counts in n only", () => {
    // child: c4 (m in Child); scored: c1 (g in R) → 1 (c4's m is in no call's own list); final: none.
    // child: measured on c4 only (the one turn with child runs), m in Child → 1 of 1; scored: c1 (g in R) → 1 of 4 (c4's m is in no call's
    // own list; c3 made no retriever run); final: hit@1 0 on every turn → 0 of 4.
    const scored = [c1, c2, c3, c4].map((t) => ({ ...t, results: [{ key: "retrieval_hit_at_k", score: 0 }] }));
    expect(funnelStages(scored).map((r) => ({ stage: r.stage, present: r.present, n: r.n }))).toEqual([
      { stage: "child", present: 1, n: 1 },
      { stage: "scored", present: 1, n: 4 },
      { stage: "final", present: 0, n: 4 },
    ]);
    // Curves reach the longest joined list (c1: [x, g] → 2); scored recall@2 = (1 + 0 + 0 + 0) / 4.
    const { maxK, curves } = recallCurves([c1, c2, c3, c4], 1);
    expect(maxK).toBe(2);
    expect(curves.find((c) => c.stage === "scored")!.values).toEqual([0, 0.25]);
  });

  it("words the funnel of a --graph run without dense or BM25", () => {
    const report = { run: { k: 1, graph: { retrievalCall: "last" } }, turns: [c1, c2] } as unknown as Report;
    const view = pipelineView(report);
    expect(view.kind).toBe("captured");
    expect(`${view.text.funnel} ${view.text.curves}`).not.toMatch(/dense|BM25|fused|branch/);
    expect([c1, c2].map(goldLostAtOf)).toEqual([
      { g: { at: "final", text: "cut at k" } },
      { h: { at: "retrieval", text: "not retrieved (no retriever call listed it)" } },
    ]);
    const funnelOf = (...stages: string[]) => ({ stages: stages.map((stage) => ({ stage })) });
    const builtIn = pipelineView({
      ...report,
      run: { k: 1 },
      turns: [T[1]!],
      funnel: funnelOf("dense", "bm25", "fused", "final"),
    } as unknown as Report);
    expect(builtIn.kind).toBe("pipeline");
    expect(builtIn.text.funnel).toBe(
      "dense and BM25 are parallel branches; fused onwards is sequential. A drop between two stages is the gold lost there. final top-k is what hit@1 scores.",
    );
    // A funnel without a BM25 row (a dense-only run) names no branches.
    const denseOnly = pipelineView({
      ...report,
      run: { k: 1 },
      turns: [T[1]!],
      funnel: funnelOf("dense", "final"),
    } as unknown as Report);
    expect(denseOnly.text.funnel).not.toMatch(/BM25|branch/);
  });

  it("names only the rows the funnel table has: child runs only when some scored call had them", () => {
    const noChild = pipelineView({
      run: { k: 1, graph: { retrievalCall: "last" } },
      turns: [c1, c2],
      funnel: { stages: [{ stage: "scored" }, { stage: "final" }] },
    } as unknown as Report);
    expect(noChild.text.funnel).not.toMatch(/child/);
    expect(noChild.text.funnel).toMatch(/scored calls .* and final top-k, what hit@1 scores\./);
    const withChild = pipelineView({
      run: { k: 1, graph: { retrievalCall: "last" } },
      turns: [c1, c4],
      funnel: { stages: [{ stage: "child" }, { stage: "scored" }, { stage: "final" }] },
    } as unknown as Report);
    expect(withChild.text.funnel).toMatch(
      /^Rows are the lists captured from your graph's retriever runs: child runs \(.*\), scored calls \(.*\) and final top-k/,
    );
  });
});
