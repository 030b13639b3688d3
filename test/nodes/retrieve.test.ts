/**
 * The retrieve node called directly (outside a graph) and inside a one-node
 * graph: what it asks the retriever, what it writes, and the three outputs of
 * the one trace value.
 */
import { HumanMessage, AIMessage } from "@langchain/core/messages";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { RetrievalAnnotation } from "../../src/graph/state.js";
import {
  RETRIEVAL_TRACE_EVENT,
  isRetrievalTraceEvent,
  retrieveNode,
  type RetrievalTraceEvent,
} from "../../src/nodes/retrieve.js";
import { RecordingRetrieverDouble } from "../graph/helpers.js";

describe("retrieveNode (direct call)", () => {
  it("queries with state.query, forwards only the set options, writes [trace] and the custom stream", async () => {
    const retriever = new RecordingRetrieverDouble(["card-freeze", "refund-timelines"]);
    const written: unknown[] = [];
    const update = await retrieveNode(
      { query: "freeze my card", turn: 2, locale: "en", messages: [new HumanMessage("ignored")] },
      { configurable: { retriever, k: 1, thread_id: "t" }, writer: (x: unknown) => written.push(x) },
    );
    expect(retriever.calls).toEqual([{ query: "freeze my card", options: { k: 1, turn: 2, locale: "en" } }]);
    expect(update.retrieval).toHaveLength(1);
    expect(update.retrieval[0]!.retrievedIds).toEqual(["card-freeze"]);
    expect(Object.keys(update)).toEqual(["retrieval"]);
    expect(written).toEqual([{ type: RETRIEVAL_TRACE_EVENT, threadId: "t", trace: update.retrieval[0] }]);
    // the very same object, not a copy
    expect((written[0] as RetrievalTraceEvent).trace).toBe(update.retrieval[0]);
  });

  it("applies the turn's locale section of `locales` and never forwards `locales` itself", async () => {
    const retriever = new RecordingRetrieverDouble(["card-freeze"]);
    const configurable = { retriever, fusion: "rrf", locales: { "pt-BR": { fusion: "minmax", bm25K: 50 } } };
    await retrieveNode({ query: "pix", turn: 0, locale: "pt-BR" }, { configurable });
    await retrieveNode({ query: "refund", turn: 0, locale: "en" }, { configurable });
    expect(retriever.calls.map((c) => c.options)).toEqual([
      { fusion: "minmax", bm25K: 50, turn: 0, locale: "pt-BR" },
      { fusion: "rrf", turn: 0, locale: "en" },
    ]);
  });

  it("falls back to the last human message and to the human-message count for the turn", async () => {
    const retriever = new RecordingRetrieverDouble(["x"]);
    const messages = [new HumanMessage("first"), new AIMessage("a"), new HumanMessage("second question")];
    const update = await retrieveNode({ messages, query: "" }, { configurable: { retriever } });
    expect(retriever.calls[0]).toEqual({ query: "second question", options: { turn: 1 } });
    expect(update.retrieval[0]!.turn).toBe(1);
  });

  it("throws typed errors without a retriever or a query", async () => {
    await expect(retrieveNode({ query: "x" }, { configurable: {} })).rejects.toThrow(InvalidArgumentError);
    await expect(retrieveNode({ query: "x" }, { configurable: {} })).rejects.toThrow(
      "Expected `retriever` to be a Retriever",
    );
    const retriever = new RecordingRetrieverDouble(["x"]);
    await expect(retrieveNode({ messages: [] }, { configurable: { retriever } })).rejects.toThrow(
      "Expected `query` to be a non-empty query",
    );
    await expect(retrieveNode({ query: "x" }, { configurable: { retriever, k: -3 } })).rejects.toThrow(
      "Expected `k` to be a positive integer, got -3",
    );
    expect(retriever.calls).toEqual([]);
  });
});

class EventRecorder extends BaseCallbackHandler {
  name = "EventRecorder";
  override awaitHandlers = true;
  events: { name: string; data: unknown; metadata: Record<string, unknown> | undefined }[] = [];
  override handleCustomEvent(
    name: string,
    data: unknown,
    _runId: string,
    _tags?: string[],
    metadata?: Record<string, unknown>,
  ) {
    this.events.push({ name, data, metadata });
  }
}

describe("retrieveNode in a graph", () => {
  it("dispatches the retrieval_trace custom event with the same payload it streams", async () => {
    const State = Annotation.Root({ ...RetrievalAnnotation.spec });
    const graph = new StateGraph(State)
      .addNode("retrieve_docs", retrieveNode)
      .addEdge(START, "retrieve_docs")
      .addEdge("retrieve_docs", END)
      .compile();
    const retriever = new RecordingRetrieverDouble(["refund-timelines"]);
    const recorder = new EventRecorder();
    const chunks: unknown[] = [];
    const stream = await graph.stream(
      { messages: [new HumanMessage("refund time")], locale: "en" },
      {
        configurable: { retriever, thread_id: "no-checkpointer" },
        streamMode: ["updates", "custom"],
        callbacks: [recorder],
      },
    );
    for await (const c of stream) chunks.push(c);
    const custom = chunks.filter((c) => Array.isArray(c) && c[0] === "custom").map((c) => (c as unknown[])[1]);
    const updates = chunks.filter((c) => Array.isArray(c) && c[0] === "updates").map((c) => (c as unknown[])[1]) as {
      retrieve_docs: { retrieval: unknown[] };
    }[];
    expect(custom).toHaveLength(1);
    expect(isRetrievalTraceEvent(custom[0])).toBe(true);
    expect(recorder.events).toHaveLength(1);
    expect(recorder.events[0]!.name).toBe("retrieval_trace");
    expect(recorder.events[0]!.data).toEqual(custom[0]);
    expect(recorder.events[0]!.metadata?.langgraph_node).toBe("retrieve_docs");
    expect(updates[0]!.retrieve_docs.retrieval).toEqual([(custom[0] as RetrievalTraceEvent).trace]);
  });
});

describe("isRetrievalTraceEvent", () => {
  it("accepts the payload shape only", async () => {
    const trace = await new RecordingRetrieverDouble(["a"]).retrieve("q");
    expect(isRetrievalTraceEvent({ type: "retrieval_trace", threadId: null, trace })).toBe(true);
    expect(isRetrievalTraceEvent({ type: "retrieval_trace", threadId: 3, trace })).toBe(false);
    expect(isRetrievalTraceEvent({ type: "other", threadId: null, trace })).toBe(false);
    expect(isRetrievalTraceEvent({ type: "retrieval_trace", threadId: null, trace: {} })).toBe(false);
    expect(isRetrievalTraceEvent(null)).toBe(false);
  });
});
