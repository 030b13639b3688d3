/** Report renderings of a `--graph` run: header facts, errored and retrieval-less turns listed and counted, the captured-turn trace view. */
import { describe, expect, it } from "vitest";
import { explainCapturedGold } from "../../src/eval/report/captured-turn.js";
import { graphHeaderLines, graphTurnNotes } from "../../src/eval/report/graph-report.js";
import { renderJUnit, renderMarkdown, renderTable } from "../../src/eval/report/render.js";
import { fixtureReport } from "./report-fixture.js";

const graph = {
  file: "agent.ts",
  exportName: "graph",
  retrievers: ["EnsembleRetriever"],
  idKey: "parentId, doc_id, source, Document.id",
  retrievalCall: "last" as const,
  errors: 1,
  noRetrieval: 1,
};

async function graphReport() {
  const r = await fixtureReport({ store: "graph", graph, genericLocales: ["ja"] });
  // Mark two turns the way the graph runner does.
  r.turns[0] = { ...r.turns[0]!, error: "model exploded", results: [], retrievedIds: null };
  r.turns[1] = { ...r.turns[1]!, noRetrieval: true, results: [], retrievedIds: null };
  return r;
}

describe("graph report lines", () => {
  it("name the graph, retrievers, id key, call mode and the generic-rules locales; list errored and no-retrieval turns", async () => {
    const r = await graphReport();
    expect(graphHeaderLines(r)).toEqual([
      "generic rules (no built-in follow-up, policy or refusal tables) for: ja",
      "graph: agent.ts#graph",
      "captured retriever(s): EnsembleRetriever  id key: parentId, doc_id, source, Document.id  retrieval call scored: last",
    ]);
    const notes = graphTurnNotes(r);
    expect(notes[0]).toBe(
      "turn errors (the graph run threw, or was given up at the run.turnTimeout deadline or stalled; not scored, not counted as misses): 1",
    );
    expect(notes[1]).toContain('"model exploded"');
    expect(notes[2]).toBe("no retrieval captured (left out of retrieval means): 1");
    const table = renderTable(r, { color: false });
    for (const line of [...graphHeaderLines(r), ...notes]) expect(table).toContain(line);
    expect(renderMarkdown(r)).toContain("graph: agent.ts#graph");
    expect(renderJUnit(r)).toMatch(/not run: the graph run threw: model exploded/);
  });

  it("JUnit: a gate failure no check stands for (turn errors, no retrieval) is a failed testcase, and so is each turn it counted", async () => {
    const r = await graphReport();
    r.turns[1] = {
      ...r.turns[1]!,
      results: [
        { key: "retrieval_hit_at_k", score: 0, comment: "no retrieval (the turn made no retriever run): hit=0" },
      ],
      retrievedIds: [],
    };
    r.gate = {
      passed: false,
      checks: [],
      failures: [
        { kind: "turn_errors", key: "turn_errors", reason: "1 turn threw (allowed: 0, --gate max-errors): q1#0" },
        { kind: "no_retrieval", key: "no_retrieval", reason: "1 gold-bearing turn made no retriever run" },
      ],
    };
    const xml = renderJUnit(r);
    expect(xml).toContain(
      '<testcase classname="retrace.gate.turn_errors" name="--gate max-errors: turn_errors">\n      <failure message="1 turn threw (allowed: 0, --gate max-errors): q1#0" type="turn_errors"/>',
    );
    expect(xml).toContain(
      '<testcase classname="retrace.gate.no_retrieval" name="--gate max-no-retrieval: no_retrieval">',
    );
    expect(xml).toContain('<failure message="the graph run threw: model exploded" type="turn_errors"/>');
    expect(xml).toMatch(
      /<failure message="no retrieval \(the turn made no retriever run\): hit=0" type="no_retrieval">/,
    );
    const failures = (xml.match(/<failure /g) ?? []).length;
    expect(failures).toBe(4);
    expect(xml).toMatch(new RegExp(`<testsuites [^>]*failures="${failures}"`));
  });

  it("leave a built-in run's rendering alone", async () => {
    const r = await fixtureReport();
    expect(graphHeaderLines(r)).toEqual([]);
    expect(graphTurnNotes(r)).toEqual([]);
  });

  it("explains a gold card stage by stage", () => {
    const stages = [
      { key: "BM25Retriever", role: "child" as const, ids: ["x", "g"], error: null },
      { key: "VectorStoreRetriever", role: "child" as const, ids: ["y", "z", "w"], error: null },
      { key: "EnsembleRetriever", role: "final" as const, ids: ["x", "y", "z", "w", "v", "u", "g"], error: null },
    ];
    expect(explainCapturedGold(stages, [], ["x", "y", "z", "w", "v"], "g", 5)).toBe(
      "g: 2nd in #1 child BM25Retriever, absent from #1 child VectorStoreRetriever (3 listed), 7th after #1 EnsembleRetriever, cut at k=5",
    );
    expect(
      explainCapturedGold([{ key: "Custom", role: "final", ids: ["g"], error: null }], ["Custom"], ["g"], "g", 5),
    ).toBe("g: 1st after #1 Custom (no child runs), retrieved at rank 1 of the top-5");
  });

  it("words the calls of one retrieval step as parallel calls, not as a sequence; names each step when there are several", () => {
    // A Send() fan-out: three calls that overlapped in time (step 1), none of them "after" another.
    const fanout = [
      { key: "VectorStoreRetriever", role: "final" as const, ids: ["a", "b"], error: null, step: 1 },
      { key: "VectorStoreRetriever#2", role: "final" as const, ids: ["g"], error: null, step: 1 },
      { key: "VectorStoreRetriever#3", role: "final" as const, ids: ["c"], error: null, step: 1 },
    ];
    const bare = ["VectorStoreRetriever", "VectorStoreRetriever#2", "VectorStoreRetriever#3"];
    expect(explainCapturedGold(fanout, bare, ["a", "b", "g", "c"], "g", 5)).toBe(
      "g: step 1, 3 parallel calls (no child runs): absent from #1 VectorStoreRetriever (2 listed), 1st from #2 VectorStoreRetriever, absent from #3 VectorStoreRetriever (1 listed); retrieved at rank 3 of the top-5",
    );
    // Two sequential steps, the second a fan-out of two calls with a child stage each.
    const steps = [
      { key: "R", role: "final" as const, ids: ["x"], error: null, step: 1 },
      { key: "BM25", role: "child" as const, ids: ["g"], error: null, step: 2 },
      { key: "R#2", role: "final" as const, ids: ["y", "g"], error: null, step: 2 },
      { key: "R#3", role: "final" as const, ids: ["z"], error: null, step: 2 },
    ];
    expect(explainCapturedGold(steps, ["R", "R#3"], ["y", "g", "z"], "g", 1)).toBe(
      "g: step 1: absent after #1 R (no child runs) (1 listed); step 2, 2 parallel calls: 1st in #1 child BM25, 2nd from #1 R, absent from #2 R (no child runs) (1 listed); cut at k=1",
    );
  });
});
