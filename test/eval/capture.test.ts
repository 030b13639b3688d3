/**
 * RetrieverCapture and the graph sweep over real LangGraph graphs and real
 * LangChain retrievers (a BaseRetriever subclass, EnsembleRetriever, a tool,
 * a subgraph). Expected ids are written out by hand from the fixed rankings.
 */
import { Document } from "@langchain/core/documents";
import { BaseRetriever } from "@langchain/core/retrievers";
import type { CallbackManagerForRetrieverRun } from "@langchain/core/callbacks/manager";
import { tool } from "@langchain/core/tools";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, END, MessagesAnnotation, Send, START, StateGraph } from "@langchain/langgraph";
import { EnsembleRetriever } from "@langchain/classic/retrievers/ensemble";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  cardIdsOf,
  DOCUMENT_TEXT_MAX,
  documentId,
  RetrieverCapture,
  retrievalSteps,
  scoredDocuments,
  selectRetrieval,
  type CapturedRetrieverRun,
} from "../../src/eval/sweep/capture.js";
import { retrievalEvaluator } from "../../src/eval/measures/evaluators.js";
import { graphGateFailures, runGraphSweep } from "../../src/eval/sweep/external-graph.js";
import { GraphInputError } from "../../src/errors.js";
import type { EvalCase } from "../../src/kb/types.js";

/** A custom retriever returning a fixed list of documents (chunk-level: metadata.parentId) for any query. */
class FixedRetriever extends BaseRetriever {
  override lc_namespace = ["test", "fixed"];
  constructor(private readonly docs: Document[]) {
    super({});
  }
  static override lc_name() {
    return "FixedRetriever";
  }
  override async _getRelevantDocuments(_q: string, _rm?: CallbackManagerForRetrieverRun): Promise<Document[]> {
    return this.docs;
  }
}

/** The run name LangChain reports is the retriever's class name (lc_name). */
const named = (name: string) =>
  class extends FixedRetriever {
    static override lc_name() {
      return name;
    }
  };
const BM25Child = named("BM25Child");
const VectorChild = named("VectorChild");
const ToolRetriever = named("ToolRetriever");

const chunk = (card: string, n: number, text = `${card} ${n}`) =>
  new Document({ pageContent: text, metadata: { parentId: card, chunk: n } });

function retrieveGraph(retriever: BaseRetriever, calls = 1) {
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state, config) => {
      const q = String(state.messages[state.messages.length - 1]?.content ?? "");
      let docs: Document[] = [];
      for (let i = 0; i < calls; i++) docs = await retriever.invoke(q, config);
      return { messages: [new AIMessage(`found ${docs.length}`)] };
    })
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile();
}

const oneCase = (gold: string[], turns = 1): EvalCase => ({
  id: "c1",
  locale: "en",
  kind: "golden",
  line: 1,
  turns: Array.from({ length: turns }, (_, i) => ({
    user: `question ${i}`,
    must_cite_one_of: gold,
    expect: "answer" as const,
  })),
});

describe("document ids", () => {
  it("tries parentId, doc_id, id, source, then Document.id; --id-key replaces the chain; --id-map wins", () => {
    expect(documentId(new Document({ pageContent: "x", metadata: { source: "s", doc_id: "d" } }))).toBe("d");
    expect(documentId(new Document({ pageContent: "x", metadata: { source: "kb/a.md" } }))).toBe("kb/a.md");
    expect(documentId(new Document({ pageContent: "x", metadata: {}, id: "doc-7" }))).toBe("doc-7");
    expect(
      documentId(new Document({ pageContent: "x", metadata: { card: "c", parentId: "p" } }), { idKey: "card" }),
    ).toBe("c");
    expect(
      documentId(new Document({ pageContent: "x", metadata: { parentId: "p" } }), {
        idMap: (d) => `m-${d.pageContent}`,
      }),
    ).toBe("m-x");
  });

  it("collapses chunks to their card by first occurrence", () => {
    expect(cardIdsOf([chunk("a", 1), chunk("b", 1), chunk("a", 2), chunk("c", 1)], {}, "t")).toEqual(["a", "b", "c"]);
  });

  it("throws naming the keys tried and the metadata keys present", () => {
    const bad = new Document({ pageContent: "x", metadata: { title: "t", url: "u" } });
    expect(() => cardIdsOf([chunk("a", 1), bad], {}, "case c1 turn 0")).toThrowError(GraphInputError);
    expect(() => cardIdsOf([bad], {}, "case c1 turn 0")).toThrowError(
      /case c1 turn 0: document 1 .*tried metadata\.parentId, metadata\.doc_id, metadata\.id, metadata\.source, Document\.id; metadata keys present: title, url/,
    );
  });
});

describe("RetrieverCapture in a real graph", () => {
  it("records query, documents, name and tags; EnsembleRetriever children become child stages", async () => {
    const bm25 = new BM25Child([chunk("x", 1), chunk("gold", 1), chunk("y", 1)]);
    const vec = new VectorChild([chunk("z", 1), chunk("y", 1)]);
    const ensemble = new EnsembleRetriever({ retrievers: [bm25, vec], weights: [0.5, 0.5] });
    const capture = new RetrieverCapture();
    await retrieveGraph(ensemble).invoke({ messages: [{ role: "user", content: "hello" }] }, { callbacks: [capture] });
    const runs = capture.runs();
    expect(runs.map((r) => r.name)).toEqual(["EnsembleRetriever", "BM25Child", "VectorChild"]);
    expect(runs[0]!.query).toBe("hello");
    expect(runs[1]!.tags).toContain("retriever_1");
    expect(capture.topLevel().map((r) => r.name)).toEqual(["EnsembleRetriever"]);
    const sel = selectRetrieval(capture, "last", {}, "t")!;
    expect(sel.stages.map((s) => [s.key, s.role, s.ids])).toEqual([
      ["BM25Child", "child", ["x", "gold", "y"]],
      ["VectorChild", "child", ["z", "y"]],
      // RRF (fused by page text) with equal weights 0.5, c=60: y 0.5/63 + 0.5/62, x 0.5/61, z 0.5/61, gold 0.5/62 → y first, gold last
      ["EnsembleRetriever", "final", sel.retrievedIds],
    ]);
    expect(sel.retrievedIds[0]).toBe("y");
    expect(sel.retrievedIds[sel.retrievedIds.length - 1]).toBe("gold");
    expect(sel.noChildRuns).toEqual([]);
  });

  it("captures a retriever inside a tool inside a subgraph; a plain retriever reports no child runs", async () => {
    const inner = new ToolRetriever([chunk("t1", 1), chunk("t2", 1)]);
    const search = tool(
      async ({ q }: { q: string }, config) => (await inner.invoke(q, config)).map((d) => d.pageContent).join("\n"),
      {
        name: "search",
        description: "search",
        schema: z.object({ q: z.string() }),
      },
    );
    const sub = new StateGraph(MessagesAnnotation)
      .addNode("call", async (s, config) => {
        await search.invoke({ q: String(s.messages[s.messages.length - 1]?.content) }, config);
        return { messages: [new AIMessage("done")] };
      })
      .addEdge(START, "call")
      .compile();
    const outer = new StateGraph(MessagesAnnotation).addNode("sub", sub).addEdge(START, "sub").compile();
    const capture = new RetrieverCapture();
    await outer.invoke({ messages: [{ role: "user", content: "q" }] }, { callbacks: [capture] });
    const sel = selectRetrieval(capture, "last", {}, "t")!;
    expect(sel.retrievedIds).toEqual(["t1", "t2"]);
    expect(sel.noChildRuns).toEqual(["ToolRetriever"]);
  });
});

describe("runGraphSweep", () => {
  it("scores last / first / all top-level calls", async () => {
    class Alternating extends BaseRetriever {
      override lc_namespace = ["test"];
      n = 0;
      override async _getRelevantDocuments(): Promise<Document[]> {
        this.n += 1;
        return this.n % 2 === 1 ? [chunk("a", 1), chunk("b", 1)] : [chunk("b", 2), chunk("c", 1)];
      }
    }
    const evaluators = [retrievalEvaluator({ k: 3 })];
    const run = async (call: "last" | "first" | "all") => {
      const [t] = await runGraphSweep({
        graph: retrieveGraph(new Alternating(), 2),
        cases: [oneCase(["c"])],
        evaluators,
        knownIds: new Set(),
        k: 3,
        retrievalCall: call,
      });
      return t!.report;
    };
    expect((await run("last")).retrievedIds).toEqual(["b", "c"]);
    expect((await run("first")).retrievedIds).toEqual(["a", "b"]);
    const all = await run("all");
    expect(all.retrievedIds).toEqual(["a", "b", "c"]);
    // hit@3 = 1 (c at rank 3); nDCG@3 = (1/log2 4) / 1 = 0.5
    expect(all.results.find((r) => r.key === "retrieval_hit_at_k")?.score).toBe(1);
    expect(all.results.find((r) => r.key === "retrieval_ndcg_at_k")?.score).toBeCloseTo(0.5, 10);
    expect((await run("first")).results.find((r) => r.key === "retrieval_hit_at_k")?.score).toBe(0);
  });

  it("records a throwing turn as an error and judges a retrieval-less turn by its gold; the gate counts errors, and no-retrieval misses when asked", async () => {
    let calls = 0;
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("agent", async () => {
        calls += 1;
        if (calls === 1) throw new Error("model exploded");
        return { messages: [new AIMessage("no search needed")] };
      })
      .addEdge(START, "agent")
      .compile();
    const cases = [oneCase(["a"], 2), { ...oneCase([], 1), id: "c2" }];
    const turns = await runGraphSweep({
      graph,
      cases,
      evaluators: [retrievalEvaluator({ k: 5 })],
      knownIds: new Set(),
      k: 5,
    });
    expect(turns[0]!.report.error).toBe("model exploded");
    expect(turns[0]!.report.results).toEqual([]);
    // Gold-bearing, no retriever run: a miss (every retrieval metric 0), labelled "no retrieval".
    const miss = turns[1]!.report;
    expect(miss.noRetrieval).toBe(true);
    expect(miss.retrievedIds).toEqual([]);
    expect(miss.results.map((r) => [r.key, r.score])).toEqual([
      ["retrieval_hit_at_k", 0],
      ["retrieval_recall_at_k", 0],
      ["retrieval_ndcg_at_k", 0],
      ["retrieval_mrr_at_k", 0],
      ["retrieval_precision_at_k", 0],
    ]);
    expect(miss.results[0]!.comment).toMatch(/^no retrieval \(the turn made no retriever run\): hit=0 /);
    // Empty gold, no retriever run: fine (none needed), nothing scored.
    expect(turns[2]!.report).toMatchObject({ noRetrieval: true, retrievedIds: [], results: [] });
    const reports = turns.map((t) => t.report);
    expect(graphGateFailures(reports, {}).map((f) => f.kind)).toEqual(["turn_errors"]);
    expect(graphGateFailures(reports, { maxErrors: 1 })).toEqual([]);
    expect(graphGateFailures(reports, { maxErrors: 1, maxNoRetrieval: 0 })).toEqual([
      {
        kind: "no_retrieval",
        key: "no_retrieval",
        reason:
          "1 gold-bearing turn made no retriever run (no retrieval; scored as misses; allowed: 0, --gate max-no-retrieval): c1#1",
      },
    ]);
    expect(graphGateFailures(reports, { maxErrors: 1, maxNoRetrieval: 1 })).toEqual([]);
    // Deprecated: no effect either way.
    expect(
      graphGateFailures(reports, { maxErrors: 1, maxNoRetrieval: 0, allowNoRetrieval: true }).map((f) => f.kind),
    ).toEqual(["no_retrieval"]);
  });

  it("scores the last retrieval step by default: parallel calls (a Send() fan-out) are one step, all its calls scored in start order", async () => {
    const Fan = Annotation.Root({ ...MessagesAnnotation.spec, q: Annotation<string>() });
    class QueryRetriever extends BaseRetriever {
      override lc_namespace = ["test"];
      static override lc_name() {
        return "QueryRetriever";
      }
      override async _getRelevantDocuments(q: string): Promise<Document[]> {
        return [chunk(`${q}-1`, 1), chunk("shared", 1), chunk(`${q}-2`, 1)];
      }
    }
    const r = new QueryRetriever();
    // A sequential call first (step 1), then a fan-out of three parallel calls (step 2).
    const graph = new StateGraph(Fan)
      .addNode("first", async (_s, config) => {
        await r.invoke("pre", config);
        return {};
      })
      .addNode("search", async (s, config) => {
        await r.invoke(s.q, config);
        return {};
      })
      .addEdge(START, "first")
      .addConditionalEdges("first", () => ["a", "b", "c"].map((q) => new Send("search", { q })))
      .addEdge("search", END)
      .compile();
    const run = async (call: "last" | "first" | "all") => {
      const [t] = await runGraphSweep({
        graph,
        cases: [oneCase(["b-1"])],
        evaluators: [retrievalEvaluator({ k: 10 })],
        knownIds: new Set(),
        k: 10,
        retrievalCall: call,
      });
      return t!.report;
    };
    const last = await run("last");
    expect(last.retrievedIds).toEqual(["a-1", "shared", "a-2", "b-1", "b-2", "c-1", "c-2"]);
    expect(last.captured).toMatchObject({
      topLevelRuns: 4,
      steps: 2,
      retrievers: ["QueryRetriever", "QueryRetriever", "QueryRetriever"],
    });
    expect(last.results.find((x) => x.key === "retrieval_hit_at_k")?.score).toBe(1);
    expect((await run("first")).retrievedIds).toEqual(["pre-1", "shared", "pre-2"]);
    expect((await run("all")).retrievedIds).toEqual([
      "pre-1",
      "shared",
      "pre-2",
      "a-1",
      "a-2",
      "b-1",
      "b-2",
      "c-1",
      "c-2",
    ]);
  });

  it("keeps the thread's history across turns (an in-memory checkpointer is added by loadGraph; here compiled with one)", async () => {
    const seen: number[] = [];
    const { MemorySaver } = await import("@langchain/langgraph");
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("agent", async (s) => {
        seen.push(s.messages.length);
        return { messages: [new AIMessage("ok")] };
      })
      .addEdge(START, "agent")
      .compile({ checkpointer: new MemorySaver() });
    await runGraphSweep({ graph, cases: [oneCase([], 2)], evaluators: [], knownIds: new Set(), k: 5 });
    expect(seen).toEqual([1, 3]);
  });

  it("refuses a graph without a messages channel unless --input maps the turn", async () => {
    const State = Annotation.Root({ question: Annotation<string>(), hits: Annotation<string[]>() });
    const r = new FixedRetriever([chunk("a", 1)]);
    const graph = new StateGraph(State)
      .addNode("go", async (s, config) => ({
        hits: (await r.invoke(s.question, config)).map((d) => String(d.metadata.parentId)),
      }))
      .addEdge(START, "go")
      .compile();
    await expect(
      runGraphSweep({ graph, cases: [oneCase(["a"])], evaluators: [], knownIds: new Set(), k: 5 }),
    ).rejects.toThrow(/no "messages" channel .*hits, question/);
    const turns = await runGraphSweep({
      graph,
      cases: [oneCase(["a"])],
      evaluators: [],
      knownIds: new Set(),
      k: 5,
      input: (t) => ({ question: t.user }),
    });
    expect(turns[0]!.report.retrievedIds).toEqual(["a"]);
  });

  it("never hands a turn's assistant context to the graph: the --input mapper gets the turn and the case without it", async () => {
    const seen: unknown[] = [];
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("agent", async (st) => {
        seen.push(st.messages.map((m) => m.content));
        return { messages: [new AIMessage("ok")] };
      })
      .addEdge(START, "agent")
      .compile();
    const base = oneCase(["a"], 2);
    const c: EvalCase = {
      ...base,
      turns: base.turns.map((t) => ({
        ...t,
        context: [{ role: "assistant" as const, content: "did the light turn green?" }],
      })),
    };
    const mapped: unknown[] = [];
    await runGraphSweep({
      graph,
      cases: [c],
      evaluators: [],
      knownIds: new Set(),
      k: 5,
      input: (t, ec) => {
        mapped.push([Object.keys(t).sort(), ec.turns.map((x) => "context" in x)]);
        return { messages: [new HumanMessage(t.user)] };
      },
    });
    expect(mapped).toEqual([
      [
        ["expect", "index", "must_cite_one_of", "user"],
        [false, false],
      ],
      [
        ["expect", "index", "must_cite_one_of", "user"],
        [false, false],
      ],
    ]);
    // The default input too: the user's text alone.
    await runGraphSweep({ graph, cases: [c], evaluators: [], knownIds: new Set(), k: 5 });
    expect(JSON.stringify(seen)).not.toContain("did the light turn green?");
  });
});

describe("retrievalSteps", () => {
  const run = (order: number, startSeq: number, endSeq: number | null): CapturedRetrieverRun => ({
    runId: `r${order}`,
    parentRunId: null,
    retrieverParentRunId: null,
    name: "R",
    tags: [],
    query: "q",
    order,
    startSeq,
    endSeq,
    documents: [],
    error: null,
  });
  it("groups runs that overlap in time (interval union) and keeps sequential runs apart", () => {
    const steps = (rs: CapturedRetrieverRun[]) => retrievalSteps(rs).map((s) => s.map((r) => r.order));
    // sequential: a ends before b starts
    expect(steps([run(0, 0, 1), run(1, 2, 3)])).toEqual([[0], [1]]);
    // parallel: all start before any ends
    expect(steps([run(0, 0, 3), run(1, 1, 4), run(2, 2, 5)])).toEqual([[0, 1, 2]]);
    // chained overlap: b overlaps a, c overlaps b only → one step; d after all → its own
    expect(steps([run(0, 0, 2), run(1, 1, 4), run(2, 3, 5), run(3, 6, 7)])).toEqual([[0, 1, 2], [3]]);
    // a run that never ended overlaps everything after it
    expect(steps([run(0, 0, null), run(1, 5, 6)])).toEqual([[0, 1]]);
  });
});

describe("scoredDocuments: the top-k's page contents a report keeps", () => {
  it("keeps rank order and 1-based ranks, the first text of a card, leaves out ids with no text, and cuts at DOCUMENT_TEXT_MAX code points", () => {
    expect(DOCUMENT_TEXT_MAX).toBe(600);
    // "😀" is one code point and two UTF-16 units: 601 of them are cut to 600 (1200 units), never in half a pair.
    const long = "😀".repeat(601);
    const docs = scoredDocuments(["a", "b", "c", "d"], {
      a: ["first a", "second a"],
      c: [long],
      d: ["x".repeat(600)],
      z: ["not in the top-k"],
    });
    expect(docs.map((d) => [d.rank, d.id, d.truncated])).toEqual([
      [1, "a", undefined],
      [3, "c", true],
      [4, "d", undefined],
    ]);
    expect(docs[0]!.text).toBe("first a");
    expect(docs[1]!.text).toBe("😀".repeat(600));
    expect(docs[1]!.text.length).toBe(1200);
    expect(docs[2]!.text).toHaveLength(600);
    expect(scoredDocuments([], { a: ["t"] })).toEqual([]);
    // An id named like an Object.prototype key has no text unless given one.
    expect(scoredDocuments(["constructor"], {})).toEqual([]);
  });
});
