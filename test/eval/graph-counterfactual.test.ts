/**
 * Query attribution of a graph of your own (`--graph --counterfactual`;
 * src/eval/sweep/graph-counterfactual.ts, ./retriever-instances.ts,
 * docs/query-attribution.md) on real LangGraph graphs in process: the
 * instance that ran the scored call is invoked again with the raw message and
 * the standalone question, its documents mapped by the same id rule; the
 * turn's own scores and capture are the same with and without it; every turn
 * that cannot be attributed says why (no crash); the recorder's wrap of
 * BaseRetriever.invoke is gone after the sweep. The CLI path is in
 * test/cli/graph-counterfactual.int.test.ts.
 */
import { Document } from "@langchain/core/documents";
import { CallbackManager } from "@langchain/core/callbacks/manager";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { BaseRetriever } from "@langchain/core/retrievers";
import type { RunnableConfig } from "@langchain/core/runnables";
import { Annotation, END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { retrievalEvaluator } from "../../src/eval/measures/evaluators.js";
import { runGraphSweep, type EvaluableGraph, type GraphSweepOptions } from "../../src/eval/sweep/external-graph.js";
import {
  baseRetrieverOf,
  baseRetrieversFor,
  recordRetrieverInvocations,
} from "../../src/eval/sweep/retriever-instances.js";
import type { EvalCase } from "../../src/kb/types.js";

const words = (s: string) => new Set(s.toLowerCase().match(/[a-z]{3,}/g) ?? []);

/** Term-overlap search over (card, text) pairs; documents carry the card id under `metadata.card`. `boom` in a query throws, `hang` never settles. */
class TermRetriever extends BaseRetriever {
  override lc_namespace = ["test", "retrievers"];
  calls: string[] = [];
  constructor(private readonly cards: [string, string][]) {
    super({});
  }
  override async _getRelevantDocuments(query: string): Promise<Document[]> {
    this.calls.push(query);
    if (query.includes("boom")) throw new Error("backend exploded");
    if (query.includes("hang")) await new Promise(() => {});
    const q = words(query);
    return this.cards
      .map(([card, text]) => ({ card, text, score: [...words(text)].filter((w) => q.has(w)).length }))
      .filter((x) => x.score > 0)
      .sort((a, b) => b.score - a.score || (a.card < b.card ? -1 : 1))
      .map((x) => new Document({ pageContent: x.text, metadata: { card: x.card } }));
  }
}

const CARDS: [string, string][] = [
  ["card-freeze", "freeze unfreeze card"],
  ["refund-timelines", "refund arrive days"],
  ["fees", "fee charge"],
];

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  query: Annotation<string>({ reducer: (_a, b) => b, default: () => "" }),
});

/**
 * condense (every user message so far, joined; `drop` drops the history) →
 * search. A message with `skip` makes no retriever run, `crash` throws,
 * `manual` reports its retriever run through callbacks alone (no BaseRetriever).
 */
function condenseGraph(retriever: TermRetriever, drop = false) {
  const g = new StateGraph(State)
    .addNode("condense", async (s) => {
      const users = s.messages.filter((m) => m instanceof HumanMessage).map((m) => String(m.content));
      return { query: drop ? (users[users.length - 1] ?? "") : users.join(" ") };
    })
    .addNode("search", async (s, config) => {
      if (s.query.includes("crash")) throw new Error("node crashed");
      if (s.query.includes("skip")) return { messages: [new AIMessage("no search")] };
      if (s.query.includes("manual")) {
        const cm = await CallbackManager.configure((config as RunnableConfig).callbacks);
        const run = await cm?.handleRetrieverStart({ lc: 1, type: "not_implemented", id: ["ManualSearch"] }, s.query);
        await run?.handleRetrieverEnd([new Document({ pageContent: "x", metadata: { card: "fees" } })]);
        return { messages: [new AIMessage("manual")] };
      }
      const docs = await retriever.invoke(s.query, config);
      return { messages: [new AIMessage(`found ${docs.length}`)] };
    })
    .addEdge(START, "condense")
    .addEdge("condense", "search")
    .addEdge("search", END);
  return g.compile({ checkpointer: new MemorySaver() }) as unknown as EvaluableGraph;
}

const KNOWN = new Set(CARDS.map(([c]) => c));
function sweep(graph: EvaluableGraph, cases: EvalCase[], over: Partial<GraphSweepOptions> = {}) {
  return runGraphSweep({
    graph,
    cases,
    evaluators: [retrievalEvaluator({ k: 1 })],
    knownIds: KNOWN,
    k: 1,
    idKey: "card",
    concurrency: 1,
    ...over,
  });
}

const FREEZE: EvalCase = {
  id: "c-freeze",
  line: 1,
  locale: "en",
  kind: "golden",
  turns: [
    { user: "how do I freeze my card", must_cite_one_of: ["card-freeze"], expect: "answer" },
    {
      user: "and undo that later?",
      must_cite_one_of: ["card-freeze"],
      expect: "answer",
      standalone: "how do I unfreeze my card",
    },
    { user: "do you sell mortgages", must_cite_one_of: [], expect: "refuse" },
  ],
};

describe("eval --graph --counterfactual in process", () => {
  it("re-invokes the scored call's retriever with the raw message and the standalone question; the turn's scores and capture do not change", async () => {
    const original = BaseRetriever.prototype.invoke;
    const off = new TermRetriever(CARDS);
    const on = new TermRetriever(CARDS);
    const plain = await sweep(condenseGraph(off), [FREEZE]);
    const attributed = await sweep(condenseGraph(on), [FREEZE], { counterfactual: true });
    // Without it: one retriever call per turn and nothing else.
    expect(off.calls).toEqual([
      "how do I freeze my card",
      "how do I freeze my card and undo that later?",
      "how do I freeze my card and undo that later? do you sell mortgages",
    ]);
    expect(
      plain.every(
        (t) =>
          t.report.queries === undefined &&
          t.report.counterfactualCalls === undefined &&
          t.report.queriesOff === undefined,
      ),
    ).toBe(true);
    // With it: turn 0's raw message is the graph's query (no call); turn 1 adds its raw message and its oracle; the no-gold turn nothing.
    expect(on.calls).toEqual([
      ...off.calls.slice(0, 2),
      "and undo that later?",
      "how do I unfreeze my card",
      off.calls[2],
    ]);
    expect(
      attributed.map((t) => [
        t.report.turn,
        t.report.queries?.attribution ?? null,
        t.report.counterfactualCalls ?? null,
      ]),
    ).toEqual([
      [0, "ok", 0],
      [1, "rewrite_rescued_it", 2],
      [2, null, null],
    ]);
    // Ids mapped by --id-key card, as the scored call's: ranks of the gold card in each list.
    const q1 = attributed[1]!.report.queries!;
    expect([q1.graph.rank, q1.raw.rank, q1.standalone?.rank]).toEqual([1, null, 1]);
    expect([q1.graph.query, q1.raw.query, q1.standalone?.query]).toEqual([
      "how do I freeze my card and undo that later?",
      "and undo that later?",
      "how do I unfreeze my card",
    ]);
    // The turn's own scores and captured runs are the same with and without it.
    expect(attributed.map((t) => [t.report.results, t.report.captured, t.report.retrievedIds])).toEqual(
      plain.map((t) => [t.report.results, t.report.captured, t.report.retrievedIds]),
    );
    // The wrap is removed once the sweep is done.
    expect(BaseRetriever.prototype.invoke).toBe(original);
  });

  it("a broken condense step (history dropped) makes the follow-up `rewrite lost it`", async () => {
    const r = new TermRetriever(CARDS);
    const turns = await sweep(condenseGraph(r, true), [FREEZE], { counterfactual: true });
    expect(turns.map((t) => t.report.queries?.attribution ?? null)).toEqual(["ok", "rewrite_lost_it", null]);
    // The raw message is the graph's query: only the oracle is retrieved again.
    expect(turns[1]!.report.counterfactualCalls).toBe(1);
  });

  it("a turn that cannot be attributed says why, and the sweep goes on", async () => {
    const r = new TermRetriever(CARDS);
    const one = (id: string, user: string, standalone?: string): EvalCase => ({
      id,
      line: 1,
      locale: "en",
      kind: "golden",
      turns: [
        { user, must_cite_one_of: ["fees"], expect: "answer", ...(standalone !== undefined ? { standalone } : {}) },
      ],
    });
    // The first gold-bearing turn with a retriever run (c-fine; concurrency 1) re-invokes its retriever: later turns that cannot be attributed keep their reasons.
    const cases = [
      one("c-crash", "crash please"),
      one("c-skip", "skip the search"),
      one("c-fine", "fee"),
      one("c-manual", "manual search", "what fee"),
      one("c-boom", "what fee do you charge", "boom fee"),
      one("c-hang", "what fee do you charge", "hang fee"),
    ];
    const turns = await sweep(condenseGraph(r), cases, { counterfactual: true, turnTimeoutMs: 300 });
    expect(
      turns.map((t) => [
        t.report.caseId,
        t.report.queriesOff?.reason ?? null,
        t.report.queries?.attribution ?? null,
        t.report.counterfactualCalls,
      ]),
    ).toEqual([
      ["c-crash", "turn_error", null, 0],
      ["c-skip", "no_retrieval", null, 0],
      ["c-fine", null, "ok", 0],
      ["c-manual", "not_reinvocable", null, 0],
      ["c-boom", "retriever_error", null, 1],
      ["c-hang", "given_up", null, 1],
    ]);
    expect(turns[4]!.report.queriesOff?.detail).toContain("backend exploded");
    expect(turns[5]!.report.queriesOff?.detail).toContain("deadline (run.turnTimeout)");
    expect(turns[3]!.report.queriesOff?.detail).toContain("ManualSearch");
    // The turns' own outcomes stand: the boom and hang turns are scored hits of their own query.
    expect(turns[4]!.report.results.find((x) => x.key === "retrieval_hit_at_k")?.score).toBe(1);
  });

  it("refuses (exit 2) when the first gold-bearing turn with a retriever run cannot be re-invoked; turns before it that failed or made no run do not decide", async () => {
    const r = new TermRetriever(CARDS);
    const one = (id: string, user: string): EvalCase => ({
      id,
      line: 1,
      locale: "en",
      kind: "golden",
      turns: [{ user, must_cite_one_of: ["fees"], expect: "answer" }],
    });
    const cases = [
      one("c-crash", "crash please"),
      one("c-skip", "skip the search"),
      one("c-manual", "manual search"),
      one("c-fine", "fee"),
    ];
    const refused = sweep(condenseGraph(r), cases, { counterfactual: true });
    await expect(refused).rejects.toMatchObject({
      code: "INVALID_GRAPH",
      exitCode: 2,
      message: expect.stringMatching(
        /^--counterfactual: the graph's scored retriever ManualSearch cannot be re-invoked \(case c-manual turn 0, the first gold-bearing turn with a retriever run\)/,
      ),
    });
    // Stopped there: c-fine never ran (its retriever was never called), and the wrap is gone.
    expect(r.calls).toEqual([]);
    expect(Object.getOwnPropertySymbols(BaseRetriever.prototype).map(String)).not.toContain(
      "Symbol(retrace-eval.retrieverInvokeRecorder)",
    );
    // Without --counterfactual the same cases run to the end.
    expect(await sweep(condenseGraph(r), cases)).toHaveLength(4);
  });
});

describe("concurrent cases", () => {
  it("each turn's own retriever instance is the one invoked again, at any concurrency, with the same attributions", async () => {
    /** A retriever made per turn, remembering its case; it answers after a delay that depends on the query, so calls of different cases interleave. */
    class SlowRetriever extends TermRetriever {
      constructor(readonly caseTag: string) {
        super(CARDS);
      }
      override async _getRelevantDocuments(query: string): Promise<Document[]> {
        await new Promise((r) => setTimeout(r, (query.length * 7) % 23));
        return super._getRelevantDocuments(query);
      }
    }
    const made: SlowRetriever[] = [];
    const graph = () => {
      const g = new StateGraph(State)
        .addNode("condense", async (s) => ({
          query: s.messages
            .filter((m) => m instanceof HumanMessage)
            .map((m) => String(m.content))
            .join(" "),
        }))
        .addNode("search", async (s, config) => {
          const r = new SlowRetriever(String((config as RunnableConfig).configurable?.thread_id));
          made.push(r);
          await r.invoke(s.query, config);
          return { messages: [new AIMessage("ok")] };
        })
        .addEdge(START, "condense")
        .addEdge("condense", "search")
        .addEdge("search", END);
      return g.compile({ checkpointer: new MemorySaver() }) as unknown as EvaluableGraph;
    };
    const cases: EvalCase[] = Array.from({ length: 6 }, (_, i) => ({
      ...FREEZE,
      id: `c${i}`,
      turns: FREEZE.turns.map((t) => ({ ...t, user: `${t.user}${" ".repeat(i)}` })),
    }));
    const serial = await sweep(graph(), cases, { counterfactual: true, concurrency: 1, threadPrefix: "t:" });
    made.length = 0;
    const parallel = await sweep(graph(), cases, { counterfactual: true, concurrency: 6, threadPrefix: "t:" });
    expect(parallel.map((t) => t.report)).toEqual(serial.map((t) => t.report));
    // Every instance got its own turn's query first, then only that case's raw message and oracle.
    for (const r of made) {
      const c = cases.find((x) => `t:${x.id}` === r.caseTag)!;
      const users = c.turns.map((t) => t.user);
      const allowed = new Set([
        ...users,
        ...c.turns.flatMap((t) => (t.standalone !== undefined ? [t.standalone] : [])),
        ...users.map((_, i) => users.slice(0, i + 1).join(" ")),
      ]);
      expect(
        r.calls.every((q) => allowed.has(q)),
        `${r.caseTag}: ${r.calls.join(" / ")}`,
      ).toBe(true);
    }
    expect(made.reduce((n, r) => n + r.calls.length, 0)).toBe(6 * (3 + 2));
  });
});

describe("recordRetrieverInvocations", () => {
  it("tells the innermost running instance, shares one wrap between recorders, and restores invoke when the last one is released", async () => {
    const original = BaseRetriever.prototype.invoke;
    const a = recordRetrieverInvocations();
    const b = recordRetrieverInvocations();
    const wrapped = BaseRetriever.prototype.invoke;
    expect(wrapped).not.toBe(original);
    const seen: unknown[] = [];
    class Inner extends BaseRetriever {
      override lc_namespace = ["test"];
      override async _getRelevantDocuments() {
        seen.push(a.current());
        return [];
      }
    }
    const inner = new Inner();
    class Outer extends BaseRetriever {
      override lc_namespace = ["test"];
      override async _getRelevantDocuments(q: string) {
        seen.push(a.current());
        await inner.invoke(q);
        seen.push(b.current());
        return [];
      }
    }
    const outer = new Outer();
    await outer.invoke("q");
    expect(seen).toEqual([outer, inner, outer]);
    expect(a.current()).toBeUndefined();
    a.release();
    a.release(); // idempotent
    expect(BaseRetriever.prototype.invoke).toBe(wrapped);
    b.release();
    expect(BaseRetriever.prototype.invoke).toBe(original);
  });

  it("baseRetrieversFor: the module's ESM build, and its CommonJS build once loaded; a retriever of either is recorded", async () => {
    const agent = path.resolve("test/fixtures/graphs/condense-agent.mjs");
    const req = createRequire(agent);
    const cjsFile = req.resolve("@langchain/core/retrievers");
    const loaded = req.cache[cjsFile] !== undefined;
    const before = await baseRetrieversFor(agent);
    const { BaseRetriever: CjsBase } = req("@langchain/core/retrievers") as { BaseRetriever: typeof BaseRetriever };
    expect(CjsBase).not.toBe(BaseRetriever); // two builds, two classes
    const after = await baseRetrieversFor(agent);
    expect(before.includes(CjsBase)).toBe(loaded);
    expect(after.includes(CjsBase)).toBe(true);
    const rec = recordRetrieverInvocations(after);
    try {
      class FromCjs extends CjsBase {
        override lc_namespace = ["test"];
        override async _getRelevantDocuments() {
          return [new Document({ pageContent: rec.current() === this ? "seen" : "not seen" })];
        }
      }
      expect((await new FromCjs().invoke("q"))[0]?.pageContent).toBe("seen");
    } finally {
      rec.release();
    }
    // A folder that resolves no @langchain/core: the CommonJS builds already loaded, of any copy.
    expect(await baseRetrieversFor(path.join("/", "nowhere", "g.mjs"))).toEqual([CjsBase]);
  });

  it("baseRetrieverOf: LangChain's BaseRetriever of any copy by its own markers, from an instance, a class or the graph's nodes; nothing for a look-alike", async () => {
    const req = createRequire(path.resolve("test/fixtures/graphs/condense-agent.mjs"));
    const { BaseRetriever: CjsBase } = req("@langchain/core/retrievers") as { BaseRetriever: typeof BaseRetriever };
    class OtherCopy extends CjsBase {
      override lc_namespace = ["test"];
      override async _getRelevantDocuments() {
        return [];
      }
    }
    expect(CjsBase.prototype instanceof BaseRetriever).toBe(false);
    expect(new OtherCopy() instanceof BaseRetriever).toBe(false);
    expect(baseRetrieverOf(new OtherCopy())).toBe(CjsBase);
    expect(baseRetrieverOf(OtherCopy)).toBe(CjsBase);
    expect(baseRetrieverOf(new TermRetriever(CARDS))).toBe(BaseRetriever);
    // A class merely named BaseRetriever, without LangChain's methods, is not one.
    class BaseRetriever2 {
      invoke() {}
    }
    Object.defineProperty(BaseRetriever2, "name", { value: "BaseRetriever" });
    expect(baseRetrieverOf(new BaseRetriever2())).toBeNull();
    expect(baseRetrieverOf({ invoke() {} })).toBeNull();
    // Found through a module's exports (one level into an object) and a retriever added as a graph node, where the module's folder resolves no @langchain/core.
    const nowhere = path.join("/", "nowhere", "g.mjs");
    const other = new OtherCopy();
    expect(await baseRetrieversFor(nowhere, { exports: { tools: { other }, n: 1 } })).toContain(CjsBase);
    const asNode = new StateGraph(MessagesAnnotation)
      .addNode("search", other)
      .addEdge(START, "search")
      .addEdge("search", END)
      .compile();
    expect(await baseRetrieversFor(nowhere, { graph: asNode })).toContain(CjsBase);
  });
});
