/**
 * Loading a graph of your own (docs/evaluate-your-graph.md): a module spec
 * (`file.ts#exportName`), the compiled graph or the (possibly async) factory
 * it exports, and the user's other functions (`--input`, `--id-map`).
 * Re-exported by ./external-graph.ts.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { MemorySaver } from "@langchain/langgraph";
import { GraphInputError } from "../../errors.js";
import type { EvalCase, EvalTurn } from "../../kb/types.js";
import { buildWith, importUserModule, userFunction } from "../../user-module.js";
import type { RecordedMessage } from "./replay.js";

export const DEFAULT_GRAPH_EXPORT = "graph";

/** What the runner needs of a compiled graph. */
export interface EvaluableGraph {
  invoke(input: unknown, config?: RunnableConfig): Promise<unknown>;
  checkpointer?: unknown;
  channels?: Record<string, unknown>;
}

/** A turn handed to an `--input` mapper: the case's turn without its `context` (the labeller's view of the conversation; docs/synthetic-cases.md). */
export interface InputTurn extends Omit<EvalTurn, "context"> {
  /** 0-based turn index. */
  index: number;
  /**
   * With `run.replay: recorded` only (./replay.ts): the recorded conversation
   * before this turn, oldest first — each earlier user message and the
   * assistant's recorded messages (`context`). The turn runs on a fresh thread,
   * so the graph sees what the input sends: the default input sends these as
   * messages on the `messages` channel before the turn's own. Absent with `own`.
   */
  history?: RecordedMessage[];
}

export type InputMapper = (turn: InputTurn, evalCase: EvalCase) => unknown;

/** `./agent.ts#myGraph` → file and export name (default `graph`). */
export function parseModuleSpec(spec: string, defaultExport: string): { file: string; exportName: string } {
  const hash = spec.lastIndexOf("#");
  if (hash < 0) return { file: spec, exportName: defaultExport };
  const exportName = spec.slice(hash + 1);
  return { file: spec.slice(0, hash), exportName: exportName === "" ? defaultExport : exportName };
}

/** True for a compiled LangGraph graph (a Pregel instance: invoke, stream, channels, nodes). */
export function isCompiledGraph(x: unknown): x is EvaluableGraph {
  if (typeof x !== "object" || x === null) return false;
  const g = x as Record<string, unknown>;
  return (
    typeof g.invoke === "function" &&
    typeof g.stream === "function" &&
    typeof g.channels === "object" &&
    g.channels !== null &&
    typeof g.nodes === "object"
  );
}

export interface LoadedGraph {
  graph: EvaluableGraph;
  file: string;
  exportName: string;
  /** True when the runner added an in-memory checkpointer. */
  addedCheckpointer: boolean;
  /** The module's exports (where `--counterfactual` also looks for the graph's retriever classes: ./retriever-instances.ts). */
  exports: Record<string, unknown>;
}

/**
 * Loads `file[#export]`: the export must be a compiled graph or a (possibly
 * async) factory returning one. Adds a `MemorySaver` checkpointer when the
 * graph has none (each case needs its thread's history across turns).
 * Every failure is a GraphInputError (exit 2) naming the file and the export.
 */
export async function loadGraph(spec: string): Promise<LoadedGraph> {
  const { file, exportName } = parseModuleSpec(spec, DEFAULT_GRAPH_EXPORT);
  const where = `--graph ${file}#${exportName}`;
  const { exports: mod } = await importUserModule(file, "--graph", { exportName });
  if (!(exportName in mod) || mod[exportName] === undefined) {
    const names = Object.keys(mod).sort();
    throw new GraphInputError(
      `${where}: the module has no export "${exportName}"; it exports ${names.length === 0 ? "nothing" : names.join(", ")}`,
    );
  }
  const exported: unknown = mod[exportName];
  const value = await buildWith(
    exported,
    typeof exported === "function" && !isCompiledGraph(exported),
    where,
    "the graph",
  );
  if (!isCompiledGraph(value)) {
    const hint =
      typeof value === "object" && value !== null && typeof (value as { compile?: unknown }).compile === "function"
        ? " (a StateGraph that is not compiled: export graph.compile())"
        : "";
    throw new GraphInputError(
      `${where}: expected a compiled LangGraph graph or a factory returning one, got ${value === null ? "null" : typeof value}${hint}`,
    );
  }
  const graph = value;
  let addedCheckpointer = false;
  if (graph.checkpointer === undefined || graph.checkpointer === null) {
    graph.checkpointer = new MemorySaver();
    addedCheckpointer = true;
  }
  return { graph, file, exportName, addedCheckpointer, exports: mod };
}

/**
 * Loads a function export (`--input`, `--id-map`): `file[#name]`, default
 * export `default`. With `on` (what a call was on, for messages), a throw of
 * the function when called is a GraphInputError naming the module
 * (`userFunction`).
 */
export async function loadFunction<F extends (...args: never[]) => unknown>(
  spec: string,
  option: string,
  on?: (...args: Parameters<F>) => string,
): Promise<F> {
  const { file, exportName } = parseModuleSpec(spec, "default");
  const { exports: mod } = await importUserModule(file, option, { exportName });
  const fn = mod[exportName];
  if (typeof fn !== "function")
    throw new GraphInputError(
      `${option} ${file}#${exportName}: expected the export "${exportName}" to be a function, got ${typeof fn}`,
    );
  return (
    on === undefined
      ? fn
      : userFunction(fn as (...args: Parameters<F>) => ReturnType<F>, `${option} ${file}#${exportName}`, on)
  ) as F;
}
