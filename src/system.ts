/**
 * The composition root (docs/decisions/0006-one-composition-root-and-store-vocabulary.md):
 * the one module that turns options into a running system — KB and cases
 * (validated: the dataset-integrity check is always on), chunks, embedder,
 * reranker, the KB's analyzers (`<kb>/analyzers.json`, held by the system, its
 * retriever and embedder: never process-global), a dense index (a Chroma
 * store with the KB ingested idempotently, or the exact in-process index),
 * and the HybridRetriever over them. The CLI,
 * the Studio entry (`src/studio.ts`) and library users all get their system
 * here; `graph/`, `nodes/` and `eval/` receive what they need and never start
 * processes.
 *
 * One retriever factory, ./retriever-factory.ts (`buildRetriever`,
 * `openEmbedder`, `openRetriever`, `openIngestedDense`), re-exported here:
 * `openSystem`, a worker thread's `openRetriever`, `retrace beir` and
 * `retrace ingest` all go through it.
 *
 * Store vocabulary (flags, `RETRACE_STORE`, docs, reports):
 *   - `auto` (default): the `CHROMA_URL` server when set, else `local`;
 *   - `local`: a Chroma server started by this process from node_modules,
 *     stopped by `close()`;
 *   - an `http(s)://` URL: that Chroma server;
 *   - `memory`: the exact in-process dense index, nothing to start;
 *   - `none`: store-less, no retriever (retrieval is "not measured").
 */
import { InvalidArgumentError } from "./errors.js";
import { loadData, type LoadedData } from "./kb/load.js";
import { log } from "./log.js";
import { loadKbAnalyzers, type Analyzers } from "./retrieval/analyzer.js";
import type { HybridRetriever } from "./retrieval/hybrid.js";
import type { IngestResult } from "./retrieval/ingest.js";
import type { Embedder } from "./retrieval/types.js";
import {
  buildRetriever,
  lsaStateDir,
  openIngestedDense,
  type EmbedderSetup,
  type IngestedDense,
  type RetrieverRecipe,
} from "./retriever-factory.js";

export { loadData, splitFileFor, type LoadedData } from "./kb/load.js";
export {
  buildRetriever,
  lsaStateDir,
  openEmbedder,
  openIngestedDense,
  openRetriever,
  type BuiltRetriever,
  type EmbedderChoice,
  type EmbedderSetup,
  type IngestedDense,
  type OpenedEmbedder,
  type RetrieverRecipe,
  type RetrieverSpec,
} from "./retriever-factory.js";

/** `auto`, `local`, `memory`, `none`, or an http(s) URL of a Chroma server. */
export type StoreChoice = "auto" | "local" | "memory" | "none" | (string & {});
/** What a store choice resolved to; recorded in reports and baselines. */
export type StoreKind = "local" | "remote" | "memory" | "none";

export const STORE_CHOICES = ["auto", "local", "memory", "none"] as const;

/**
 * Checks a store choice and resolves `auto` against the environment.
 * @throws InvalidArgumentError (exit 2) for anything but the vocabulary above.
 */
export function resolveStoreChoice(
  choice: string,
  env: Record<string, string | undefined> = process.env,
  name = "--store",
): { kind: StoreKind; url?: string } {
  const envUrl = env.CHROMA_URL ?? "";
  if (choice === "auto") return envUrl !== "" ? { kind: "remote", url: envUrl } : { kind: "local" };
  if (choice === "local" || choice === "memory" || choice === "none") return { kind: choice };
  if (/^https?:\/\//.test(choice)) return { kind: "remote", url: choice };
  throw new InvalidArgumentError(name, `one of ${STORE_CHOICES.join(", ")} or an http(s) URL`, choice);
}

export interface SystemOptions {
  kbDir: string;
  /** The eval cases; null for none (a graph to serve rather than to evaluate). */
  casesFile: string | null;
  /** See the module comment; default `auto`. */
  store?: StoreChoice;
  /** Embedder spec: `auto` (default), `builtin`, `lsa` (corpus-fit, fitted on the KB's chunks), or a transformers.js model id / folder. */
  embedder?: string;
  /** Cross-encoder spec, or null for no reranking (the default). */
  reranker?: string | null;
  /** Local Chroma data folder (default `.retrace/chroma`). */
  dataDir?: string;
  /** Environment to resolve `auto` against (default `process.env`). */
  env?: Record<string, string | undefined>;
  onIngestProgress?: (done: number, total: number) => void;
  /** Deadline of every Chroma request, ms (docs/reliability.md). */
  requestTimeoutMs?: number;
  /** Largest card file read, bytes (`--max-card-bytes`; default RETRACE_MAX_CARD_BYTES, else 1 MiB: src/kb/cards.ts). */
  maxCardBytes?: number;
  /** The KB and cases already loaded and validated (by the caller, before anything starts); else loaded here. */
  data?: LoadedData;
  /** BM25 k1/b of the retriever's index (a `--config` file's `retrieval.bm25`; docs/fusion-and-tuning.md). */
  bm25Params?: { k1?: number; b?: number };
}

export interface RetraceSystem extends LoadedData {
  /** null when store-less. */
  retriever: HybridRetriever | null;
  /**
   * The KB's analyzers (`<kb>/analyzers.json`, else the default profile):
   * those of the retriever's BM25 index and LSA embedder; give them to
   * `buildGraph({ analyzers })` for the answerer and follow-up detection
   * (a graph over `retriever` takes them from it by default).
   */
  analyzers: Analyzers;
  /** `reason`: which embedder and why, in full; `summary`: the same in one short line (src/retrieval/embedders/resolve.ts). */
  embedder: { id: string; description: string; reason: string; summary: string; setup: EmbedderSetup } | null;
  reranker: { id: string; reason: string; summary: string } | null;
  /** `local`, `memory`, `none`, or the server URL (what reports print as the store). */
  store: string;
  storeKind: StoreKind;
  /** The Chroma collection served from, when the store is Chroma. */
  collection: string | null;
  ingest: IngestResult | null;
  /** How to open the same retriever in a worker thread (`openRetriever`); null when store-less. */
  retrieverRecipe: RetrieverRecipe | null;
  /** Releases the store (stops a Chroma server this system started). Safe to call more than once. */
  close(): Promise<void>;
}

/**
 * The entry module of a sweep worker thread (src/sweep-worker.ts), handed to
 * the parallel sweep (`runSweepInWorkers({ workerEntry })`) so that eval/
 * never imports this root: the compiled `.js` beside this module, or the
 * `.ts` source when retrace runs from TypeScript (tests, `npm run retrace`).
 */
export const SWEEP_WORKER_ENTRY: URL = new URL(
  import.meta.url.endsWith(".ts") ? "./sweep-worker.ts" : "./sweep-worker.js",
  import.meta.url,
);

/** Assembles a running system from options (see the module comment). */
export async function openSystem(opts: SystemOptions): Promise<RetraceSystem> {
  const choice = resolveStoreChoice(opts.store ?? "auto", opts.env);
  const data =
    opts.data ??
    (await loadData(
      opts.kbDir,
      opts.casesFile,
      opts.maxCardBytes !== undefined ? { maxCardBytes: opts.maxCardBytes } : {},
    ));
  // `<kb>/analyzers.json` (docs/languages.md): validated before anything starts; this system's BM25, LSA embedder and graph analyse with them.
  const { analyzers, file: analyzerFile } = loadKbAnalyzers(opts.kbDir);
  if (analyzerFile !== null) log.info(`analyzers: ${analyzerFile} applied`);
  if (choice.kind === "none") {
    log.info("Store-less run: the graph has no retrieval node; retrieval metrics will be reported as not measured");
    return {
      ...data,
      retriever: null,
      analyzers,
      embedder: null,
      reranker: null,
      store: "none",
      storeKind: "none",
      collection: null,
      ingest: null,
      retrieverRecipe: null,
      close: async () => {},
    };
  }
  // The lsa embedder is fitted on the KB's chunks; its state lives in the local data dir (docs/fusion-and-tuning.md).
  const stateDir = choice.kind === "memory" ? undefined : lsaStateDir(opts.dataDir);
  let opened: IngestedDense | undefined;
  try {
    const built = await buildRetriever({
      chunks: data.chunks,
      analyzers,
      embedder: opts.embedder ?? "auto",
      ...(stateDir !== undefined ? { stateDir } : {}),
      reranker: opts.reranker ?? null,
      ...(opts.bm25Params !== undefined ? { bm25Params: opts.bm25Params } : {}),
      // memory: the chunks embedded in process; a Chroma store: ingested, then its stored vectors read back.
      ...(choice.kind !== "memory"
        ? {
            dense: async (embedder: Embedder) => {
              opened = await openIngestedDense({
                ...(choice.url !== undefined ? { url: choice.url } : {}),
                ...(opts.dataDir !== undefined ? { dataDir: opts.dataDir } : {}),
                ...(opts.requestTimeoutMs !== undefined ? { requestTimeoutMs: opts.requestTimeoutMs } : {}),
                chunks: data.chunks,
                embedder,
                kbHash: data.hashes.kb,
                ...(opts.onIngestProgress !== undefined ? { onIngestProgress: opts.onIngestProgress } : {}),
              });
              return opened.dense;
            },
          }
        : {}),
    });
    const { embedder, reranker } = built;
    const recipe: RetrieverRecipe = {
      kbDir: opts.kbDir,
      embedder: opts.embedder ?? "auto",
      embedderId: embedder.embedder.id,
      ...(stateDir !== undefined ? { stateDir } : {}),
      reranker: opts.reranker ?? null,
      ...(opts.bm25Params !== undefined ? { bm25Params: opts.bm25Params } : {}),
      analyzers: analyzers.overrides,
      dense: opened === undefined ? null : opened.dense.share(),
    };
    const common = {
      ...data,
      retriever: built.retriever,
      analyzers,
      embedder: {
        id: embedder.embedder.id,
        description: embedder.embedder.description,
        reason: embedder.reason,
        summary: embedder.summary,
        setup: embedder.setup,
      },
      reranker:
        reranker.reranker === null
          ? null
          : { id: reranker.reranker.id, reason: reranker.reason, summary: reranker.summary },
      retrieverRecipe: recipe,
    };
    if (opened === undefined)
      return { ...common, store: "memory", storeKind: "memory", collection: null, ingest: null, close: async () => {} };
    const store = opened;
    return {
      ...common,
      store: store.store,
      storeKind: store.storeKind,
      collection: store.collection,
      ingest: store.ingested,
      close: () => store.close(),
    };
  } catch (e) {
    await opened?.close();
    throw e;
  }
}
