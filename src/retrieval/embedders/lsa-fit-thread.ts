/**
 * The LSA fit in a thread of its own for a corpus of some size (issue 49;
 * docs/reliability.md, "Every sweep stops when asked"): seconds of synchronous
 * arithmetic would otherwise hold off SIGINT/SIGTERM/SIGHUP until they end.
 */
import { moduleWorker, siblingModule } from "../../module-worker.js";
import { reviveError, type SerializedError } from "../../thread-errors.js";
import type { Analyzers } from "../analyzer.js";
import { fitWithChance } from "./lsa-fit.js";
import { parseLsa, type LsaChunk, type LsaParams, type LsaState } from "./lsa-format.js";

/** `fitWithChance` for the thread of `fitLsaOffThread` (./lsa-fit-worker.ts). */
export const fitLsaHere = fitWithChance;

/**
 * Corpora of at least this many characters are fitted in a thread of their
 * own: the shipped KB (about 100 kB of cards) takes seconds of synchronous
 * arithmetic, during which retrace's own thread could not stop on a signal.
 * Smaller ones fit in well under a second, here.
 */
export const OFF_THREAD_FIT_CHARS = 30_000;

/**
 * `fitWithChance` in a worker thread when the corpus is large enough
 * (OFF_THREAD_FIT_CHARS), so that SIGINT/SIGTERM/SIGHUP stop the run at
 * once while it fits (docs/reliability.md, "Every sweep stops when asked").
 * The same state, to the bit: the thread answers the state's bytes, which
 * hold `idf` and `sigma` as float64 and `v` as the float32 it already is.
 */
export async function fitLsaOffThread(
  chunks: readonly LsaChunk[],
  p: LsaParams,
  analyzers: Analyzers,
): Promise<{ state: LsaState; chanceMs: number }> {
  let chars = 0;
  for (const c of chunks) chars += c.text.length;
  if (chars < OFF_THREAD_FIT_CHARS) return fitWithChance(chunks, p, analyzers);
  const worker = moduleWorker(siblingModule(import.meta.url, "lsa-fit-worker"), {
    chunks: chunks.map((c) => ({ id: c.id, locale: c.locale, text: c.text })),
    params: p,
    overrides: analyzers.overrides,
  });
  try {
    const m = await new Promise<
      { bytes: Uint8Array; chanceShare: number; chanceMs: number } | { error: SerializedError }
    >((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the LSA fit's thread ended (exit ${code}) before answering`)));
    });
    if ("error" in m) throw reviveError(m.error);
    const state = parseLsa(m.bytes);
    state.chanceShare = m.chanceShare;
    return { state, chanceMs: m.chanceMs };
  } finally {
    void worker.terminate();
  }
}
