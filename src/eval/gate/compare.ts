/**
 * Paired comparison of two runs of the same dataset (two report JSON files,
 * or a baseline and a report): for each metric, the means over the turns both
 * runs scored, the difference B − A, its paired bootstrap interval
 * (resampling whole cases by default) and the p-value inverted from that
 * same interval, so an interval excluding 0 always comes with "significant"
 * (docs/statistics.md). Each metric is its own family of one test: its
 * adjusted p equals its raw p. Two `--graph` runs scored differently
 * (retrieval-call mode, id keys, id map) are not paired: the difference would
 * measure the scoring (docs/evaluate-your-graph.md, "Baselines").
 *
 * Answer-side keys (every key outside the retrieval registry: citation,
 * refusal, groundedness, …) follow the held-out rule of `retrace eval`
 * (src/eval/report/parts.ts, docs/holdout.md): when a report side carries
 * the tune/holdout parts, their rows are paired over the `holdout` turns only
 * (`turns: "holdout"`), so their n is eval's; retrieval rows are on every
 * turn. A baseline file carries no parts: against a report the report's
 * parts decide; between two baselines every turn counts (`turns: "all"`).
 *
 * `turnFlips` lists the turns whose hit@k differs between the runs (hit→miss
 * first, then miss→hit, in dataset order) and `movedTurns` those whose hit@k
 * held but recall@k or nDCG@k moved. `buildComparison` computes all of it
 * once into one Comparison (src/eval/report/comparison.ts), the document
 * `retrace compare --json` prints, which the terminal text, the compare page
 * and the pull-request comment only format.
 */
import { readTextFileOrThrow } from "../../kb/text.js";
import { DataValidationError } from "../../errors.js";
import { graphScoringDifferences, graphScoringOf, parseBaseline, type Baseline } from "./baseline.js";
import type { BaselineGraph } from "../report/schemas.js";
import { HIT_KEY, METRICS, metricKey } from "../measures/metrics.js";
import { isAnswerSideKey } from "../report/parts.js";
import {
  COMPARISON_VERSION,
  SHIFT_THRESHOLD,
  type Comparison,
  type ComparisonMethod,
  type FunnelChangeRow,
  type FunnelComparison,
  type FunnelCount,
  type KeyComparison,
  type MovedTurn,
  type TurnFlip,
} from "../report/comparison.js";
import { runDifferences } from "./run-diff.js";
import {
  DEFAULT_RESAMPLE,
  SIGNIFICANCE_LEVEL,
  DEFAULT_SAMPLES,
  DEFAULT_SEED,
  pairedBootstrap,
  perTurnScores,
  turnKey,
  type PerTurnSource,
  type ResampleUnit,
} from "../stats/bootstrap.js";
import { parseAndFillReport } from "../report/derived-on-read.js";
import { funnelDiff, funnelStages, perTurnStages } from "../report/funnel-stats.js";
import type { FunnelStage, Report, TurnReport } from "../report/types.js";
import { parseJsonOrThrow } from "../../kb/json.js";

export interface RunSide {
  file: string;
  datasetHash: string;
  k: number;
  keys: string[];
  source: PerTurnSource;
  /** `--graph` runs: how the run was scored and what ran (null: a graph run that does not record it; undefined: not a graph run). */
  graph?: BaselineGraph | null;
  /** The parsed file: a report, or a baseline (`perTurn`); set by readRunSide. Without it the side has no parts and no locales. */
  data?: Report | Baseline;
}

export type {
  Comparison,
  ComparisonMethod,
  FunnelChangeRow,
  FunnelComparison,
  FunnelCount,
  KeyComparison,
  MovedTurn,
  TurnFlip,
};
export { COMPARISON_VERSION, SHIFT_THRESHOLD };

export interface CompareOptions {
  seed?: number;
  samples?: number;
  /** What the bootstrap resamples (default: whole cases). */
  resample?: ResampleUnit;
}

/** How `compareRuns` resampled, for the report. */
export function comparisonMethod(opts: CompareOptions = {}): ComparisonMethod {
  return {
    unit: opts.resample ?? DEFAULT_RESAMPLE,
    seed: opts.seed ?? DEFAULT_SEED,
    samples: opts.samples ?? DEFAULT_SAMPLES,
    test: "paired percentile bootstrap of the mean difference; p inverted from the same interval",
    correction: "none needed: one test per metric (family size 1)",
  };
}

/**
 * The two lines under every rendering of a comparison (`retrace compare`'s
 * text and the compare page): the test, unit, resamples and seed, then when a
 * row is significant and the correction.
 */
export function comparisonNote(method: ComparisonMethod): [string, string] {
  return [
    `Paired over the turns both runs scored (caseId#turn). Interval: ${method.test}; resampling unit: ${method.unit}, ${method.samples} resamples, seed ${method.seed}.`,
    `Significant when the adjusted p < ${SIGNIFICANCE_LEVEL}, which is exactly when the 95% interval excludes 0. Correction: ${method.correction}.`,
  ];
}

/** Reads a report JSON (`retrace eval --out json:FILE` / `--json`) or a baseline file. */
export async function readRunSide(file: string): Promise<RunSide> {
  const text = await readTextFileOrThrow(file); // the one text loader (src/kb/text.ts)
  const data = parseJsonOrThrow(text, { file, expected: "a retrace report or baseline JSON file" }); // src/kb/json.ts
  if (typeof data !== "object" || data === null || Array.isArray(data))
    throw new DataValidationError([{ file, message: "expected a JSON object" }]);
  // A baseline, or a ReportSchema (src/eval/report/schemas.ts) migrating an older schemaVersion: every field compare reads is checked, file and field named, exit 2.
  return runSideOf(file, "perTurn" in data ? parseBaseline(data, file) : parseAndFillReport(data, file));
}

/** Refuses to pair runs of different datasets or k (their per-turn scores do not measure the same thing). */
export function assertPairable(a: RunSide, b: RunSide): void {
  if (a.datasetHash !== b.datasetHash)
    throw new DataValidationError([
      {
        file: b.file,
        field: "datasetHash",
        message: `cannot pair with ${a.file}: dataset ${b.datasetHash.slice(0, 12)} differs from ${a.datasetHash.slice(0, 12)}`,
      },
    ]);
  if (a.k !== b.k)
    throw new DataValidationError([
      { file: b.file, field: "k", message: `cannot pair with ${a.file}: k=${b.k} differs from k=${a.k}` },
    ]);
  if (a.graph != null && b.graph != null) {
    const r = graphScoringDifferences(a.graph, b.graph, { before: a.file, now: b.file }).refusals[0];
    if (r !== undefined)
      throw new DataValidationError([
        {
          file: b.file,
          field: r.field,
          message: `cannot pair with ${a.file}: ${JSON.stringify(r.now)} here, ${JSON.stringify(r.before)} there; ${r.why}`,
        },
      ]);
  }
}

/**
 * What the comparison of two pairable runs should say but does not refuse:
 * a `--graph` module changed between them ("graph module changed since the
 * baseline"), another `--configurable`, or a graph run that does not record
 * how it was scored.
 */
export function pairingNotes(a: RunSide, b: RunSide): string[] {
  if (a.graph === undefined || b.graph === undefined) return [];
  if (a.graph === null || b.graph === null)
    return [
      `${a.graph === null ? a.file : b.file} does not record how it was scored (retrieval-call mode, id keys or id-map hash, configurable hash, graph module hash: written before they were recorded); comparing as before`,
    ];
  return graphScoringDifferences(a.graph, b.graph, { before: a.file, now: b.file }).notes;
}

/** One paired comparison per metric present in both runs (registry metrics first, then the others, by name). */
export function compareRuns(a: RunSide, b: RunSide, opts: CompareOptions = {}): KeyComparison[] {
  assertPairable(a, b);
  const shared = a.keys.filter((k) => b.keys.includes(k));
  const registry = METRICS.map((m) => m.key);
  const ordered = [
    ...registry.filter((k) => shared.includes(k)),
    ...shared.filter((k) => !registry.includes(k)).sort(),
  ];
  const out: KeyComparison[] = [];
  const heldOut = heldOutTurns(a, b);
  for (const key of ordered) {
    const restrict = heldOut !== null && isAnswerSideKey(key);
    const only = (m: Map<string, number>) => (restrict ? new Map([...m].filter(([id]) => heldOut.has(id))) : m);
    const c = pairedBootstrap(only(perTurnScores(a.source, key)), only(perTurnScores(b.source, key)), {
      seed: opts.seed ?? DEFAULT_SEED,
      samples: opts.samples ?? DEFAULT_SAMPLES,
      unit: opts.resample ?? DEFAULT_RESAMPLE,
    });
    if (c !== null)
      out.push({
        key,
        ...c,
        pAdjusted: c.pValue,
        familySize: 1,
        significant: c.pValue < SIGNIFICANCE_LEVEL,
        verdict: c.pValue < SIGNIFICANCE_LEVEL ? "significant" : "not significant",
        turns: restrict ? "holdout" : "all",
      });
  }
  return out;
}

/** The sides that are full reports, A first. */
function reportsOf(a: RunSide, b: RunSide): Report[] {
  return [a.data, b.data].filter((d): d is Report => d !== undefined && !("perTurn" in d));
}

/**
 * The held-out turns (`caseId#turn`) answer-side rows are paired over: those
 * in the `holdout` part of every report side that carries parts; null when
 * no side does (no split, or two baselines).
 */
export function heldOutTurns(a: RunSide, b: RunSide): Set<string> | null {
  const parted = reportsOf(a, b).filter((d) => d.turns.some((t) => t.part !== undefined));
  if (parted.length === 0) return null;
  const sets = parted.map(
    (r) => new Set(r.turns.filter((t) => t.part === "holdout").map((t) => turnKey(t.caseId, t.turn))),
  );
  return new Set([...sets[0]!].filter((id) => sets.every((s) => s.has(id))));
}

/** Each turn's locale (from the report sides, A's first) and the turn order lists follow: the first report side's, else A's keys. */
function turnOrder(
  a: RunSide,
  b: RunSide,
  fallback: Iterable<string>,
): { order: string[]; locale: Map<string, string> } {
  const reports = reportsOf(a, b);
  const locale = new Map<string, string>();
  for (const r of reports)
    for (const t of r.turns)
      if (!locale.has(turnKey(t.caseId, t.turn))) locale.set(turnKey(t.caseId, t.turn), t.locale);
  const order = reports.length > 0 ? reports[0]!.turns.map((t) => turnKey(t.caseId, t.turn)) : [...fallback];
  return { order, locale };
}

/** `caseId#turn` → its case id, turn and locale (when a report side knows it). */
function turnOf(
  id: string,
  locale: ReadonlyMap<string, string>,
): { id: string; caseId: string; turn: number; locale?: string } {
  const cut = id.lastIndexOf("#");
  const l = locale.get(id);
  return { id, caseId: id.slice(0, cut), turn: Number(id.slice(cut + 1)), ...(l !== undefined ? { locale: l } : {}) };
}

/**
 * Turns scored in both runs whose hit@k differs: hit→miss (A 1, B 0) first,
 * then miss→hit, each in the order of the first report side (A's when both
 * are reports or both baselines).
 */
export function turnFlips(a: RunSide, b: RunSide): TurnFlip[] {
  const ha = perTurnScores(a.source, HIT_KEY);
  const hb = perTurnScores(b.source, HIT_KEY);
  const { order, locale } = turnOrder(a, b, ha.keys());
  const lost: TurnFlip[] = [];
  const gained: TurnFlip[] = [];
  for (const id of order) {
    const x = ha.get(id);
    const y = hb.get(id);
    if (x === undefined || y === undefined || x === y) continue;
    const flip: TurnFlip = { ...turnOf(id, locale), direction: x === 1 && y === 0 ? "hit→miss" : "miss→hit" };
    if (x === 1 && y === 0) lost.push(flip);
    else if (x === 0 && y === 1) gained.push(flip);
  }
  return [...lost, ...gained];
}

/** Float rounding allowed when comparing a change with the threshold (0.7 − 0.5 is a change of 0.2). */
const FLOAT_SLACK = 1e-9;

/**
 * Turns whose hit@k is the same in both runs (so not a flip) but whose
 * recall@k or nDCG@k changed by at least `threshold` in absolute value
 * (|B − A| ≥ threshold for either metric, up to FLOAT_SLACK). Only turns with
 * hit@k, recall@k and nDCG@k scored in both runs count (a turn without gold
 * has none).
 *
 * One order for every rendering: by the larger-magnitude change of the two
 * (recall's on a tie), ascending — the biggest drop first, the biggest gain
 * last; equal changes in the first report side's order (A's when both are
 * reports). A `threshold` ≤ 0 lists every unflipped turn scored in both runs.
 */
export function movedTurns(a: RunSide, b: RunSide, threshold: number = SHIFT_THRESHOLD): MovedTurn[] {
  const RECALL_KEY = metricKey("recall");
  const NDCG_KEY = metricKey("ndcg");
  const [ha, hb] = [perTurnScores(a.source, HIT_KEY), perTurnScores(b.source, HIT_KEY)];
  const [ra, rb] = [perTurnScores(a.source, RECALL_KEY), perTurnScores(b.source, RECALL_KEY)];
  const [na, nb] = [perTurnScores(a.source, NDCG_KEY), perTurnScores(b.source, NDCG_KEY)];
  const { order, locale } = turnOrder(a, b, ha.keys());
  const out: (MovedTurn & { at: number })[] = [];
  order.forEach((id, at) => {
    const [h1, h2, r1, r2, n1, n2] = [ha.get(id), hb.get(id), ra.get(id), rb.get(id), na.get(id), nb.get(id)];
    if (
      h1 === undefined ||
      h2 === undefined ||
      r1 === undefined ||
      r2 === undefined ||
      n1 === undefined ||
      n2 === undefined ||
      h1 !== h2
    )
      return;
    const recall = r2 - r1;
    const ndcg = n2 - n1;
    if (Math.abs(recall) < threshold - FLOAT_SLACK && Math.abs(ndcg) < threshold - FLOAT_SLACK) return;
    const largest = Math.abs(ndcg) > Math.abs(recall) ? ndcg : recall;
    out.push({ ...turnOf(id, locale), hit: h1, recall, ndcg, largest, change: largest < 0 ? "drop" : "gain", at });
  });
  return out.sort((x, y) => x.largest - y.largest || x.at - y.at).map(({ at: _at, ...m }) => m);
}

/** The stage funnels of two report runs and their paired differences (docs/metrics.md, "Stage funnel"); null unless both sides are reports. */
export function compareFunnels(a: RunSide, b: RunSide, opts: CompareOptions = {}): FunnelComparison | null {
  assertPairable(a, b);
  if (!("turns" in a.source) || !("turns" in b.source)) return null;
  const ta = a.source.turns as TurnReport[];
  const tb = b.source.turns as TurnReport[];
  const o = {
    seed: opts.seed ?? DEFAULT_SEED,
    samples: opts.samples ?? DEFAULT_SAMPLES,
    resample: opts.resample ?? DEFAULT_RESAMPLE,
  };
  return { a: funnelStages(ta, o), b: funnelStages(tb, o), diff: funnelDiff(perTurnStages(ta), perTurnStages(tb), o) };
}

/**
 * The change of the stage funnel between two reports, row per stage (A's
 * stages in order, then those only B measured): each run's count as its
 * report's `funnel.stages` counted it and B − A in turns. Null unless both
 * sides are reports with a funnel.
 */
export function funnelChange(a: RunSide, b: RunSide): FunnelChangeRow[] | null {
  const stagesOf = (s: RunSide) =>
    s.data !== undefined && !("perTurn" in s.data) ? (s.data.funnel?.stages ?? []) : [];
  const before = stagesOf(a);
  const now = stagesOf(b);
  if (before.length === 0 || now.length === 0) return null;
  const count = (r: FunnelStage | undefined): FunnelCount | null =>
    r === undefined ? null : { present: r.present, n: r.n, share: r.share };
  const stages = [...before, ...now.filter((r) => !before.some((x) => x.stage === r.stage))];
  return stages.map((s) => {
    const x = before.find((r) => r.stage === s.stage);
    const y = now.find((r) => r.stage === s.stage);
    return {
      stage: s.stage,
      label: s.label,
      a: count(x),
      b: count(y),
      turns: x !== undefined && y !== undefined ? y.present - x.present : null,
    };
  });
}

/** A run side of an in-memory report or baseline (`file` names it in messages). */
export function runSideOf(file: string, data: Report | Baseline): RunSide {
  if ("perTurn" in data) {
    const graph = data.graph ?? (data.source.kind !== "own" ? null : undefined);
    return {
      file,
      datasetHash: data.datasetHash,
      k: data.k,
      keys: Object.keys(data.aggregates),
      source: data,
      data,
      ...(graph !== undefined ? { graph } : {}),
    };
  }
  const graph = graphScoringOf(data) ?? (data.run.graph !== undefined ? null : undefined);
  return {
    file,
    datasetHash: data.run.datasetHash,
    k: data.run.k,
    keys: Object.keys(data.aggregates),
    source: data,
    data,
    ...(graph !== undefined ? { graph } : {}),
  };
}

/**
 * The comparison of A (the reference) and B, computed once
 * (src/eval/report/comparison.ts): paired rows per metric with their
 * verdicts, flips, moved turns, stage funnels (both sides reports), the run
 * properties that differ and the method lines. Refuses unpairable runs
 * (assertPairable, exit 2).
 */
export function buildComparison(a: RunSide, b: RunSide, opts: CompareOptions = {}): Comparison {
  const comparisons = compareRuns(a, b, opts);
  const method = comparisonMethod(opts);
  const flips = turnFlips(a, b);
  const funnels = compareFunnels(a, b, opts);
  const held = heldOutTurns(a, b);
  const change = funnelChange(a, b);
  return {
    version: COMPARISON_VERSION,
    a: a.file,
    b: b.file,
    datasetHash: a.datasetHash,
    k: a.k,
    differences: a.data !== undefined && b.data !== undefined ? runDifferences(a.data, b.data) : [],
    method,
    note: comparisonNote(method),
    notes: pairingNotes(a, b),
    comparisons,
    flips: {
      hitToMiss: flips.filter((f) => f.direction === "hit→miss").length,
      missToHit: flips.filter((f) => f.direction === "miss→hit").length,
      turns: flips,
    },
    moved: { threshold: SHIFT_THRESHOLD, turns: movedTurns(a, b) },
    heldOutTurns: held === null ? null : held.size,
    ...(funnels !== null ? { funnels } : {}),
    ...(change !== null ? { funnelChange: change } : {}),
  };
}

/**
 * A run's comparison with its reference (the baseline its gate compared with,
 * or a report), as its pull-request comment shows it: the reference is A,
 * the run is B (`this run`), resampled as the run's report was. Null without
 * a reference.
 */
export function referenceComparison(
  report: Report,
  reference: { file: string; data: Baseline | Report } | null,
  opts: { seed: number },
): Comparison | null {
  if (reference === null) return null;
  return buildComparison(runSideOf(reference.file, reference.data), runSideOf("this run", report), {
    seed: opts.seed,
    resample: report.bootstrap?.unit ?? DEFAULT_RESAMPLE,
  });
}
