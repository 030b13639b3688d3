/**
 * What langgraph.json points LangGraph's CLI and Studio at
 * (`./src/studio.ts:graph`, or `./dist/studio.js:graph` from the package): an
 * async graph factory, the form LangGraph's server accepts besides a compiled
 * graph. It sits beside the composition root (`src/system.ts`) because it may
 * start a Chroma server. Importing this module has no side effect; the first
 * call assembles the system, and later calls reuse that graph (one store per
 * process).
 *
 * Environment (the store vocabulary of docs/decisions/0006-one-composition-root-and-store-vocabulary.md):
 *   - `RETRACE_KB` — knowledge-base folder (default `<cwd>/kb`); cases are
 *     read from `<kb>/eval/cases.jsonl` when present (the integrity check);
 *   - `RETRACE_STORE` — `auto` (default: the `CHROMA_URL` server when set,
 *     else `memory`, so the dev server starts no process unless asked),
 *     `local`, `memory`, `none`, or a Chroma URL;
 *   - `RETRACE_EMBEDDER` — `auto` (default), `builtin`, or a local
 *     transformers.js model id / folder;
 *   - `RETRACE_DATA_DIR` — the local Chroma data folder for `local`.
 * The Studio server keeps conversations with its own checkpointer; this
 * factory's graph has none of its own.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { buildGraph, type RetraceGraph } from "./graph/build.js";
import { log } from "./log.js";
import { openSystem, resolveStoreChoice, type StoreKind } from "./system.js";

export interface StudioGraphHandle {
  graph: RetraceGraph;
  store: StoreKind;
  /** Releases the store (stops a Chroma server this process started; nothing otherwise). */
  close(): Promise<void>;
}

/**
 * The store the environment asks for. Under Studio, `auto` without
 * `CHROMA_URL` means `memory` rather than `local`: a dev server should not
 * spawn database processes unless told to (`RETRACE_STORE=local`).
 */
export function studioStore(env: Record<string, string | undefined> = process.env): string {
  const raw = env.RETRACE_STORE ?? "";
  const choice = raw === "" ? "auto" : raw;
  resolveStoreChoice(choice, env, "RETRACE_STORE"); // throws InvalidArgumentError for anything outside the vocabulary
  if (choice === "auto") return (env.CHROMA_URL ?? "") !== "" ? (env.CHROMA_URL as string) : "memory";
  return choice;
}

/** Builds the Studio graph from the environment (see the module comment). */
export async function createStudioGraph(
  env: Record<string, string | undefined> = process.env,
): Promise<StudioGraphHandle> {
  const kbDir = path.resolve(env.RETRACE_KB ?? "kb");
  const casesFile = path.join(kbDir, "eval", "cases.jsonl");
  const system = await openSystem({
    kbDir,
    casesFile: existsSync(casesFile) ? casesFile : null,
    store: studioStore(env),
    embedder: env.RETRACE_EMBEDDER ?? "auto",
    env,
    ...(env.RETRACE_DATA_DIR !== undefined ? { dataDir: env.RETRACE_DATA_DIR } : {}),
  });
  log.info(`studio: store ${system.store}${system.embedder !== null ? `, embedder ${system.embedder.summary}` : ""}`);
  return {
    graph: buildGraph({ store: system.retriever, cards: system.kb, analyzers: system.analyzers, checkpointer: false }),
    store: system.storeKind,
    close: () => system.close(),
  };
}

let pending: Promise<StudioGraphHandle> | undefined;

/** The factory langgraph.json names: the Studio graph, built on first use. */
export async function graph(): Promise<RetraceGraph> {
  pending ??= createStudioGraph().catch((e: unknown) => {
    pending = undefined;
    throw e;
  });
  return (await pending).graph;
}
