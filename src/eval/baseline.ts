/**
 * The regression baseline (docs/gates-and-exit-codes.md): a versioned JSON file holding a
 * run's aggregates and per-turn scores, written only on explicit request
 * (`--update-baseline`), read back with validation, and compared with a new
 * run only when both measured the same thing (same eval cases, same k, same
 * retrieval configuration).
 *
 * File shape (version 1):
 * ```json
 * { "version": 1, "created": "2025-01-01T00:00:00.000Z", "datasetHash": "…", "kbHash": "…", "k": 5,
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
import { readFile } from "node:fs/promises";
import { writeFileAtomic } from "../atomic.js";
import { z } from "zod";
import { BaselineMismatchError, DataValidationError, type DataIssue } from "../errors.js";
import { turnKey } from "./stats.js";
import type { Aggregate, Report } from "./types.js";

export const BASELINE_VERSION = 1 as const;

export interface BaselineConfig {
  embedder: string | null;
  mode: string | null;
  rerank: string | null;
}

/** Kind of store a run used: a self-started local Chroma, a Chroma server at a URL, an in-process index, or none. */
export type StoreKind = "local" | "remote" | "memory" | "none";

/** The kind of a report's `run.store` ("local", "memory", "none", or a server URL → "remote"). */
export function storeKindOf(store: string): StoreKind {
  if (store === "local" || store === "memory" || store === "none") return store;
  return "remote";
}

export interface Baseline {
  version: typeof BASELINE_VERSION;
  /** ISO-8601 time the baseline was written. */
  created: string;
  datasetHash: string;
  kbHash: string;
  k: number;
  config: BaselineConfig;
  /** Store kind of the run the baseline was made from (absent in older baselines). */
  storeKind?: StoreKind;
  aggregates: Record<string, Aggregate>;
  /** The report's split aggregates: split → group → key → aggregate (absent in older baselines). */
  splits?: Record<string, Record<string, Record<string, Aggregate>>>;
  /** `caseId#turn` → key → score. */
  perTurn: Record<string, Record<string, number>>;
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
    version: BASELINE_VERSION,
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

const unit = z.number().finite();
const aggregateSchema = z
  .object({
    mean: unit,
    n: z.number().int().positive(),
    ci95: z.tuple([unit, unit]).optional(),
    // Cases among the n turns and chance level (docs/statistics.md).
    nCases: z.number().int().positive().optional(),
    chance: unit.optional(),
  })
  // Other statistics an aggregate may carry (case counts, the interval's method) are kept as they are.
  .passthrough();

const baselineSchema = z
  .object({
    version: z.literal(BASELINE_VERSION),
    created: z.string().min(1),
    datasetHash: z.string().min(1),
    kbHash: z.string(),
    k: z.number().int().positive(),
    config: z
      .object({
        embedder: z.string().nullable(),
        mode: z.string().nullable(),
        rerank: z.string().nullable(),
      })
      .strict(),
    storeKind: z.enum(["local", "remote", "memory", "none"]).optional(),
    aggregates: z.record(aggregateSchema),
    splits: z.record(z.record(z.record(aggregateSchema))).optional(),
    perTurn: z.record(z.record(unit)),
  })
  .strict();

function fieldPath(path: readonly (string | number)[]): string | undefined {
  if (path.length === 0) return undefined;
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out === "" ? p : `.${p}`;
  return out;
}

/** Validate a parsed baseline; throws DataValidationError naming `file` and each bad field. */
export function parseBaseline(data: unknown, file: string): Baseline {
  const parsed = baselineSchema.safeParse(data);
  if (!parsed.success) {
    const issues: DataIssue[] = parsed.error.issues.map((i) => {
      const issue: DataIssue = { file, message: i.message };
      const field = fieldPath(i.path);
      if (field !== undefined) issue.field = field;
      if (i.path[0] === "version" && i.code === "invalid_literal") {
        issue.message = `expected baseline version ${BASELINE_VERSION}, got ${JSON.stringify(i.received)}`;
      }
      return issue;
    });
    throw new DataValidationError(issues);
  }
  return parsed.data as Baseline;
}

/** Read and validate a baseline file (DataValidationError naming the file and the field). */
export async function readBaseline(path: string): Promise<Baseline> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new DataValidationError([
      { file: path, message: code === "ENOENT" ? "baseline file not found (create it with --update-baseline)" : `cannot read the baseline: ${String(e)}` },
    ]);
  }
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
 * (a comparison would measure the configuration change, not a regression).
 * A different `kbHash` is allowed — a KB edit is exactly what a regression
 * check should catch — and returned as a note for the caller to show
 * (this function does no I/O, so the gate that calls it stays pure).
 */
export function assertComparable(baseline: Baseline, report: Report): string[] {
  if (baseline.datasetHash !== report.run.datasetHash) {
    throw new BaselineMismatchError("datasetHash", baseline.datasetHash, report.run.datasetHash);
  }
  if (baseline.k !== report.run.k) throw new BaselineMismatchError("k", baseline.k, report.run.k);
  const cfg = configOf(report);
  for (const field of ["embedder", "mode", "rerank"] as const) {
    if (baseline.config[field] !== cfg[field]) {
      throw new BaselineMismatchError(`config.${field}`, baseline.config[field], cfg[field]);
    }
  }
  const notes: string[] = [];
  if (baseline.kbHash !== report.run.kbHash) {
    notes.push(`the baseline was made with another knowledge base (kbHash ${baseline.kbHash}, now ${report.run.kbHash}); comparing anyway`);
  }
  return notes;
}
