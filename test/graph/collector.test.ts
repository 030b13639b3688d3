/**
 * RetrievalTraceCollector and collectTraces: thread/turn bookkeeping, where
 * the thread id comes from, stream chunk shapes, and concurrent threads on one
 * compiled graph.
 */
import { HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { buildGraph } from "../../src/graph/build.js";
import { RetrievalTraceCollector, collectTraces, traceEventOfChunk } from "../../src/graph/collector.js";
import type { RetrievalTrace } from "../../src/retrieval/types.js";
import { MINI_KB } from "../helpers/fixtures.js";
import { hybridFixture, RecordingRetrieverDouble } from "./helpers.js";

async function trace(turn: number, ids: string[] = ["a"]): Promise<RetrievalTrace> {
  return new RecordingRetrieverDouble(ids).retrieve(`q${turn}`, { turn });
}

describe("RetrievalTraceCollector", () => {
  it("groups by thread, finds a turn (latest wins), lists and clears", async () => {
    const c = new RetrievalTraceCollector();
    const t0 = await trace(0);
    const t1 = await trace(1);
    const t1again = await trace(1, ["b"]);
    c.handleCustomEvent("retrieval_trace", { type: "retrieval_trace", threadId: null, trace: t0 }, "run", [], {
      thread_id: "x",
    });
    c.handleCustomEvent("retrieval_trace", { type: "retrieval_trace", threadId: "y", trace: t1 }, "run", [], {});
    c.handleCustomEvent("retrieval_trace", { type: "retrieval_trace", threadId: "y", trace: t1again }, "run");
    c.handleCustomEvent("something_else", { type: "retrieval_trace", threadId: "y", trace: t0 }, "run");
    c.handleCustomEvent("retrieval_trace", { not: "a trace" }, "run");
    expect(c.size).toBe(3);
    expect(c.threads()).toEqual(["x", "y"]);
    expect(c.get("x")).toEqual([t0]);
    expect(c.get("y")).toEqual([t1, t1again]);
    expect(c.get("nobody")).toEqual([]);
    expect(c.forTurn("y", 1)).toBe(t1again);
    expect(c.forTurn("y", 0)).toBeUndefined();
    expect(c.all().map((e) => [e.threadId, e.source])).toEqual([
      ["x", "callback"],
      ["y", "callback"],
      ["y", "callback"],
    ]);
    c.clear();
    expect(c.size).toBe(0);
    expect(c.all()).toEqual([]);
  });

  it("prefers the run metadata's thread id over the payload's, and keeps null when neither has one", async () => {
    const c = new RetrievalTraceCollector();
    const t = await trace(0);
    c.handleCustomEvent("retrieval_trace", { type: "retrieval_trace", threadId: "payload", trace: t }, "run", [], {
      thread_id: "metadata",
    });
    c.handleCustomEvent("retrieval_trace", { type: "retrieval_trace", threadId: null, trace: t }, "run", [], {});
    expect(c.threads()).toEqual(["metadata", null]);
    expect(c.get(null)).toEqual([t]);
  });
});

describe("traceEventOfChunk / collectTraces", () => {
  it("reads [mode, payload], [namespace, mode, payload] and bare payloads; ignores the rest", async () => {
    const t = await trace(0);
    const e = { type: "retrieval_trace" as const, threadId: "s", trace: t };
    expect(traceEventOfChunk(["custom", e])).toBe(e);
    expect(traceEventOfChunk([["sub:1"], "custom", e])).toBe(e);
    expect(traceEventOfChunk(e)).toBe(e);
    expect(traceEventOfChunk(["updates", e])).toBeUndefined();
    expect(traceEventOfChunk(["custom", { type: "progress" }])).toBeUndefined();
    expect(traceEventOfChunk("custom")).toBeUndefined();

    async function* stream() {
      yield ["updates", { retrieve: {} }];
      yield ["custom", e];
      yield ["custom", { type: "progress" }];
      yield [["sub:1"], "custom", { ...e, threadId: "other" }];
    }
    const seen: unknown[] = [];
    const into = new RetrievalTraceCollector();
    const c = await collectTraces(stream(), { into, onChunk: (x) => seen.push(x) });
    expect(c).toBe(into);
    expect(seen).toHaveLength(4);
    expect(c.threads()).toEqual(["s", "other"]);
    expect(c.all().every((x) => x.source === "stream")).toBe(true);
  });

  it("separates concurrent threads of one compiled graph", async () => {
    const { kb, retriever } = await hybridFixture(MINI_KB);
    const graph = buildGraph({ store: retriever, cards: kb });
    const collector = new RetrievalTraceCollector();
    const conversation = (thread: string, texts: string[], locale: "en" | "es-419") =>
      (async () => {
        for (const text of texts)
          await graph.invoke(
            { messages: [new HumanMessage(text)], locale },
            { configurable: { thread_id: thread }, callbacks: [collector] },
          );
      })();
    await Promise.all([
      conversation("en-thread", ["how do I freeze my card?", "and refunds?", "how long do refunds take?"], "en"),
      conversation("es-thread", ["¿cómo congelo mi tarjeta?", "¿y luego?"], "es-419"),
    ]);
    expect(collector.get("en-thread").map((t) => t.turn)).toEqual([0, 1, 2]);
    expect(collector.get("es-thread").map((t) => t.turn)).toEqual([0, 1]);
    for (const t of collector.get("es-thread")) expect(t.retrievedIds).toEqual(["es-congelar-tarjeta"]);
    const state = await graph.getState({ configurable: { thread_id: "en-thread" } });
    expect(collector.get("en-thread")).toEqual((state.values as { retrieval: RetrievalTrace[] }).retrieval);
  });
});
