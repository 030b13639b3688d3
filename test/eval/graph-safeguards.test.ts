/**
 * The safeguards of a `--graph` sweep (src/eval/sweep/turn-guard.ts,
 * src/eval/sweep/external-graph.ts; docs/reliability.md) on real LangGraph
 * graphs in process: the per-turn deadline aborts the run and the sweep goes
 * on; the stall guard settles pending turns when Node emits `beforeExit`
 * (emitted here by hand: vitest keeps the event loop alive, so the real
 * drain is tested through the CLI in test/cli/graph-safeguards.test.ts);
 * finished cases' threads are deleted from the in-memory checkpointer; the
 * case queue is the built-in sweep's (default concurrency, stop at the
 * first failure); the state size per turn.
 */
import { Document } from "@langchain/core/documents";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { BaseRetriever } from "@langchain/core/retrievers";
import type { RunnableConfig } from "@langchain/core/runnables";
import { Annotation, END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { GraphInputError } from "../../src/errors.js";
import { retrievalEvaluator } from "../../src/eval/measures/evaluators.js";
import { runGraphSweep, type EvaluableGraph, type GraphSweepOptions } from "../../src/eval/sweep/external-graph.js";
import { DEFAULT_CONCURRENCY } from "../../src/eval/sweep/turns.js";
import { deadlineMessage, STALLED_MESSAGE, stateSize } from "../../src/eval/sweep/turn-guard.js";
import type { EvalCase } from "../../src/kb/types.js";

class ListRetriever extends BaseRetriever {
  override lc_namespace = ["test", "retrievers"];
  constructor(private readonly docs: Document[]) {
    super({});
  }
  override async _getRelevantDocuments(): Promise<Document[]> {
    return this.docs;
  }
}

const retriever = new ListRetriever([new Document({ pageContent: "freeze", metadata: { parentId: "card-freeze" } })]);
const question = (s: { messages: { content: unknown }[] }) => String(s.messages[s.messages.length - 1]?.content ?? "");

/** A one-node graph whose node runs `before(question, config)` and then retrieves. */
function graphWith(before: (q: string, config: RunnableConfig) => Promise<void>, checkpointer?: MemorySaver) {
  const g = new StateGraph(MessagesAnnotation)
    .addNode("search", async (s, config) => {
      await before(question(s), config);
      const docs = await retriever.invoke(question(s), config);
      return { messages: [new AIMessage(`found ${docs.length}`)] };
    })
    .addEdge(START, "search")
    .addEdge("search", END);
  return (checkpointer !== undefined ? g.compile({ checkpointer }) : g.compile()) as unknown as EvaluableGraph;
}

const oneTurn = (id: string, user: string): EvalCase => ({
  id,
  line: 1,
  locale: "en",
  kind: "golden",
  turns: [{ user, must_cite_one_of: ["card-freeze"], expect: "answer" }],
});

function sweep(graph: EvaluableGraph, cases: EvalCase[], over: Partial<GraphSweepOptions> = {}) {
  if (graph.checkpointer === undefined) graph.checkpointer = new MemorySaver();
  return runGraphSweep({
    graph,
    cases,
    evaluators: [retrievalEvaluator({ k: 3 })],
    knownIds: new Set(["card-freeze"]),
    k: 3,
    ...over,
  });
}

const hit = (t: { report: { results: { key: string; score: number }[] } }) =>
  t.report.results.find((r) => r.key === "retrieval_hit_at_k")?.score;

describe("the per-turn deadline", () => {
  it("gives up a turn that never settles, aborts its run through the config's signal, and goes on with the case and the next cases", async () => {
    let signal: AbortSignal | undefined;
    const graph = graphWith(async (q, config) => {
      if (q.includes("hang")) {
        signal = config.signal;
        await new Promise(() => {}); // ignores the signal: the deadline still ends the turn
      }
    });
    const cases: EvalCase[] = [
      {
        id: "c1",
        line: 1,
        locale: "en",
        kind: "golden",
        turns: [
          { user: "hang", must_cite_one_of: ["card-freeze"], expect: "answer" },
          { user: "then freeze", must_cite_one_of: ["card-freeze"], expect: "answer" },
        ],
      },
      oneTurn("c2", "freeze"),
    ];
    const turns = await sweep(graph, cases, { turnTimeoutMs: 200, concurrency: 1 });
    expect(
      turns.map((t) => [t.report.caseId, t.report.turn, t.report.error ?? null, t.report.givenUp ?? null]),
    ).toEqual([
      ["c1", 0, "turn exceeded the 0.2 s deadline (run.turnTimeout)", "deadline"],
      ["c1", 1, null, null],
      ["c2", 0, null, null],
    ]);
    expect(deadlineMessage(120_000)).toBe("turn exceeded the 120 s deadline (run.turnTimeout)");
    expect(signal?.aborted).toBe(true);
    expect(turns[0]!.report.results).toEqual([]); // an error turn is not scored
    expect(hit(turns[1]!)).toBe(1);
    expect(hit(turns[2]!)).toBe(1);
  });

  it("refuses a deadline that is not a positive number", async () => {
    await expect(
      sweep(
        graphWith(async () => {}),
        [oneTurn("c1", "freeze")],
        { turnTimeoutMs: 0 },
      ),
    ).rejects.toThrow(/turnTimeoutMs/);
  });
});

describe("the stall guard", () => {
  it("settles every turn still pending when the event loop drains (beforeExit) as stalled, and the sweep goes on", async () => {
    let entered = 0;
    const graph = graphWith(async (q) => {
      if (q.includes("hang")) {
        entered++;
        await new Promise(() => {});
      }
    });
    const before = process.listenerCount("beforeExit");
    const running = sweep(graph, [oneTurn("c1", "hang"), oneTurn("c2", "hang too"), oneTurn("c3", "freeze")], {
      concurrency: 2,
    });
    while (entered < 2) await new Promise((r) => setTimeout(r, 10));
    // While turns are in flight the guard listens for beforeExit (one listener for the sweep).
    expect(process.listenerCount("beforeExit")).toBe(before + 1);
    process.emit("beforeExit", 0);
    const turns = await running;
    expect(turns.map((t) => [t.report.caseId, t.report.givenUp ?? null])).toEqual([
      ["c1", "stalled"],
      ["c2", "stalled"],
      ["c3", null],
    ]);
    expect(turns[0]!.report.error).toBe(STALLED_MESSAGE);
    expect(hit(turns[2]!)).toBe(1);
    // No turn in flight: the listener is gone, so an idle sweep never holds or hooks the process.
    expect(process.listenerCount("beforeExit")).toBe(before);
  });
});

describe("threads of finished cases", () => {
  it("are deleted from the in-memory checkpointer once their case is done, before the next case starts (concurrency 1)", async () => {
    const saver = new MemorySaver();
    const events: string[] = [];
    const deleteThread = saver.deleteThread.bind(saver);
    saver.deleteThread = async (id: string) => {
      events.push(`delete ${id}`);
      await deleteThread(id);
    };
    const graph = graphWith(async (_q, config) => {
      events.push(
        `turn ${String(config.configurable?.thread_id)} (threads held: ${Object.keys(saver.storage).join(",")})`,
      );
    }, saver);
    const cases: EvalCase[] = [
      {
        id: "a",
        line: 1,
        locale: "en",
        kind: "golden",
        turns: [
          { user: "freeze", must_cite_one_of: ["card-freeze"], expect: "answer" },
          { user: "again", must_cite_one_of: ["card-freeze"], expect: "answer" },
        ],
      },
      oneTurn("b", "freeze"),
    ];
    await sweep(graph, cases, { concurrency: 1, threadPrefix: "p:" });
    // One checkpoint per turn, written when the turn ends (durability "exit"): case a's first turn sees no thread,
    // its second its own; case b starts with a's thread already gone.
    expect(events).toEqual([
      "turn p:a (threads held: )",
      "turn p:a (threads held: p:a)",
      "delete p:a",
      "turn p:b (threads held: )",
      "delete p:b",
    ]);
    expect(Object.keys(saver.storage)).toEqual([]);
    expect(Object.keys(saver.writes)).toEqual([]);
  });
});

describe("the case queue", () => {
  it(`runs DEFAULT_CONCURRENCY (${DEFAULT_CONCURRENCY}) cases at once by default, and the given number otherwise`, async () => {
    let inFlight = 0;
    let most = 0;
    const graph = graphWith(async () => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 20));
      inFlight--;
    });
    const cases = Array.from({ length: 10 }, (_, i) => oneTurn(`c${i}`, "freeze"));
    await sweep(graph, cases);
    expect(most).toBe(DEFAULT_CONCURRENCY);
    most = 0;
    await sweep(graph, cases, { concurrency: 7 });
    expect(most).toBe(7);
  });

  it("stops at the first failure: no case starts after one failed, and the sweep rejects with its error", async () => {
    const started: string[] = [];
    const noId = new ListRetriever([new Document({ pageContent: "no id here", metadata: {} })]);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("search", async (s, config) => {
        started.push(question(s));
        await (question(s) === "bad" ? noId : retriever).invoke(question(s), config);
        return {};
      })
      .addEdge(START, "search")
      .addEdge("search", END)
      .compile() as unknown as EvaluableGraph;
    const cases = [oneTurn("c1", "bad"), oneTurn("c2", "good"), oneTurn("c3", "good")];
    await expect(sweep(graph, cases, { concurrency: 1 })).rejects.toThrow(GraphInputError);
    expect(started).toEqual(["bad"]);
  });

  it("gives the same turns at concurrency 1 and 8", async () => {
    const graph = graphWith(async (q) => {
      await new Promise((r) => setTimeout(r, q.length % 7)); // cases finish out of order at concurrency 8
    });
    const cases = Array.from({ length: 16 }, (_, i) => oneTurn(`c${i}`, `freeze ${"x".repeat(i)}`));
    const one = (await sweep(graph, cases, { concurrency: 1, threadPrefix: "t:" })).map((t) => t.report);
    const eight = (await sweep(graph, cases, { concurrency: 8, threadPrefix: "t:" })).map((t) => t.report);
    expect(eight).toEqual(one);
  });
});

describe("state size", () => {
  it("is about the bytes of the state serialized as JSON, without building the string", () => {
    const plain = { a: "héllo", b: [1, 22, null, true], c: { d: "" } };
    expect(stateSize(plain)).toBe(Buffer.byteLength(JSON.stringify(plain)));
    expect(stateSize("x".repeat(5 * 2 ** 20))).toBe(5 * 2 ** 20 + 2);
    // A LangChain message is measured by its serialized form (toJSON).
    const m = new HumanMessage("what is the weather?");
    expect(stateSize(m)).toBe(stateSize(m.toJSON()));
    expect(stateSize({ messages: [m] })).toBeGreaterThan(stateSize("what is the weather?"));
    // Binary data by its byte length; a shared object once; a cycle does not loop.
    expect(stateSize(new Float32Array(1000))).toBe(4000);
    const big = "y".repeat(1000);
    const shared = { big };
    expect(stateSize([shared, shared])).toBeLessThan(2 * stateSize(shared));
    const cyclic: Record<string, unknown> = { big };
    cyclic.self = cyclic;
    expect(stateSize(cyclic)).toBeGreaterThan(1000);
    // Deep nesting is walked without recursion.
    let deep: unknown = "leaf";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(stateSize(deep)).toBeGreaterThan(100_000);
  });

  it("is recorded on every completed turn of a sweep, not on an errored one", async () => {
    const State = Annotation.Root({
      ...MessagesAnnotation.spec,
      blob: Annotation<string>({ reducer: (_a, b) => b, default: () => "" }),
    });
    const graph = new StateGraph(State)
      .addNode("search", async (s, config) => {
        if (question(s) === "boom") throw new Error("boom");
        await retriever.invoke(question(s), config);
        return { blob: "z".repeat(3 * 2 ** 20) };
      })
      .addEdge(START, "search")
      .addEdge("search", END)
      .compile() as unknown as EvaluableGraph;
    const turns = await sweep(graph, [oneTurn("c1", "freeze"), oneTurn("c2", "boom")]);
    expect(turns[0]!.report.stateBytes).toBeGreaterThan(3 * 2 ** 20);
    expect(turns[0]!.report.stateBytes).toBeLessThan(3 * 2 ** 20 + 10_000);
    expect(turns[1]!.report.error).toBe("boom");
    expect(turns[1]!.report.stateBytes).toBeUndefined();
  });
});
