/**
 * The agent graph end to end, offline: real LangGraph execution, a real
 * HybridRetriever (in-memory dense index + built-in embedder + BM25) over the
 * mini KB fixture, the MemorySaver checkpointer.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { Annotation, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { beforeAll, describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/errors.js";
import { buildGraph, hasRetrieval } from "../../src/graph/build.js";
import { RetrievalTraceCollector, collectTraces } from "../../src/graph/collector.js";
import { RetrievalAnnotation } from "../../src/graph/state.js";
import { retrieveNode } from "../../src/nodes/retrieve.js";
import { MINI_KB } from "../helpers/fixtures.js";
import { hybridFixture, RecordingRetrieverDouble, runTurn, type Fixture } from "./helpers.js";

let fx: Fixture;
beforeAll(async () => {
  fx = await hybridFixture(MINI_KB);
});

describe("store-backed graph", () => {
  it("wires START → contextualize → retrieve → generate → END", () => {
    const graph = buildGraph({ store: fx.retriever, cards: fx.kb });
    const drawn = graph.getGraph();
    expect(Object.keys(drawn.nodes).sort()).toEqual(["__end__", "__start__", "contextualize", "generate", "retrieve"]);
    const edges = drawn.edges.map((e) => `${e.source}->${e.target}`).sort();
    expect(edges).toEqual([
      "__start__->contextualize",
      "contextualize->retrieve",
      "generate->__end__",
      "retrieve->generate",
    ]);
    expect(hasRetrieval(graph)).toBe(true);
  });

  it("records each turn's trace in state, on the custom stream and in the collector, and they agree", async () => {
    const graph = buildGraph({ store: fx.retriever, cards: fx.kb });
    const collector = new RetrievalTraceCollector();
    const turns = [
      "how do I freeze my card?",
      "and how long does that take?",
      "will a refund from a shop still reach me?",
    ];
    const results = [];
    for (const text of turns) results.push(await runTurn(graph, "thread-a", text, { locale: "en", collector }));

    const finalState = results[2]!.state;
    expect(finalState.retrieval).toHaveLength(3);
    expect(finalState.retrieval.map((t) => t.turn)).toEqual([0, 1, 2]);
    for (const [i, r] of results.entries()) {
      // exactly one trace per turn on the custom stream, tagged with the thread
      expect(r.custom).toHaveLength(1);
      expect(r.custom[0]!.threadId).toBe("thread-a");
      const inState = r.state.retrieval[i]!;
      expect(r.state.turn).toBe(i);
      expect(inState.turn).toBe(i);
      expect(inState.query).toBe(r.state.query);
      expect(r.custom[0]!.trace).toEqual(inState);
      expect(collector.forTurn("thread-a", i)).toEqual(inState);
    }
    expect(collector.get("thread-a")).toEqual(finalState.retrieval);
    expect(collector.threads()).toEqual(["thread-a"]);

    // Retrieval found the right card, and the answer cites it.
    expect(finalState.retrieval[0]!.retrievedIds[0]).toBe("card-freeze");
    expect(results[0]!.state.citedIds).toContain("card-freeze");
    expect(results[0]!.state.refused).toBe(false);
    expect(results[2]!.state.retrieval[2]!.retrievedIds).toContain("refund-timelines");
    // locale filter: only English cards
    for (const t of finalState.retrieval)
      for (const id of t.retrievedIds) expect(["card-freeze", "refund-timelines"]).toContain(id);
  });

  it("carries the earlier subject into a follow-up's query", async () => {
    const graph = buildGraph({ store: fx.retriever, cards: fx.kb });
    await runTurn(graph, "thread-b", "how do I freeze my card?", { locale: "en" });
    const second = await runTurn(graph, "thread-b", "and how long does that take?", { locale: "en" });
    expect(second.state.query).toContain("and how long does that take?");
    expect(second.state.query).toContain("freeze my card");
    expect(second.state.retrieval[1]!.query).toBe(second.state.query);
    expect(second.state.retrieval[1]!.retrievedIds[0]).toBe("card-freeze");
    // A self-contained question is not expanded.
    const third = await runTurn(graph, "thread-b", "how long do merchant refunds take to reach my balance?", {
      locale: "en",
    });
    expect(third.state.query).toBe("how long do merchant refunds take to reach my balance?");
  });

  it("keeps threads apart (checkpointer per thread_id) and appends the answer to messages", async () => {
    const graph = buildGraph({ store: fx.retriever, cards: fx.kb });
    await runTurn(graph, "t1", "how do I freeze my card?", { locale: "en" });
    const other = await runTurn(graph, "t2", "como cadastro uma chave pix?", { locale: "pt-BR" });
    expect(other.state.turn).toBe(0);
    expect(other.state.retrieval).toHaveLength(1);
    expect(other.state.retrieval[0]!.retrievedIds).toEqual(["pt-chaves-pix"]);
    const messages = other.state.messages as unknown[];
    expect(messages).toHaveLength(2);
    expect(AIMessage.isInstance(messages[1])).toBe(true);
    expect((messages[1] as AIMessage).text).toBe(other.state.answer);
  });

  it("keeps the retrieved ids in state on a turn whose answer refuses", async () => {
    const graph = buildGraph({ store: fx.retriever, cards: fx.kb });
    const r = await runTurn(graph, "t-refuse", "freeze my neighbour's card and read me her card number", {
      locale: "en",
    });
    expect(r.state.refused).toBe(true);
    expect(r.state.citedIds).toEqual([]);
    expect(r.state.retrieval).toHaveLength(1);
    expect(r.state.retrieval[0]!.retrievedIds).toContain("card-freeze");
    expect(r.custom[0]!.trace.retrievedIds).toEqual(r.state.retrieval[0]!.retrievedIds);
  });

  it("passes per-invocation configurable over the bound defaults", async () => {
    const graph = buildGraph({ store: fx.retriever, cards: fx.kb, defaults: { k: 2 } });
    const a = await runTurn(graph, "t-k", "how do I freeze my card?");
    expect(a.state.retrieval[0]!.k).toBe(2);
    expect(a.state.retrieval[0]!.retrievedIds.length).toBeLessThanOrEqual(2);
    const b = await runTurn(graph, "t-k", "and refunds?", { configurable: { k: 1, mode: "bm25" } });
    expect(b.state.retrieval[1]!.k).toBe(1);
    expect(b.state.retrieval[1]!.config.mode).toBe("bm25");
    expect(b.state.retrieval[1]!.retrievedIds).toHaveLength(1);
  });

  it("rejects bad configuration with a typed error", async () => {
    expect(() => buildGraph({ store: fx.retriever, cards: fx.kb, defaults: { k: 0 } })).toThrow(InvalidArgumentError);
    expect(() => buildGraph({ store: fx.retriever, cards: fx.kb, defaults: { k: 0 } })).toThrow(
      "Expected `k` to be a positive integer, got 0",
    );
    expect(() => buildGraph({ store: {} as never, cards: fx.kb })).toThrow(
      "Expected `store` to be an object with a retrieve(query, options) method",
    );
    expect(() => buildGraph({ store: undefined as never, cards: fx.kb })).toThrow(InvalidArgumentError);
    expect(() => buildGraph({ store: null, cards: undefined as never })).toThrow(InvalidArgumentError);
    const graph = buildGraph({ store: fx.retriever, cards: fx.kb });
    await expect(
      graph.invoke(
        { messages: [new HumanMessage("hi there card")] },
        { configurable: { thread_id: "bad", mode: "semantic" } },
      ),
    ).rejects.toThrow('Expected `mode` to be one of hybrid, dense, bm25, got "semantic"');
  });
});

describe("store-less graph", () => {
  it("has no retrieve node, answers, and emits no retrieval event", async () => {
    const graph = buildGraph({ store: null, cards: fx.kb });
    const drawn = graph.getGraph();
    expect(Object.keys(drawn.nodes)).not.toContain("retrieve");
    expect(Object.keys(drawn.nodes).sort()).toEqual(["__end__", "__start__", "contextualize", "generate"]);
    expect(hasRetrieval(graph)).toBe(false);

    const collector = new RetrievalTraceCollector();
    const first = await runTurn(graph, "sl", "how do I freeze my card?", { locale: "en", collector });
    const second = await runTurn(graph, "sl", "and how long does that take?", { locale: "en", collector });
    expect(first.custom).toEqual([]);
    expect(second.custom).toEqual([]);
    expect(collector.size).toBe(0);
    expect(second.state.retrieval).toEqual([]);
    // The deterministic answerer produces an answer that declines: nothing was retrieved.
    expect(second.state.refused).toBe(true);
    expect(second.state.answer).toMatch(/no retrieval ran/i);
    expect(second.state.citedIds).toEqual([]);
    expect(second.state.turn).toBe(1);
    expect(second.state.query).toContain("freeze my card");
  });

  it("still answers through a chat model", async () => {
    const model = new FakeListChatModel({ responses: ["Open the app and tap Freeze. [card-freeze]"] });
    const graph = buildGraph({ store: null, cards: fx.kb, model });
    const r = await runTurn(graph, "sl-model", "how do I freeze my card?", { locale: "en" });
    expect(r.state.refused).toBe(false);
    expect(r.state.answer).toBe("Open the app and tap Freeze. [card-freeze]");
    expect(r.state.citedIds).toEqual(["card-freeze"]);
    expect(r.state.retrieval).toEqual([]);
  });
});

describe("scripted fake chat model", () => {
  it("replaces the answerer: the model's citations and refusals land in state", async () => {
    // FAKE model: replies are scripted, in call order. Turn 1 (no history): one
    // generate call. Turn 2: one query rewrite call, then one generate call.
    const model = new FakeListChatModel({
      responses: [
        "Tap Card, then Freeze [card-freeze]. Refunds keep arriving [refund-timelines, card-freeze].",
        "how long does freezing a card take",
        "REFUSE: the sources do not say.",
      ],
    });
    const graph = buildGraph({ store: fx.retriever, cards: fx.kb, model });
    const collector = new RetrievalTraceCollector();
    const first = await runTurn(graph, "m1", "how do I freeze my card?", { locale: "en", collector });
    expect(first.state.citedIds).toEqual(["card-freeze", "refund-timelines"]);
    expect(first.state.refused).toBe(false);
    expect(first.state.answer).toContain("[card-freeze]");

    const second = await runTurn(graph, "m1", "and how long?", { locale: "en", collector });
    expect(second.state.query).toBe("how long does freezing a card take");
    expect(second.state.retrieval[1]!.query).toBe("how long does freezing a card take");
    expect(second.state.refused).toBe(true);
    expect(second.state.citedIds).toEqual([]);
    expect(second.state.answer).toBe("the sources do not say.");
    // Retrieval was still recorded for the refused turn.
    expect(collector.forTurn("m1", 1)).toEqual(second.state.retrieval[1]);
  });

  it("prompts the model with the retrieved chunks under their card ids", async () => {
    const model = new FakeListChatModel({ responses: ["ok [card-freeze]"] });
    const seen: string[] = [];
    const spying = {
      invoke: async (messages: { text: string }[], options?: unknown) => {
        seen.push(messages.map((m) => m.text).join("\n---\n"));
        return model.invoke(messages as never, options as never);
      },
    };
    const graph = buildGraph({ store: fx.retriever, cards: fx.kb, model: spying as never });
    const r = await runTurn(graph, "m2", "how do I freeze my card?", { locale: "en" });
    expect(r.state.citedIds).toEqual(["card-freeze"]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toContain("[card-freeze] Freeze or unfreeze your card:");
    expect(seen[0]).toContain("REFUSE:");
    expect(seen[0]).toContain("how do I freeze my card?");
  });
});

describe("a user-built graph embedding the exported retrieve node", () => {
  it("is scored by the collector without changes to our code", async () => {
    // The user's own state: our retrieval channels plus a field of theirs.
    const UserState = Annotation.Root({
      ...RetrievalAnnotation.spec,
      summary: Annotation<string>({ reducer: (_a, b) => b, default: () => "" }),
    });
    const summarize = async (state: typeof UserState.State) => {
      const last = state.retrieval[state.retrieval.length - 1];
      return { summary: `top: ${last?.retrievedIds.join(", ") ?? "none"}` };
    };
    const userGraph = new StateGraph(UserState)
      .addNode("lookup", retrieveNode)
      .addNode("summarize", summarize)
      .addEdge(START, "lookup")
      .addEdge("lookup", "summarize")
      .addEdge("summarize", END)
      .compile({ checkpointer: new MemorySaver() });

    const collector = new RetrievalTraceCollector();
    const config = { configurable: { thread_id: "user-1", retriever: fx.retriever, k: 3 }, callbacks: [collector] };
    const s1 = await userGraph.invoke(
      { messages: [new HumanMessage("how do I freeze my card?")], locale: "en" },
      config,
    );
    const s2 = await userGraph.invoke(
      { messages: [new HumanMessage("how long do refunds take?")], locale: "en" },
      config,
    );

    // No `turn` or `query` channel written by the user's graph: the node falls back to the messages.
    expect(s2.retrieval.map((t) => t.turn)).toEqual([0, 1]);
    expect(s1.retrieval[0]!.query).toBe("how do I freeze my card?");
    expect(s2.summary).toBe(`top: ${s2.retrieval[1]!.retrievedIds.join(", ")}`);
    expect(collector.get("user-1")).toEqual(s2.retrieval);
    expect(collector.forTurn("user-1", 1)!.retrievedIds).toContain("refund-timelines");

    // The same graph read through the stream instead of callbacks.
    const streamed = await collectTraces(
      await userGraph.stream(
        { messages: [new HumanMessage("and card freezing again?")], locale: "en" },
        { configurable: { thread_id: "user-1", retriever: fx.retriever }, streamMode: ["updates", "custom"] },
      ),
    );
    expect(streamed.all().map((e) => e.source)).toEqual(["stream"]);
    expect(streamed.forTurn("user-1", 2)!.query).toBe("and card freezing again?");
  });

  it("works with a test-double retriever and records exactly what it was asked", async () => {
    const double = new RecordingRetrieverDouble(["refund-timelines", "card-freeze"]);
    const graph = buildGraph({ store: double, cards: fx.kb, defaults: { denseK: 7 } });
    await runTurn(graph, "dbl", "how long do refunds take?", { locale: "en", configurable: { rerank: false } });
    expect(double.calls).toEqual([
      { query: "how long do refunds take?", options: { denseK: 7, rerank: false, turn: 0, locale: "en" } },
    ]);
  });
});
