/**
 * Evaluate any LangGraph.js graph (docs/evaluate-your-graph.md): load it from
 * a module (`file.ts#exportName`, a compiled graph or a possibly async
 * factory), drive each case turn by turn on its own thread, capture every
 * retriever run with `RetrieverCapture`, map documents to card ids and score
 * the chosen call per turn.
 *
 * A turn whose run throws is recorded as an error (not a miss), and so is a
 * turn given up at its deadline or stalled (./turn-guard.ts). A turn with no
 * retriever run is "no retrieval", judged by its gold: with empty gold it is
 * fine (none needed), a gold-bearing one is scored as a miss (hit, recall,
 * nDCG 0) and labelled so. Both are counted (./graph-checks.ts:
 * `graphRunFacts`, `graphGateFailures`).
 *
 * With `counterfactual`, each gold-bearing turn is also attributed after it is
 * scored: the scored call's retriever is invoked again with the raw message
 * and the `standalone` question (./graph-counterfactual.ts; the instance
 * recorded by ./retriever-instances.ts while the sweep runs).
 */
import type { DocumentInterface } from "@langchain/core/documents";
import { HumanMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { MemorySaver } from "@langchain/langgraph";
import { GraphInputError, InvalidArgumentError } from "../../errors.js";
import { isToLabel, type EvalCase, type EvalTurn } from "../../kb/types.js";
import { RetrieverCapture, stateTraceRuns, type CapturedRetrieval, type IdOptions } from "./capture.js";
import { DEFAULT_CONCURRENCY, runQueue } from "./turns.js";
import { historyMessages, recordedHistory } from "./replay.js";
import { DEFAULT_TURN_TIMEOUT_S, invokeTurn, STALLED_MESSAGE, stateSize, TurnGuard } from "./turn-guard.js";
import { graphTurnQueries, retrieveAgainQueries } from "./graph-counterfactual.js";
import { recordRetrieverInvocations, type RetrieverRecorder } from "./retriever-instances.js";
import { log } from "../../log.js";
import type { TurnReport } from "../report/types.js";
import type { InputTurn } from "./graph-module.js";
import type { GraphSweepOptions, GraphTurn } from "./graph-sweep-options.js";
import { scoreCapturedTurn } from "./score-turn.js";
export { graphGateFailures, type GraphGateOptions } from "./graph-checks.js";
export * from "./graph-module.js";
export * from "./graph-sweep-options.js";
export { scoreCapturedTurn, type TurnOutcome } from "./score-turn.js";

/** Default input: the turn as a human message on the `messages` channel (after the recorded conversation, `turn.history`, with `run.replay: recorded`). */
export function defaultInput(turn: InputTurn): unknown {
  return { messages: [...historyMessages(turn.history), new HumanMessage(turn.user)] };
}

/** What running one case needs besides the sweep options. */
interface CaseContext {
  guard: TurnGuard;
  timeoutMs: number;
  /** Deletes a finished case's thread from the checkpointer (an in-memory one), or nothing. */
  release: (threadId: string) => Promise<void>;
  /** With counterfactual retrieval: which retriever instance ran each captured run. */
  retrievers?: RetrieverRecorder;
  /** With counterfactual retrieval: each case's first gold-bearing turn with a scored retriever run, as checked (`Reinvocable`). */
  reinvocable?: Reinvocable;
}

/**
 * `--counterfactual` on a graph none of whose scored retrievers can be
 * re-invoked is exit 2, decided by the first gold-bearing turn with a scored
 * LangChain retriever run in dataset order (not the first to finish: the
 * verdict is the same at any concurrency). Each case reports its own first
 * such turn (or that it has none); as soon as every case before the
 * deciding one has reported, the verdict is known, and a refusal stops the
 * run from whichever case completes the picture.
 */
class Reinvocable {
  /** Per case index: undefined while pending, null when the case had no such turn, else the turn's verdict. */
  private readonly verdicts: ({ ok: boolean; message: string } | null | undefined)[];
  private decided = false;
  constructor(cases: number) {
    this.verdicts = new Array(cases).fill(undefined);
  }

  /** Whether case `index` still needs its first such turn checked. */
  pending(index: number): boolean {
    return !this.decided && this.verdicts[index] === undefined;
  }

  /** Case `index`'s verdict (null: it finished with no such turn); throws the refusal once it is decided. */
  report(index: number, verdict: { ok: boolean; message: string } | null): void {
    if (this.decided || this.verdicts[index] !== undefined) return;
    this.verdicts[index] = verdict;
    for (const v of this.verdicts) {
      if (v === undefined) return; // an earlier case has not reported: not decided yet
      if (v === null) continue;
      this.decided = true;
      if (!v.ok) throw new GraphInputError(v.message);
      return;
    }
  }
}

/** The verdict of a turn for `Reinvocable`, or undefined when the turn does not decide (no gold, no scored LangChain run). */
function reinvocableVerdict(
  turn: EvalTurn,
  retrieval: CapturedRetrieval | null,
  capture: RetrieverCapture,
  where: string,
): { ok: boolean; message: string } | undefined {
  if (
    (turn.must_cite_one_of ?? []).length === 0 ||
    retrieval === null ||
    retrieval.source === "retrace" ||
    retrieval.scoredRunIds.length === 0
  )
    return undefined;
  const ok = retrieval.scoredRunIds.some((id) => capture.instanceOf(id) !== undefined);
  return {
    ok,
    message:
      `--counterfactual: the graph's scored retriever ${[...new Set(retrieval.retrievers)].join(", ")} cannot be re-invoked (${where}, the first gold-bearing turn with a retriever run): ` +
      "no BaseRetriever.invoke retrace could wrap ran it — a retriever of a @langchain/core copy retrace did not find, a class whose invoke does not call BaseRetriever's, or a run reported through callbacks alone — " +
      "so no turn could be attributed (docs/query-attribution.md); run without --counterfactual",
  };
}

/** A turn without its `context` (what a graph may see of it). */
function graphTurn(t: EvalTurn): Omit<EvalTurn, "context"> {
  const { context: _context, ...rest } = t;
  return rest;
}

async function runCase(
  c: EvalCase,
  caseIndex: number,
  opts: GraphSweepOptions,
  ctx: CaseContext,
): Promise<GraphTurn[]> {
  const recorded = opts.replay === "recorded";
  // Replayed on the recorded conversation, the case keeps its `context` (what the graph is fed); else the graph never sees it.
  const graphCase: EvalCase = recorded ? c : { ...c, turns: c.turns.map(graphTurn) };
  const caseThread = `${opts.threadPrefix ?? ""}${c.id}`;
  const out: GraphTurn[] = [];
  const mapInput = opts.input ?? defaultInput;
  const ids: IdOptions = {
    ...(opts.idKey !== undefined ? { idKey: opts.idKey } : {}),
    ...(opts.idMap !== undefined ? { idMap: opts.idMap } : {}),
  };
  const fromState = opts.traceSource === "state";
  for (const [index, t] of c.turns.entries()) {
    // Yield to the event loop before each turn: a graph whose retrieval runs in process (retrace's own) settles on
    // microtasks alone, and a signal's handler (Ctrl-C: src/interrupt.ts) or a worker's message waits for the next
    // turn of the event loop (docs/reliability.md, "Every sweep stops when asked").
    await new Promise<void>((resolve) => setImmediate(resolve));
    const where = `case ${c.id} turn ${index}`;
    // Recorded replay: a fresh thread a turn, fed the recorded conversation up to it.
    const threadId = recorded ? `${caseThread}#${index}` : caseThread;
    const live = fromState
      ? undefined
      : new RetrieverCapture(ctx.retrievers !== undefined ? { retrievers: ctx.retrievers } : {});
    let state: unknown = undefined;
    let error: string | undefined;
    let givenUp: TurnReport["givenUp"];
    opts.onTurn?.(where, "start");
    const input = mapInput(
      { ...graphTurn(t), index, ...(recorded ? { history: recordedHistory(c, index) } : {}) },
      graphCase,
    );
    // durability "exit": one checkpoint when the turn ends, not one per step — the same nodes on the same state, about half
    // LangGraph's cost per invocation (docs/throughput.md), and an aborted turn leaves nothing half-written on the thread.
    const configurable = { ...opts.configurable, thread_id: threadId };
    const config: RunnableConfig & { durability: "exit" } = {
      configurable,
      ...(live !== undefined ? { callbacks: [live] } : {}),
      durability: "exit",
    };
    const t0 = performance.now();
    const outcome = await invokeTurn((c) => opts.graph.invoke(input, c), config, {
      timeoutMs: ctx.timeoutMs,
      guard: ctx.guard,
      where,
    });
    opts.onTurn?.(where, "end");
    if (opts.phases !== undefined) opts.phases.graph += performance.now() - t0;
    if (outcome.kind === "done") state = outcome.state;
    else error = outcome.error;
    // Given up (deadline, stalled): an error turn like one that threw; the case goes on with its next turn.
    if (outcome.kind === "stuck") givenUp = outcome.why;
    // The turn's state size, for the report's --max-state-mb check (./graph-checks.ts).
    const stateBytes = error === undefined && opts.measureState !== false ? stateSize(state) : undefined;
    const capture = live ?? stateTraceRuns(state, index);
    const { report, retrieval } = await scoreCapturedTurn(
      c,
      index,
      capture,
      {
        ...(error !== undefined ? { error } : {}),
        ...(givenUp !== undefined ? { givenUp } : {}),
        state,
        ...(stateBytes !== undefined ? { stateBytes } : {}),
      },
      { ...opts, ids },
      where,
    );
    // After the turn is scored: the counterfactual queries (never change the turn's scores; ./graph-counterfactual.ts).
    if (opts.counterfactual === true && !isToLabel(t)) {
      if (opts.retrieveAgain !== undefined && retrieval?.trace !== undefined && error === undefined) {
        // The source retrieves again itself (retrace's own graph): the trace's own lists, the same settings.
        const queries = await retrieveAgainQueries(c, index, retrieval.trace, opts.retrieveAgain);
        if (queries !== null) report.queries = queries;
      } else if (ctx.retrievers !== undefined && live !== undefined) {
        if (ctx.reinvocable?.pending(caseIndex) === true && error === undefined) {
          const verdict = reinvocableVerdict(t, retrieval, live, where);
          if (verdict !== undefined) ctx.reinvocable.report(caseIndex, verdict);
        }
        const cf = await graphTurnQueries(t, retrieval, live, error, {
          ids,
          k: opts.k,
          timeoutMs: ctx.timeoutMs,
          guard: ctx.guard,
          configurable,
          where,
        });
        if (cf !== null) {
          if (cf.queries !== undefined) report.queries = cf.queries;
          if (cf.off !== undefined) report.queriesOff = cf.off;
          report.counterfactualCalls = cf.calls;
        }
      }
    }
    const part = opts.partOf?.get(c.id);
    if (part !== undefined) report.part = part;
    out.push({ report, retrieval });
    if (recorded) await ctx.release(threadId);
  }
  // A sweep never returns to a thread: its checkpoints go (memory bounded by the cases in flight, not the cases run).
  if (!recorded) await ctx.release(caseThread);
  ctx.reinvocable?.report(caseIndex, null); // no turn of this case decided: the verdict waits for a later case
  return out;
}

/** True for LangGraph's in-memory checkpointer (whose finished threads a sweep deletes). */
function isMemorySaver(x: unknown): x is MemorySaver {
  return (
    x instanceof MemorySaver ||
    (typeof x === "object" &&
      x !== null &&
      x.constructor?.name === "MemorySaver" &&
      typeof (x as MemorySaver).deleteThread === "function")
  );
}

/** Runs the cases of one sweep by index: what this thread's lanes and each worker thread run (`graphCaseRunner`). */
export interface GraphCaseRunner {
  run(index: number): Promise<GraphTurn[]>;
  /** Stops recording retriever instances (counterfactual retrieval); call once the sweep is done. */
  close(): void;
}

/**
 * The case runner of a sweep over `opts.cases`: each case turn by turn on
 * its own thread, under the deadline `turnTimeoutMs` and the stall guard
 * (./turn-guard.ts). The one runner of every sweep: this thread's, and each
 * worker thread's over the same options (src/app/own-graph/parallel.ts).
 */
export function graphCaseRunner(opts: GraphSweepOptions): GraphCaseRunner {
  const timeoutMs = opts.turnTimeoutMs ?? DEFAULT_TURN_TIMEOUT_S * 1000;
  if (!(typeof timeoutMs === "number" && timeoutMs > 0))
    throw new InvalidArgumentError("turnTimeoutMs", "a positive number of milliseconds", timeoutMs);
  if (opts.input === undefined && opts.graph.channels !== undefined && !("messages" in opts.graph.channels))
    throw new GraphInputError(
      `the graph has no "messages" channel (channels: ${Object.keys(opts.graph.channels)
        .filter((k) => !k.startsWith("__") && !k.startsWith("branch:"))
        .sort()
        .join(", ")}); give --input MODULE exporting (turn, case) => input`,
    );
  const saver = opts.graph.checkpointer;
  const ctx: CaseContext = {
    guard: new TurnGuard((where) =>
      log.warn(`${where}: ${STALLED_MESSAGE}; recorded as an error turn, the sweep goes on`),
    ),
    timeoutMs,
    release: isMemorySaver(saver) ? (id) => saver.deleteThread(id) : async () => {},
  };
  // Counterfactual retrieval by re-invocation needs each scored call's instance: recorded only while this sweep runs (./retriever-instances.ts).
  if (opts.counterfactual === true && opts.retrieveAgain === undefined && opts.traceSource !== "state") {
    ctx.retrievers = recordRetrieverInvocations(opts.retrieverBases ?? []);
    ctx.reinvocable = new Reinvocable(opts.cases.length);
  }
  return {
    run: (i) => runCase(opts.cases[i]!, i, opts, ctx),
    close: () => ctx.retrievers?.release(),
  };
}

/** What a sweep gives: the turns in dataset order, and how many cases each thread ran (index 0: this one; wall-clock bookkeeping, never in a report). */
export interface GraphSweepResult {
  turns: GraphTurn[];
  casesByThread: number[];
}

/**
 * Runs every case through the graph: cases in parallel up to `concurrency`
 * (default DEFAULT_CONCURRENCY) on this thread, and on the extra `lanes`
 * (worker threads) as they get ready, every lane taking the next case not
 * yet taken (`runQueue`: stop at the first failure); turns of a case in
 * order on one thread. Turns come back in dataset order whatever the
 * concurrency and whichever lane ran a case. Each turn runs under the
 * deadline `turnTimeoutMs` and the stall guard (./turn-guard.ts); a turn
 * given up is an error turn, as one that threw, and the case goes on with
 * its next turn (LangGraph stopped the aborted run). An error of retrace's
 * own (its store, its model: exit 3) stops the sweep. A finished case's
 * thread is deleted from an in-memory checkpointer (`MemorySaver`, the one
 * retrace adds or your own); a persistent checkpointer keeps its threads.
 */
export async function runGraphSweep(opts: GraphSweepOptions): Promise<GraphTurn[]> {
  return (await sweepGraphCases(opts)).turns;
}

/** `runGraphSweep`, with how many cases each thread ran. */
export async function sweepGraphCases(opts: GraphSweepOptions): Promise<GraphSweepResult> {
  const concurrency = opts.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new InvalidArgumentError("concurrency", "a positive integer", concurrency);
  const runner = graphCaseRunner(opts);
  const extra = opts.lanes ?? [];
  type Lane = { ready?: Promise<void>; run: (i: number) => Promise<GraphTurn[]>; thread: number };
  const local: Lane = {
    thread: 0,
    // With worker lanes, a turn that runs on microtasks alone (in-process retrieval) must yield to the event loop
    // before each case, or the workers' messages (ready, results) would wait until this thread ran out of cases.
    run:
      extra.length > 0
        ? (i) => new Promise<void>((resolve) => setImmediate(resolve)).then(() => runner.run(i))
        : (i) => runner.run(i),
  };
  const lanes: Lane[] = [];
  for (let c = 0; c < Math.min(concurrency, Math.max(1, opts.cases.length)); c++) {
    lanes.push(local);
    for (const w of extra) lanes.push(w);
  }
  const casesByThread = Array.from({ length: Math.max(0, ...extra.map((l) => l.thread)) + 1 }, () => 0);
  try {
    const results = await runQueue(opts.cases.length, lanes, (i, lane) => lane.run(i), {
      ready: (lane) => lane.ready,
      onDone: (done, total, lane) => {
        casesByThread[lane.thread]! += 1;
        opts.onCaseDone?.(done, total);
      },
    });
    return { turns: results.flat(), casesByThread };
  } finally {
    runner.close();
  }
}

/** Sorted names of the scored retrievers seen across a sweep. */
export function capturedRetrievers(turns: readonly GraphTurn[]): string[] {
  return [...new Set(turns.flatMap((t) => t.retrieval?.retrievers ?? []))].sort();
}

export type { DocumentInterface };
