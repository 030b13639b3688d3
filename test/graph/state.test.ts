/** The state declaration: channel defaults and reducers. */
import { HumanMessage } from "@langchain/core/messages";
import { END, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { RetraceState, RetrievalAnnotation, appendTraces } from "../../src/graph/state.js";
import { RecordingRetrieverDouble } from "./helpers.js";

describe("appendTraces", () => {
  it("appends one trace or a list without mutating either side", async () => {
    const double = new RecordingRetrieverDouble(["a"]);
    const t0 = await double.retrieve("q0", { turn: 0 });
    const t1 = await double.retrieve("q1", { turn: 1 });
    const t2 = await double.retrieve("q2", { turn: 2 });
    const left = [t0];
    const right = [t1, t2];
    expect(appendTraces(left, t1)).toEqual([t0, t1]);
    expect(appendTraces(left, right)).toEqual([t0, t1, t2]);
    expect(left).toEqual([t0]);
    expect(right).toEqual([t1, t2]);
  });
});

describe("RetraceState", () => {
  it("declares the documented channels, and RetrievalAnnotation is its retrieval subset", () => {
    expect(Object.keys(RetraceState.spec).sort()).toEqual([
      "answer",
      "citedIds",
      "locale",
      "messages",
      "query",
      "refused",
      "retrieval",
      "turn",
    ]);
    expect(Object.keys(RetrievalAnnotation.spec).sort()).toEqual(["locale", "messages", "query", "retrieval", "turn"]);
  });

  it("starts from the documented defaults; citedIds is replaced, retrieval appended, messages merged", async () => {
    const double = new RecordingRetrieverDouble(["a"]);
    const t0 = await double.retrieve("q", { turn: 0 });
    const graph = new StateGraph(RetraceState)
      .addNode("write", async () => ({ citedIds: ["x"], retrieval: [t0] }))
      .addNode("rewrite", async () => ({ citedIds: ["y"], retrieval: t0 }))
      .addEdge(START, "write")
      .addEdge("write", "rewrite")
      .addEdge("rewrite", END)
      .compile();
    const empty = await new StateGraph(RetraceState)
      .addNode("noop", async () => ({}))
      .addEdge(START, "noop")
      .addEdge("noop", END)
      .compile()
      .invoke({ messages: [] });
    expect(empty).toEqual({
      messages: [],
      locale: undefined,
      turn: -1,
      query: "",
      retrieval: [],
      answer: "",
      citedIds: [],
      refused: false,
    });
    const s = await graph.invoke({ messages: [new HumanMessage("hi")] });
    expect(s.citedIds).toEqual(["y"]);
    expect(s.retrieval).toEqual([t0, t0]);
    expect(s.messages).toHaveLength(1);
  });
});
