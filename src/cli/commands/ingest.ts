/**
 * `retrace ingest`: embed the KB's chunks into Chroma (src/app/ingest.ts;
 * atomic, idempotent), or list / prune retrace's collections. Starts a local
 * Chroma server on `--data-dir` unless `--store URL` or CHROMA_URL names
 * one, and stops it before exiting. One summary line on stdout (JSON with
 * `--json`); progress on stderr.
 * Exit 0 done or already up to date; 2 bad usage or invalid KB; 3 Chroma or
 * the embedding model unavailable; 130/143 interrupted (the previous
 * collection stays current).
 *
 * Ctrl-C (SIGINT) or SIGTERM stops the ingest cleanly: the process ends by
 * itself with exit 130 / 143 (process.exitCode, never process.exit:
 * docs/architecture.md §8). A second signal gives up on the clean stop: the
 * signal is re-raised with its default action, as src/retrieval/chroma-process.ts
 * does (a local server is still stopped by its exit handler and watchdog).
 */
import type { Command } from "commander";
import { EVAL_DEFAULTS } from "../../app/eval-defaults.js";
import { ingestKb, type IngestKbOptions, type IngestKbOutcome } from "../../app/ingest.js";
import { DEFAULT_BATCH_SIZE, describeIngest } from "../../retrieval/ingest.js";
import { embedderSetupText } from "../../eval/report/render/table.js";
import { action, err, out, outText } from "../io.js";
import { positiveIntOption } from "../options.js";
import { addRetired } from "../old-spellings.js";
import { addConfigOption } from "../settings.js";
import { progressReporter } from "../progress.js";

/** The options as parsed. */
type IngestCommandOptions = IngestKbOptions & { kb: string; store: string; embedder: string; json?: boolean };

const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;
type StopSignal = keyof typeof SIGNAL_EXIT;

export async function ingestCommand(opts: IngestCommandOptions): Promise<number> {
  const controller = new AbortController();
  let interrupted: StopSignal | undefined;
  const handlers = {} as Record<StopSignal, () => void>;
  const removeHandlers = () => {
    for (const [s, h] of Object.entries(handlers)) process.off(s, h);
  };
  const onSignal = (signal: StopSignal) => () => {
    if (interrupted !== undefined) {
      // Second signal: give up on a clean stop. The process ends with the signal's status: this
      // listener steps aside and the signal is re-raised (any other listener, e.g. the local
      // server's in chroma-process.ts, then stops that server first).
      removeHandlers();
      process.exitCode = SIGNAL_EXIT[signal];
      process.kill(process.pid, signal);
      return;
    }
    interrupted = signal;
    err(
      `retrace: ${signal} received, stopping the ingest (the previous collection stays current); press Ctrl-C again to force`,
    );
    controller.abort(new Error(`interrupted by ${signal}`));
  };
  handlers.SIGINT = onSignal("SIGINT");
  handlers.SIGTERM = onSignal("SIGTERM");
  for (const [s, h] of Object.entries(handlers)) process.on(s, h);
  try {
    return print(await ingestKb(opts, { progress: progressReporter, signal: controller.signal }), opts.json === true);
  } catch (e) {
    if (interrupted !== undefined) {
      err(`retrace: ingest interrupted by ${interrupted}; nothing was made current`);
      return SIGNAL_EXIT[interrupted];
    }
    throw e;
  } finally {
    removeHandlers();
  }
}

function print(r: IngestKbOutcome, json: boolean): number {
  if (r.kind === "ingested") {
    // Wall clock apart (docs/determinism.md): the embedder's fit (or load) and the store's write (embedding the chunks and writing them).
    const { chanceMs } = r.embedderSetup;
    const timings = {
      embedder: {
        kind: r.embedderSetup.kind,
        ms: round1(r.embedderSetup.ms),
        ...(chanceMs !== undefined ? { chanceMs: round1(chanceMs) } : {}),
      },
      store: { status: r.result.status, writeMs: round1(r.result.durationMs) },
    };
    if (json) out(JSON.stringify({ version: 1, store: r.store, kbHash: r.kbHash, ...r.result, timings }, null, 2));
    else outText(`${describeIngest(r.result)}; ${setupLine(timings)}`);
    return 0;
  }
  if (json) {
    const p = r.pruned;
    const reclaimed =
      p === undefined
        ? {}
        : {
            reclaimed: {
              bytes: p.reclaimedBytes,
              segmentFolders: p.segmentFolders,
              segmentBytes: p.segmentBytes,
              lsaStates: p.lsaStates,
              lsaBytes: p.lsaBytes,
            },
          };
    out(
      JSON.stringify(
        {
          version: 1,
          current: r.current,
          ...(r.removed !== undefined ? { removed: r.removed } : {}),
          ...reclaimed,
          collections: r.collections,
        },
        null,
        2,
      ),
    );
    return 0;
  }
  if (r.pruned !== undefined) {
    const p = r.pruned;
    const what = `${p.segmentFolders.length} segment folder(s), ${p.lsaStates.length} LSA state(s)`;
    outText(
      `removed ${p.removed.length} collection(s); kept ${r.current}; reclaimed ${fmtBytes(p.reclaimedBytes)} (${p.reclaimedBytes} bytes: ${what})`,
    );
  }
  for (const c of r.collections) {
    outText(
      `${c.name}  ${c.state}  ${c.records} records  ${fmtBytes(c.vectorBytes)} of vectors  kb ${c.kbHash?.slice(0, 12) ?? "?"}  embedder ${c.embedder ?? "?"}`,
    );
  }
  if (r.collections.length === 0) outText("no retrace collections");
  return 0;
}

const round1 = (ms: number) => Math.round(ms * 10) / 10;

const SETUP_WORDS = {
  "lsa-fit": "LSA fit",
  "lsa-load": "LSA state loaded",
  "model-load": "model loaded",
  none: "built-in embedder, nothing to prepare",
} as const;

/** `timings: LSA fit 0.41 s, store write 1.20 s (embed + write)` (the end of the summary line). */
function setupLine(t: {
  embedder: { kind: keyof typeof SETUP_WORDS; ms: number; chanceMs?: number };
  store: { status: string; writeMs: number };
}): string {
  const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const store =
    t.store.status === "ingested"
      ? `store write ${sec(t.store.writeMs)} (embed + write)`
      : `store up to date (checked in ${sec(t.store.writeMs)})`;
  return `timings: ${embedderSetupText(t.embedder, SETUP_WORDS, sec)}, ${store}`;
}

function fmtBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${(n / 1024).toFixed(1)} kB`;
}

export function register(program: Command): void {
  const cmd = program
    .command("ingest")
    .description(
      "Embed the knowledge base into Chroma (atomic and idempotent: a second run with the same KB and embedder does nothing)",
    )
    .option("--kb <dir>", "knowledge-base folder (cards under <dir>/cards/<locale>/)", "kb")
    .option(
      "--store <auto|local|url>",
      "Chroma server: auto = CHROMA_URL if set, else local; local = a server started on --data-dir; or a Chroma URL",
      EVAL_DEFAULTS.store,
    )
    .option("--data-dir <dir>", "data folder of the local Chroma server (default .retrace/chroma)")
    .option(
      "--batch-size <n>",
      "chunks embedded and written per request",
      positiveIntOption("--batch-size"),
      DEFAULT_BATCH_SIZE,
    )
    .option("--json", "print the result as JSON")
    .option("--list", "list retrace's collections with their record counts and vector sizes (nothing is ingested)")
    .option(
      "--prune",
      "delete every retrace collection except the current one of --kb and --embedder, with their segment folders and unused LSA states (nothing is ingested)",
    );
  // retrieval.embedder and run.{timeout, maxCardBytes} are settings of --config, as on eval.
  addRetired(
    addConfigOption(cmd, {
      retrievalWhy: "not a setting of retrace ingest (it embeds the cards; search settings do not apply)",
    }),
  ).action(action(async (opts: IngestCommandOptions) => ingestCommand(opts)));
}
