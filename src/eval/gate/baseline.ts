/**
 * The regression baseline (docs/gates-and-exit-codes.md): a versioned JSON file holding a
 * run's aggregates and per-turn scores, written only on explicit request
 * (`--update-baseline`), read back with validation, and compared with a new
 * run only when both measured the same thing (same eval cases, same k, same
 * retrieval configuration).
 *
 * File shape (schemaVersion 2, defined by BaselineSchema in src/eval/report/schemas.ts;
 * version 1 files, which carried `"version": 1`, are migrated on read):
 * ```json
 * { "schemaVersion": 2, "created": "2025-01-01T00:00:00.000Z", "datasetHash": "…", "kbHash": "…", "k": 5,
 *   "config": { "embedder": "builtin-hash-ngram-384", "mode": "hybrid", "rerank": null },
 *   "storeKind": "local",
 *   "aggregates": { "retrieval_hit_at_k": { "mean": 0.9, "n": 120, "ci95": [0.85, 0.95] } },
 *   "splits": { "locale": { "en": { "retrieval_hit_at_k": { "mean": 0.95, "n": 40, "ci95": [0.9, 1] } } } },
 *   "perTurn": { "en-refund-003#0": { "retrieval_hit_at_k": 1 } } }
 * ```
 * `storeKind` (local | remote | memory | none) and `splits` (the report's
 * split aggregates, read by `retrace baseline floors`) are optional, so
 * baselines written before them still load.
 */
import { readTextFileOrThrow } from "../../kb/text.js";
import { embedderFamily } from "../../retrieval/embedders/lsa.js";
import { writeFileAtomic } from "../../atomic.js";
import { BaselineMismatchError, DataValidationError } from "../../errors.js";
import { BASELINE_VERSION, parseBaselineData, type BaselineData } from "../report/schemas.js";
import { turnKey } from "../stats/bootstrap.js";
import type { Aggregate, Report } from "../report/types.js";

export { BASELINE_VERSION };

/** A baseline, inferred from BaselineSchema (src/eval/report/schemas.ts); `created` is the ISO-8601 time it was written, `perTurn` maps `caseId#turn` → key → score. */
export type Baseline = BaselineData;
export type BaselineConfig = Baseline["config"];

/** Kind of store a run used: a self-started local Chroma, a Chroma server at a URL, an in-process index, or none. */
export type StoreKind = "local" | "remote" | "memory" | "none";

/** The kind of a report's `run.store` ("local", "memory", "none", or a server URL → "remote"). */
export function storeKindOf(store: string): StoreKind {
  if (store === "local" || store === "memory" || store === "none") return store;
  return "remote";
}

function configOf(report: Report): BaselineConfig {
  return { embedder: report.run.embedder, mode: report.run.mode ?? null, rerank: report.run.rerank ?? null };
}

/** The baseline a report would be saved as. */
export function baselineFromReport(report: Report, created: Date = new Date()): Baseline {
  const perTurn: Record<string, Record<string, number>> = {};
  for (const t of report.turns) {
    if (t.results.length === 0) continue;
    const scores: Record<string, number> = {};
    for (const r of t.results) scores[r.key] = r.score;
    perTurn[turnKey(t.caseId, t.turn)] = scores;
  }
  return {
    schemaVersion: BASELINE_VERSION,
    created: created.toISOString(),
    datasetHash: report.run.datasetHash,
    kbHash: report.run.kbHash,
    k: report.run.k,
    config: configOf(report),
    storeKind: storeKindOf(report.run.store),
    // A copy: the baseline must not alias (and later edits must not change) the report.
    aggregates: structuredClone(report.aggregates),
    splits: structuredClone(report.splits) as Record<string, Record<string, Record<string, Aggregate>>>,
    perTurn,
    // The stage shares, for `--max-stage-drop` (docs/gates-and-exit-codes.md).
    ...(report.funnel !== undefined ? { funnel: structuredClone(report.funnel.stages) } : {}),
  };
}

/**
 * Write the report's baseline to `path` atomically: the JSON goes to a
 * temporary file in the same directory, which is then renamed over `path`
 * (a reader sees the old file or the new one, never half of one). The
 * temporary file is removed if anything fails. Returns what was written.
 */
export async function writeBaseline(path: string, report: Report, created: Date = new Date()): Promise<Baseline> {
  const baseline = baselineFromReport(report, created);
  await writeFileAtomic(path, `${JSON.stringify(baseline, null, 2)}\n`);
  return baseline;
}

/** Validate a parsed baseline (migrating an older schemaVersion); throws DataValidationError naming `file` and each bad field. */
export function parseBaseline(data: unknown, file: string): Baseline {
  return parseBaselineData(data, file);
}

/** Read and validate a baseline file (DataValidationError naming the file and the field). */
export async function readBaseline(path: string): Promise<Baseline> {
  const text = await readTextFileOrThrow(path, { missing: "baseline file not found (create it with --update-baseline)" }); // src/kb/text.ts
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new DataValidationError([{ file: path, message: `not valid JSON: ${(e as Error).message}` }]);
  }
  return parseBaseline(data, path);
}

/**
 * Throw BaselineMismatchError when the baseline and the run did not measure
 * the same thing, checked in this order: `datasetHash` (other eval cases:
 * other turns, other gold), `k` (scores at another cutoff), then the
 * retrieval configuration `config.embedder`, `config.mode`, `config.rerank`
 * (a comparison would measure the configuration change, not a regression;
 * a corpus-fit embedder is compared by `embedderFamily`, without its fit hash).
 * A different `kbHash` is allowed — a KB edit is exactly what a regression
 * check should catch — and returned as a note for the caller to show
 * (this function does no I/O, so the gate that calls it stays pure).
 */
function sameEmbedder(a: string | null, b: string | null): boolean {
  return a === b || (a !== null && b !== null && embedderFamily(a) === embedderFamily(b));
}

export function assertComparable(baseline: Baseline, report: Report): string[] {
  if (baseline.datasetHash !== report.run.datasetHash) {
    throw new BaselineMismatchError("datasetHash", baseline.datasetHash, report.run.datasetHash);
  }
  if (baseline.k !== report.run.k) throw new BaselineMismatchError("k", baseline.k, report.run.k);
  const cfg = configOf(report);
  for (const field of ["embedder", "mode", "rerank"] as const) {
    // A corpus-fit embedder refitted after a KB edit is the same embedder (its family).
    const same = field === "embedder" ? sameEmbedder(baseline.config.embedder, cfg.embedder) : baseline.config[field] === cfg[field];
    if (!same) {
      throw new BaselineMismatchError(`config.${field}`, baseline.config[field], cfg[field]);
    }
  }
  const notes: string[] = [];
  if (baseline.kbHash !== report.run.kbHash) {
    notes.push(`the baseline was made with another knowledge base (kbHash ${baseline.kbHash}, now ${report.run.kbHash}); comparing anyway`);
  }
  return notes;
}
