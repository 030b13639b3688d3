/**
 * Aggregation of per-turn results into the report's numbers (DESIGN.md §1.2,
 * §1.3, §3.5):
 *
 * - the mean of each key is taken over the turns where the key is PRESENT,
 *   always with its `n` (trec_eval averages without `-c` the same way); a
 *   turn that returned `[]` for a key adds nothing to its numerator or n;
 * - a key with n = 0 gets no aggregate at all (never a mean of 0 or 1): it
 *   is listed in `vacuous` with the reason (e.g. "no store");
 * - splits by case kind (golden / adversarial) and by locale, each group with
 *   its own n; the denominator is keyed on the presence of a score, not on
 *   the case kind, so an adversarial turn carrying gold counts;
 * - a 95% percentile-bootstrap interval per aggregate, seeded (same input →
 *   same interval);
 * - per-locale deltas against a reference locale with a permutation test, so
 *   a locale gap can be called significant or not.
 *
 * Pure and synchronous; inputs are never mutated.
 */
import { InvalidArgumentError } from "../errors.js";
import { CASE_KINDS, LOCALES } from "../kb/types.js";
import type { EvaluatorSpec } from "./evaluators.js";
import { TRIAD_KEYS } from "./metrics.js";
import { bootstrapCI, DEFAULT_SAMPLES, DEFAULT_SEED, permutationTest } from "./stats.js";
import {
  REPORT_VERSION,
  type Aggregate,
  type GateResult,
  type GroupDelta,
  type Report,
  type RunInfo,
  type TurnArtifacts,
  type TurnReport,
} from "./types.js";

export interface AggregateOptions {
  /** The evaluators that produced the results: their keys are the ones that can be vacuous. */
  evaluators: readonly EvaluatorSpec[];
  /** Bootstrap / permutation seed (default 42). */
  seed?: number;
  /** Resamples per interval and per test (default 2,000). */
  samples?: number;
  /** Locale the others are compared with (default "en" when present, else the first locale present). */
  referenceLocale?: string;
}

export interface Aggregation {
  aggregates: Record<string, Aggregate>;
  splits: Report["splits"];
  vacuous: string[];
  vacuousReasons: Record<string, string>;
  deltas: GroupDelta[];
}

/** The artifacts an evaluator saw for a reported turn (knownIds are not kept in reports). */
export function artifactsOf(t: TurnReport, knownIds?: ReadonlySet<string>): TurnArtifacts {
  const a: TurnArtifacts = {
    caseId: t.caseId,
    turn: t.turn,
    locale: t.locale,
    kind: t.kind,
    gold: t.gold,
    expect: t.expect,
    retrievedIds: t.retrievedIds,
    citedIds: t.citedIds,
    answer: t.answer,
    refused: t.refused,
  };
  if (knownIds !== undefined) a.knownIds = knownIds;
  return a;
}

/** Mean, n and seeded bootstrap interval of a non-empty list of scores. */
export function summarize(values: readonly number[], opts: { seed?: number; samples?: number } = {}): Aggregate {
  // A key with n = 0 has no aggregate (never a mean of 0 or 1).
  if (values.length === 0) throw new InvalidArgumentError("values", "a non-empty list of scores", []);
  let sum = 0;
  for (const v of values) sum += v;
  const agg: Aggregate = { mean: sum / values.length, n: values.length };
  const ci = bootstrapCI(values, { seed: opts.seed ?? DEFAULT_SEED, samples: opts.samples ?? DEFAULT_SAMPLES });
  if (ci !== null) agg.ci95 = ci;
  return agg;
}

/** Scores per key, in key order, over the given turns. */
function collect(turns: readonly TurnReport[], keyOrder: readonly string[]): Map<string, number[]> {
  const byKey = new Map<string, number[]>(keyOrder.map((k) => [k, []]));
  for (const t of turns) {
    for (const r of t.results) {
      let arr = byKey.get(r.key);
      if (arr === undefined) {
        arr = [];
        byKey.set(r.key, arr);
      }
      arr.push(r.score);
    }
  }
  return byKey;
}

function summarizeAll(byKey: Map<string, number[]>, opts: { seed: number; samples: number }): Record<string, Aggregate> {
  const out: Record<string, Aggregate> = {};
  for (const [key, values] of byKey) if (values.length > 0) out[key] = summarize(values, opts);
  return out;
}

/** Declared keys first (evaluator order), then any undeclared key seen in results, alphabetically. */
function keyOrder(turns: readonly TurnReport[], evaluators: readonly EvaluatorSpec[]): string[] {
  const declared: string[] = [];
  for (const spec of evaluators) for (const k of spec.keys) if (!declared.includes(k)) declared.push(k);
  const extra = new Set<string>();
  for (const t of turns) for (const r of t.results) if (!declared.includes(r.key)) extra.add(r.key);
  return [...declared, ...[...extra].sort()];
}

/** Groups in a canonical order: the known values first (in their order), then others alphabetically. */
function groupBy(turns: readonly TurnReport[], field: "kind" | "locale", known: readonly string[]): Map<string, TurnReport[]> {
  const seen = new Map<string, TurnReport[]>();
  for (const t of turns) {
    const g = t[field];
    const arr = seen.get(g);
    if (arr === undefined) seen.set(g, [t]);
    else arr.push(t);
  }
  const order = [...known.filter((g) => seen.has(g)), ...[...seen.keys()].filter((g) => !known.includes(g)).sort()];
  return new Map(order.map((g) => [g, seen.get(g) as TurnReport[]]));
}

/**
 * Why each declared key had n = 0: the most frequent "not measured" reason
 * among the turns (ties: first seen), else the evaluator's `whenEmpty`.
 */
function vacuousKeys(
  turns: readonly TurnReport[],
  evaluators: readonly EvaluatorSpec[],
  aggregates: Record<string, Aggregate>,
): { vacuous: string[]; vacuousReasons: Record<string, string> } {
  const vacuous: string[] = [];
  const vacuousReasons: Record<string, string> = {};
  for (const spec of evaluators) {
    const missing = spec.keys.filter((k) => aggregates[k] === undefined && !vacuous.includes(k));
    if (missing.length === 0) continue;
    let reason = spec.whenEmpty;
    if (spec.notMeasured !== undefined) {
      const counts = new Map<string, number>();
      for (const t of turns) {
        const r = spec.notMeasured(artifactsOf(t));
        if (r !== null) counts.set(r, (counts.get(r) ?? 0) + 1);
      }
      let best = 0;
      for (const [r, c] of counts) {
        if (c > best) {
          best = c;
          reason = r;
        }
      }
    }
    for (const k of missing) {
      vacuous.push(k);
      vacuousReasons[k] = reason;
    }
  }
  return { vacuous, vacuousReasons };
}

function localeDeltas(
  byLocale: Map<string, TurnReport[]>,
  keys: readonly string[],
  reference: string | undefined,
  opts: { seed: number; samples: number },
): GroupDelta[] {
  if (byLocale.size < 2) return [];
  const ref = reference ?? (byLocale.has("en") ? "en" : ([...byLocale.keys()][0] as string));
  const refTurns = byLocale.get(ref);
  if (refTurns === undefined) return [];
  const deltas: GroupDelta[] = [];
  for (const key of keys) {
    const refValues = collect(refTurns, [key]).get(key) as number[];
    if (refValues.length === 0) continue;
    for (const [locale, turns] of byLocale) {
      if (locale === ref) continue;
      const values = collect(turns, [key]).get(key) as number[];
      const test = permutationTest(refValues, values, opts);
      if (test === null) continue;
      const d: GroupDelta = {
        key,
        split: "locale",
        group: locale,
        reference: ref,
        nGroup: test.nB,
        nReference: test.nA,
        meanGroup: test.meanB,
        meanReference: test.meanA,
        diff: test.diff,
        pValue: test.pValue,
      };
      if (test.ci95 !== null) d.ci95 = test.ci95;
      deltas.push(d);
    }
  }
  return deltas;
}

/** Aggregate per-turn results: overall, per kind, per locale, vacuous keys and locale deltas (triad keys). */
export function aggregateTurns(turns: readonly TurnReport[], opts: AggregateOptions): Aggregation {
  const resample = { seed: opts.seed ?? DEFAULT_SEED, samples: opts.samples ?? DEFAULT_SAMPLES };
  const order = keyOrder(turns, opts.evaluators);
  const aggregates = summarizeAll(collect(turns, order), resample);

  const kind: Record<string, Record<string, Aggregate>> = {};
  for (const [g, ts] of groupBy(turns, "kind", CASE_KINDS)) kind[g] = summarizeAll(collect(ts, order), resample);
  const byLocale = groupBy(turns, "locale", LOCALES);
  const locale: Record<string, Record<string, Aggregate>> = {};
  for (const [g, ts] of byLocale) locale[g] = summarizeAll(collect(ts, order), resample);

  const { vacuous, vacuousReasons } = vacuousKeys(turns, opts.evaluators, aggregates);
  const deltas = localeDeltas(byLocale, TRIAD_KEYS, opts.referenceLocale, resample);
  return { aggregates, splits: { kind, locale }, vacuous, vacuousReasons, deltas };
}

export interface BuildReportInput extends AggregateOptions {
  run: RunInfo;
  turns: TurnReport[];
  gate?: GateResult | null;
}

/** Assemble the one Report object every rendering is made from. */
export function buildReport(input: BuildReportInput): Report {
  const agg = aggregateTurns(input.turns, input);
  return {
    schemaVersion: REPORT_VERSION,
    run: input.run,
    aggregates: agg.aggregates,
    splits: agg.splits,
    vacuous: agg.vacuous,
    vacuousReasons: agg.vacuousReasons,
    turns: input.turns,
    gate: input.gate ?? null,
    deltas: agg.deltas,
    bootstrap: { seed: input.seed ?? DEFAULT_SEED, samples: input.samples ?? DEFAULT_SAMPLES },
  };
}
