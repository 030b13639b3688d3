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
 * `turnFlips` lists the turns whose hit@k differs between the runs (the
 * compare page's flips: hit→miss first, then miss→hit, in dataset order) for
 * the text and JSON outputs.
 */
import { readTextFileOrThrow } from "../../kb/text.js";
import { DataValidationError } from "../../errors.js";
import { GRAPH_PREFIX, graphScoringDifferences, graphScoringOf, parseBaseline, type Baseline } from "./baseline.js";
import type { BaselineGraph } from "../report/schemas.js";
import { HIT_KEY, METRICS } from "../measures/metrics.js";
import { isAnswerSideKey } from "../report/parts.js";
import { SIGNIFICANCE_LEVEL } from "../report/render.js";
import {
  DEFAULT_RESAMPLE,
  DEFAULT_SAMPLES,
  DEFAULT_SEED,
  pairedBootstrap,
  perTurnScores,
  turnKey,
  type PairedBootstrap,
  type PerTurnSource,
  type ResampleUnit,
} from "../stats/bootstrap.js";
import { parseReport } from "../report/schemas.js";
import { funnelDiff, funnelStages, perTurnStages, type FunnelStageDiff } from "../report/funnel-stats.js";
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

export interface KeyComparison extends PairedBootstrap {
  key: string;
  /** Holm-adjusted p within the metric's family; the family is this one test, so it equals pValue. */
  pAdjusted: number;
  familySize: number;
  /** pAdjusted < 0.05, which is exactly "ci95 excludes 0". */
  significant: boolean;
  /** The turns paired: every shared turn, or (answer-side keys of a run with a split) the held-out ones only. */
  turns: "all" | "holdout";
}

/** A turn whose hit@k differs between the two runs. */
export interface TurnFlip {
  /** `caseId#turn` */
  id: string;
  caseId: string;
  turn: number;
  /** The turn's locale, from a report side (absent between two baselines, which do not record it). */
  locale?: string;
  direction: "hit→miss" | "miss→hit";
}

export interface CompareOptions {
  seed?: number;
  samples?: number;
  /** What the bootstrap resamples (default: whole cases). */
  resample?: ResampleUnit;
}

/** How `compareRuns` resampled and tested: what every rendering of a comparison names (docs/statistics.md). */
export interface ComparisonMethod {
  unit: ResampleUnit;
  seed: number;
  samples: number;
  test: string;
  correction: string;
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
  if ("perTurn" in data) {
    const b = parseBaseline(data, file);
    const graph = b.graph ?? (b.config.embedder?.startsWith(GRAPH_PREFIX) === true ? null : undefined);
    return {
      file,
      datasetHash: b.datasetHash,
      k: b.k,
      keys: Object.keys(b.aggregates),
      source: b,
      data: b,
      ...(graph !== undefined ? { graph } : {}),
    };
  }
  // ReportSchema (src/eval/report/schemas.ts), migrating an older schemaVersion: every field compare reads is checked, file and field named, exit 2.
  const report = parseReport(data, file);
  const graph = graphScoringOf(report) ?? (report.run.graph !== undefined ? null : undefined);
  return {
    file,
    datasetHash: report.run.datasetHash,
    k: report.run.k,
    keys: Object.keys(report.aggregates),
    source: report,
    data: report,
    ...(graph !== undefined ? { graph } : {}),
  };
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

/**
 * Turns scored in both runs whose hit@k differs: hit→miss (A 1, B 0) first,
 * then miss→hit, each in the order of the first report side (A's when both
 * are reports or both baselines). The same turns, in the same order, as the
 * compare page's flips (./compare-page.ts).
 */
export function turnFlips(a: RunSide, b: RunSide): TurnFlip[] {
  const ha = perTurnScores(a.source, HIT_KEY);
  const hb = perTurnScores(b.source, HIT_KEY);
  const reports = reportsOf(a, b);
  const locale = new Map<string, string>();
  for (const r of reports)
    for (const t of r.turns)
      if (!locale.has(turnKey(t.caseId, t.turn))) locale.set(turnKey(t.caseId, t.turn), t.locale);
  const order = reports.length > 0 ? reports[0]!.turns.map((t) => turnKey(t.caseId, t.turn)) : [...ha.keys()];
  const lost: TurnFlip[] = [];
  const gained: TurnFlip[] = [];
  for (const id of order) {
    const x = ha.get(id);
    const y = hb.get(id);
    if (x === undefined || y === undefined || x === y) continue;
    const cut = id.lastIndexOf("#");
    const l = locale.get(id);
    const flip: TurnFlip = {
      id,
      caseId: id.slice(0, cut),
      turn: Number(id.slice(cut + 1)),
      ...(l !== undefined ? { locale: l } : {}),
      direction: x === 1 && y === 0 ? "hit→miss" : "miss→hit",
    };
    if (x === 1 && y === 0) lost.push(flip);
    else if (x === 0 && y === 1) gained.push(flip);
  }
  return [...lost, ...gained];
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
  const o = {
    seed: opts.seed ?? DEFAULT_SEED,
    samples: opts.samples ?? DEFAULT_SAMPLES,
    resample: opts.resample ?? DEFAULT_RESAMPLE,
  };
  return { a: funnelStages(ta, o), b: funnelStages(tb, o), diff: funnelDiff(perTurnStages(ta), perTurnStages(tb), o) };
}
