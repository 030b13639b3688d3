/**
 * Paired comparison of two runs of the same dataset (two report JSON files,
 * or a baseline and a report): for each metric, the means over the turns both
 * runs scored, the difference B − A, its paired bootstrap interval
 * (resampling whole cases by default) and the p-value inverted from that
 * same interval, so an interval excluding 0 always comes with "significant"
 * (docs/statistics.md). Each metric is its own family of one test: its
 * adjusted p equals its raw p.
 */
import { readTextFileOrThrow } from "../../kb/text.js";
import { DataValidationError } from "../../errors.js";
import { parseBaseline } from "./baseline.js";
import { METRICS } from "../measures/metrics.js";
import { SIGNIFICANCE_LEVEL } from "../report/render.js";
import { DEFAULT_RESAMPLE, DEFAULT_SAMPLES, DEFAULT_SEED, pairedBootstrap, perTurnScores, type PairedBootstrap, type PerTurnSource, type ResampleUnit } from "../stats/bootstrap.js";
import { parseReport } from "../report/schemas.js";
import { funnelDiff, funnelStages, perTurnStages, type FunnelStageDiff } from "../report/funnel-stats.js";
import type { FunnelStage, TurnReport } from "../report/types.js";

export interface RunSide {
  file: string;
  datasetHash: string;
  k: number;
  keys: string[];
  source: PerTurnSource;
}

export interface KeyComparison extends PairedBootstrap {
  key: string;
  /** Holm-adjusted p within the metric's family; the family is this one test, so it equals pValue. */
  pAdjusted: number;
  familySize: number;
  /** pAdjusted < 0.05, which is exactly "ci95 excludes 0". */
  significant: boolean;
}

export interface CompareOptions {
  seed?: number;
  samples?: number;
  /** What the bootstrap resamples (default: whole cases). */
  resample?: ResampleUnit;
}

/** How `compareRuns` resampled, for the report. */
export function comparisonMethod(opts: CompareOptions = {}): { unit: ResampleUnit; seed: number; samples: number; test: string; correction: string } {
  return {
    unit: opts.resample ?? DEFAULT_RESAMPLE,
    seed: opts.seed ?? DEFAULT_SEED,
    samples: opts.samples ?? DEFAULT_SAMPLES,
    test: "paired percentile bootstrap of the mean difference; p inverted from the same interval",
    correction: "none needed: one test per metric (family size 1)",
  };
}

/** Reads a report JSON (`retrace eval --report-json` / `--json`) or a baseline file. */
export async function readRunSide(file: string): Promise<RunSide> {
  const text = await readTextFileOrThrow(file); // the one text loader (src/kb/text.ts)
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new DataValidationError([{ file, message: `expected a retrace report or baseline JSON file (${(e as Error).message})` }]);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) throw new DataValidationError([{ file, message: "expected a JSON object" }]);
  if ("perTurn" in data) {
    const b = parseBaseline(data, file);
    return { file, datasetHash: b.datasetHash, k: b.k, keys: Object.keys(b.aggregates), source: b };
  }
  // ReportSchema (src/eval/report/schemas.ts), migrating an older schemaVersion: every field compare reads is checked, file and field named, exit 2.
  const report = parseReport(data, file);
  return { file, datasetHash: report.run.datasetHash, k: report.run.k, keys: Object.keys(report.aggregates), source: report };
}

/** Refuses to pair runs of different datasets or k (their per-turn scores do not measure the same thing). */
export function assertPairable(a: RunSide, b: RunSide): void {
  if (a.datasetHash !== b.datasetHash)
    throw new DataValidationError([{ file: b.file, field: "datasetHash", message: `cannot pair with ${a.file}: dataset ${b.datasetHash.slice(0, 12)} differs from ${a.datasetHash.slice(0, 12)}` }]);
  if (a.k !== b.k) throw new DataValidationError([{ file: b.file, field: "k", message: `cannot pair with ${a.file}: k=${b.k} differs from k=${a.k}` }]);
}

/** One paired comparison per metric present in both runs (registry metrics first, then the others, by name). */
export function compareRuns(a: RunSide, b: RunSide, opts: CompareOptions = {}): KeyComparison[] {
  assertPairable(a, b);
  const shared = a.keys.filter((k) => b.keys.includes(k));
  const registry = METRICS.map((m) => m.key);
  const ordered = [...registry.filter((k) => shared.includes(k)), ...shared.filter((k) => !registry.includes(k)).sort()];
  const out: KeyComparison[] = [];
  for (const key of ordered) {
    const c = pairedBootstrap(perTurnScores(a.source, key), perTurnScores(b.source, key), {
      seed: opts.seed ?? DEFAULT_SEED,
      samples: opts.samples ?? DEFAULT_SAMPLES,
      unit: opts.resample ?? DEFAULT_RESAMPLE,
    });
    if (c !== null) out.push({ key, ...c, pAdjusted: c.pValue, familySize: 1, significant: c.pValue < SIGNIFICANCE_LEVEL });
  }
  return out;
}

/** Both runs' stage funnels and the paired difference per stage (null when a side is a baseline: it holds no per-turn stages). */
export interface FunnelComparison {
  a: FunnelStage[];
  b: FunnelStage[];
  /** B − A per stage measured in both, over the turns both measured, with the paired interval. */
  diff: FunnelStageDiff[];
}

/** The stage funnels of two report runs and their paired differences (docs/metrics.md, "Stage funnel"); null unless both sides are reports. */
export function compareFunnels(a: RunSide, b: RunSide, opts: CompareOptions = {}): FunnelComparison | null {
  assertPairable(a, b);
  if (!("turns" in a.source) || !("turns" in b.source)) return null;
  const ta = a.source.turns as TurnReport[];
  const tb = b.source.turns as TurnReport[];
  const o = { seed: opts.seed ?? DEFAULT_SEED, samples: opts.samples ?? DEFAULT_SAMPLES, resample: opts.resample ?? DEFAULT_RESAMPLE };
  return { a: funnelStages(ta, o), b: funnelStages(tb, o), diff: funnelDiff(perTurnStages(ta), perTurnStages(tb), o) };
}
