/**
 * The graph factory (docs/decisions/0003-store-less-path.md). Only wiring: the nodes live in
 * src/nodes, the state in ./state.ts, the configuration in ./configuration.ts.
 *
 *   store-backed:  START → contextualize → retrieve → generate → END
 *   store-less:    START → contextualize → generate → END
 *
 * The store-less graph has no retrieval node at all (visible in
 * `graph.getGraph()`): nothing is retrieved, no trace is emitted, and the
 * evaluator reports retrieval as not measured.
 *
 * Dependencies are bound as configuration (`graph.withConfig({ configurable })`),
 * never held in module state; each invocation may override any key. A
 * checkpointer (default: a new MemorySaver) keeps each conversation by
 * `configurable.thread_id`: invoke one turn at a time with
 * `{ messages: [new HumanMessage(text)], locale }`.
 */
import { END, MemorySaver, START, StateGraph, type BaseCheckpointSaver } from "@langchain/langgraph";
import type { Analyzers } from "../retrieval/analyzer.js";
import type { Retriever } from "../retrieval/types.js";
import { contextualize } from "../nodes/contextualize.js";
import { generate } from "../nodes/generate.js";
import { retrieveNode } from "../nodes/retrieve.js";
import { configurableFor, type CardSource, type ChatModelLike, type TunableConfig } from "./configuration.js";
import { RetraceState } from "./state.js";

export interface BuildGraphOptions {
  /** The retriever (hybrid over Chroma, or any Retriever); null builds the store-less graph. */
  store: Retriever | null;
  /** The knowledge base's cards, for the answerer and the model prompt. */
  cards: CardSource;
  /** A LangChain chat model replacing the extractive answerer (and rewriting follow-up queries). */
  model?: ChatModelLike | null;
  /**
   * The analyzers of the answerer's term statistics and of follow-up
   * detection (`system.analyzers`: the KB's `analyzers.json`). Default: the
   * store's when it has them (a HybridRetriever's), else the default profile.
   */
  analyzers?: Analyzers;
  /** Default: a new MemorySaver. `false`: no checkpointer (each invocation carries the whole conversation). */
  checkpointer?: BaseCheckpointSaver | false;
  /** Overrides of the configuration defaults (k, denseK, bm25K, mode, rerank, minEvidence, maxSentences, rewriteWithModel). */
  defaults?: Partial<TunableConfig>;
  /** Graph name shown in traces and Studio; default "retrace". */
  name?: string;
}

function storeBacked() {
  return new StateGraph(RetraceState)
    .addNode("contextualize", contextualize)
    .addNode("retrieve", retrieveNode)
    .addNode("generate", generate)
    .addEdge(START, "contextualize")
    .addEdge("contextualize", "retrieve")
    .addEdge("retrieve", "generate")
    .addEdge("generate", END);
}

function storeLess() {
  return new StateGraph(RetraceState)
    .addNode("contextualize", contextualize)
    .addNode("generate", generate)
    .addEdge(START, "contextualize")
    .addEdge("contextualize", "generate")
    .addEdge("generate", END);
}

type StoreBackedGraph = ReturnType<ReturnType<typeof storeBacked>["compile"]>;
type StoreLessGraph = ReturnType<ReturnType<typeof storeLess>["compile"]>;
/** A compiled retrace graph (store-backed or store-less). */
export type RetraceGraph = StoreBackedGraph | StoreLessGraph;

/** Builds and compiles the agent graph with its dependencies bound. */
export function buildGraph(options: BuildGraphOptions): RetraceGraph {
  const configurable = configurableFor(options);
  const checkpointer = options.checkpointer === false ? undefined : (options.checkpointer ?? new MemorySaver());
  const name = options.name ?? "retrace";
  const compileOptions = { ...(checkpointer !== undefined ? { checkpointer } : {}), name };
  const graph = options.store === null ? storeLess().compile(compileOptions) : storeBacked().compile(compileOptions);
  return graph.withConfig({ configurable }) as RetraceGraph;
}

/** True when the graph contains the retrieval node (i.e. it was built with a store). */
export function hasRetrieval(graph: { getGraph(): { nodes: Record<string, unknown> } }): boolean {
  return "retrieve" in graph.getGraph().nodes;
}
