/**
 * `retrace ingest`: embed the KB's chunks into Chroma (atomic, idempotent; see
 * src/retrieval/ingest.ts). Starts a local Chroma server on `--data-dir`
 * unless `--store URL` or CHROMA_URL names one, and stops it before exiting.
 * One summary line on stdout (JSON with `--json`); progress on stderr.
 * Exit 0 done or already up to date; 2 bad usage or invalid KB; 3 Chroma or
 * the embedding model unavailable; 130/143 interrupted (the previous
 * collection stays current).
 */
import path from "node:path";
import type { Command } from "commander";
import { InvalidArgumentError } from "../errors.js";
import { loadKnowledgeBase } from "../kb/cards.js";
import { chunkKnowledgeBase } from "../kb/chunk.js";
import { kbHash } from "../kb/hash.js";
import { log } from "../log.js";
import { loadKbAnalyzers } from "../retrieval/analyzer.js";
import { defaultDataDir, openStore, type ChromaStoreHandle } from "../retrieval/chroma-client.js";
import { collectionName } from "../retrieval/chroma-store.js";
import { describeCollections, pruneCollections } from "../retrieval/collections.js";
import { DEFAULT_BATCH_SIZE, describeIngest, ingest } from "../retrieval/ingest.js";
import { DEFAULT_REQUEST_TIMEOUT_MS, requestTimeoutMs, TIMEOUT_ENV } from "../retrieval/chroma-faults.js";
import { action, err, out, outText } from "./io.js";
import { addMaxCardBytesOption, positiveIntOption, positiveNumberOption } from "./options.js";
import { progressReporter } from "./progress.js";
import { lsaStateDir, openEmbedder, resolveStoreChoice } from "../system.js";

export interface IngestCommandOptions {
  kb: string;
  store: string;
  embedder: string;
  dataDir?: string;
  batchSize?: number;
  json?: boolean;
  /** Chroma request deadline, seconds (docs/reliability.md). */
  timeout?: number;
  /** List retrace's collections with their sizes instead of ingesting. */
  list?: boolean;
  /** `--max-card-bytes` (src/kb/cards.ts). */
  maxCardBytes?: number;
  /** Delete every retrace collection but the current one of this KB and embedder, instead of ingesting. */
  prune?: boolean;
}

const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

export async function runIngest(opts: IngestCommandOptions): Promise<number> {
  const batchSize = opts.batchSize ?? DEFAULT_BATCH_SIZE;
  // The store word first: a bad one is a usage error before anything is read or started.
  const choice = resolveStoreChoice(opts.store);
  if (choice.kind === "memory" || choice.kind === "none")
    throw new InvalidArgumentError("--store", "auto, local or a Chroma URL (ingest writes into a Chroma store)", opts.store);
  const kb = await loadKnowledgeBase(opts.kb, opts.maxCardBytes !== undefined ? { maxCardBytes: opts.maxCardBytes } : {});
  const chunks = chunkKnowledgeBase(kb);
  const hash = kbHash(kb);
  // The embedder of the composition root's factory; the LSA embedder is fitted with the KB's analyzers (`<kb>/analyzers.json`), as `retrace eval` fits it: the same state and collection (and a model's weights fingerprinted).
  const { analyzers, file: analyzerFile } = loadKbAnalyzers(opts.kb);
  if (analyzerFile !== null) log.info(`analyzers: ${analyzerFile} applied`);
  const { embedder } = await openEmbedder({ embedder: opts.embedder, chunks, analyzers, stateDir: lsaStateDir(opts.dataDir) });

  const controller = new AbortController();
  let interrupted: keyof typeof SIGNAL_EXIT | undefined;
  const onSignal = (signal: keyof typeof SIGNAL_EXIT) => () => {
    if (interrupted !== undefined) {
      // Second signal: give up on a clean stop (the exit handler still stops the local server).
      process.exit(SIGNAL_EXIT[signal]);
    }
    interrupted = signal;
    err(`retrace: ${signal} received, stopping the ingest (the previous collection stays current); press Ctrl-C again to force`);
    controller.abort(new Error(`interrupted by ${signal}`));
  };
  const handlers = { SIGINT: onSignal("SIGINT"), SIGTERM: onSignal("SIGTERM") };
  for (const [s, h] of Object.entries(handlers)) process.on(s, h);

  let store: ChromaStoreHandle | undefined;
  const progress = progressReporter("ingest", "chunks");
  try {
    if (choice.kind === "local") log.info(`Starting a local Chroma server (data ${opts.dataDir ?? defaultDataDir()})`);
    store = await openStore({
      ...(choice.url !== undefined ? { url: choice.url } : { local: true }),
      ...(opts.dataDir !== undefined ? { dataDir: opts.dataDir } : {}),
      requestTimeoutMs: requestTimeoutMs(opts.timeout),
    });
    log.info(`Chroma ${store.kind === "local" ? "local server" : "server"} ready at ${store.url}`);
    controller.signal.throwIfAborted();
    if (opts.list === true || opts.prune === true) return await listOrPrune(store, collectionName(hash, embedder), opts);
    const result = await ingest({
      client: store.client,
      chunks,
      embedder,
      kbHash: hash,
      batchSize,
      signal: controller.signal,
      onProgress: (done, total) => progress.update(done, total),
    });
    progress.stop();
    if (result.removedStaging.length > 0) log.info(`Deleted ${result.removedStaging.length} stale staging collection(s) of interrupted ingests`);
    if (opts.json) {
      // What is true once this prints: a server this command started is stopped when it exits (no URL to
      // reach it by: url null, state "stopped", its data dir); a remote one keeps running (its URL, redacted).
      const where =
        store.kind === "local"
          ? { kind: store.kind, url: null, state: "stopped", dataDir: path.resolve(opts.dataDir ?? defaultDataDir()) }
          : { kind: store.kind, url: store.url, state: "running" }; // already redacted by openStore
      out(JSON.stringify({ version: 1, store: where, kbHash: hash, ...result }, null, 2));
    } else {
      outText(describeIngest(result));
    }
    return 0;
  } catch (e) {
    if (interrupted !== undefined) {
      progress.stop();
      err(`retrace: ingest interrupted by ${interrupted}; nothing was made current`);
      return SIGNAL_EXIT[interrupted];
    }
    throw e;
  } finally {
    progress.stop();
    await store?.close();
    for (const [s, h] of Object.entries(handlers)) process.off(s, h);
  }
}

function fmtBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${(n / 1024).toFixed(1)} kB`;
}

async function listOrPrune(store: ChromaStoreHandle, current: string, opts: IngestCommandOptions): Promise<number> {
  const removed = opts.prune === true ? await pruneCollections(store.client, new Set([current])) : [];
  for (const name of removed) log.info(`deleted collection ${name}`);
  const rows = await describeCollections(store.client, current);
  if (opts.json) {
    out(JSON.stringify({ version: 1, current, ...(opts.prune === true ? { removed } : {}), collections: rows }, null, 2));
    return 0;
  }
  if (opts.prune === true) outText(`removed ${removed.length} collection(s); kept ${current}`);
  for (const r of rows) {
    outText(`${r.name}  ${r.state}  ${r.records} records  ${fmtBytes(r.vectorBytes)} of vectors  kb ${r.kbHash?.slice(0, 12) ?? "?"}  embedder ${r.embedder ?? "?"}`);
  }
  if (rows.length === 0) outText("no retrace collections");
  return 0;
}

export function register(program: Command): void {
  const cmd = program
    .command("ingest")
    .description("Embed the knowledge base into Chroma (atomic and idempotent: a second run with the same KB and embedder does nothing)")
    .option("--kb <dir>", "knowledge-base folder (cards under <dir>/cards/<locale>/)", "kb")
    .option("--store <auto|local|url>", "Chroma server: auto = CHROMA_URL if set, else local; local = a server started on --data-dir; or a Chroma URL", "auto")
    .option("--embedder <auto|builtin|lsa|model>", "embedder: auto, builtin, lsa (corpus-fit LSA), or a transformers.js model id or folder", "auto")
    .option("--data-dir <dir>", "data folder of the local Chroma server (default .retrace/chroma)")
    .option("--batch-size <n>", "chunks embedded and written per request", positiveIntOption("--batch-size"), DEFAULT_BATCH_SIZE)
    .option("--json", "print the result as JSON")
    .option("--list", "list retrace's collections with their record counts and vector sizes (nothing is ingested)")
    .option("--prune", "delete every retrace collection except the current one of --kb and --embedder (nothing is ingested)")
    .option("--timeout <seconds>", `deadline of each Chroma request (default ${DEFAULT_REQUEST_TIMEOUT_MS / 1000} s, or ${TIMEOUT_ENV})`, positiveNumberOption("--timeout", "seconds"));
  addMaxCardBytesOption(cmd)
    .action(
      action(async (opts: IngestCommandOptions) => runIngest(opts)),
    );
}
