/**
 * Aggregation of per-turn results into the report's numbers (docs/statistics.md).
 * Over 400 lines because `buildReport` assembles every section of the report
 * from one pass (means, splits, chance, deltas, answer side) and splitting it
 * would pass half-built reports between files:
 *
 * - the mean of each key is taken over the turns where the key is PRESENT
 *   (turn-weighted), always with its `n` (turns) and the number of cases
 *   among them; a turn that returned `[]` for a key adds nothing to its
 *   numerator or n;
 * - a key with n = 0 gets no aggregate at all (never a mean of 0 or 1): it
 *   is listed in `vacuous` with the reason (e.g. "no store");
 * - splits by case kind (golden / adversarial) and by locale, each group with
 *   its own n; the denominator is keyed on the presence of a score, not on
 *   the case kind, so an adversarial turn carrying gold counts;
 * - a 95% percentile-bootstrap interval per aggregate, seeded, resampling
 *   whole cases by default (`resample: "turn"` resamples single turns);
 * - the chance level of each retrieval metric (src/eval/measures/chance.ts) when the
 *   card count of each locale is given;
 * - deltas of each split group against the split's reference group (kind:
 *   golden; locale: en) for the triad keys, each with a bootstrap interval
 *   and the p-value inverted from it; all deltas of one key form one
 *   Holm–Bonferroni family (src/eval/stats/holm.ts);
 * - with a tune/holdout split, answer-side keys' headline figures (overall,
 *   kind, locale) on the held-out turns only, and every key per part, the
 *   part deltas in the same Holm family (./parts.ts, docs/holdout.md).
 *
 * Pure and synchronous; inputs are never mutated.
 */
import { wordDeltaVerdict } from "./verdict.js";
import { recallCurvesOf } from "./recall-curves.js";
import { InvalidArgumentError } from "../../errors.js";
import { CASE_KINDS, LOCALES } from "../../kb/types.js";
import { smallKbWarning } from "../measures/chance.js";
import type { EvaluatorSpec } from "../measures/evaluators.js";
import { holmAdjust } from "../stats/holm.js";
import { answerSideOf, hasParts, headlineTurns, NO_HOLDOUT_TURN, withoutSynthetic } from "./parts.js";
import { funnelOf, hasLongPositions, turnSplits } from "./funnel-stats.js";
import { queryAttributionOf } from "./query-attribution.js";
import { TRIAD_KEYS, turnChanceLevel } from "../measures/metrics.js";
import { judgmentsOf, measuresNotComputedOf } from "./judgments.js";
import {
  bootstrapDelta,
  clusterMean,
  ClusterMeanBatch,
  DEFAULT_RESAMPLE,
  DEFAULT_SAMPLES,
  DEFAULT_SEED,
  type ClusteredValue,
  type ResampleUnit,
} from "../stats/bootstrap.js";
import {
  REPORT_VERSION,
  type Aggregate,
  type AnswerSide,
  type GateResult,
  type GroupDelta,
  type Report,
  type RunInfo,
  type TurnReport,
} from "./types.js";
import { vacuousKeys } from "./vacuous.js";

export { artifactsOf } from "./vacuous.js";

/** Significance level of the adjusted p-values (a delta is significant when its Holm-adjusted p is below it). */
export const FAMILY_ALPHA = 0.05;
/** How deltas are tested, as named in the report. */
export const DELTA_TEST = "stratified percentile bootstrap of the difference; p inverted from the same interval";
/** How p-values are adjusted, as named in the report. */
export const DELTA_CORRECTION = "Holm–Bonferroni within each metric (all its split deltas form one family)";

export interface AggregateOptions {
  /** The evaluators that produced the results: their keys are the ones that can be vacuous. */
  evaluators: readonly EvaluatorSpec[];
  /** Bootstrap seed (default 42). */
  seed?: number;
  /** Resamples per interval and per test (default 2,000). */
  samples?: number;
  /** What the bootstrap resamples: whole cases (default) or single turns. */
  resample?: ResampleUnit;
  /** Locale the others are compared with (default "en" when present, else the first locale present). */
  referenceLocale?: string;
  /**
   * Further splits of the cases beyond kind and locale (e.g. tune / holdout):
   * each gets its aggregates under `splits[name]`, chance levels, and deltas
   * against its reference group in the same Holm family as the kind and
   * locale deltas of each key. A turn whose case has no group is left out of
   * that split.
   */
  extraSplits?: readonly ExtraSplit[];
  /** Cards per locale (N) and k, for the chance levels of the retrieval metrics; omitted → no chance levels. */
  chance?: { cardsPerLocale: Readonly<Record<string, number>>; k: number };
}

export interface ExtraSplit {
  /** Key under `Report.splits`, e.g. "part"; not "kind" or "locale". */
  name: string;
  /** Group of a case, e.g. "tune" or "holdout"; undefined leaves the case out of this split. */
  groupOf: (caseId: string) => string | undefined;
  /** Canonical group order (others follow alphabetically). */
  order?: readonly string[];
  /** Group the others are compared with (default: the first group present). */
  reference?: string;
}

interface Resample {
  seed: number;
  samples: number;
  unit: ResampleUnit;
}

export interface Aggregation {
  aggregates: Record<string, Aggregate>;
  splits: Report["splits"];
  vacuous: string[];
  vacuousReasons: Record<string, string>;
  deltas: GroupDelta[];
  /** Small-KB warnings (k at least a third of a locale's cards). */
  chanceWarnings: string[];
  /** Which turns the answer-side headline figures come from (./parts.ts). */
  answerSide: AnswerSide;
}

/**
 * Mean, n, number of cases and seeded bootstrap interval of a non-empty list
 * of scores. Plain numbers are taken as one case each (so both units agree).
 */
export function summarize(
  values: readonly number[] | readonly ClusteredValue[],
  opts: { seed?: number; samples?: number; resample?: ResampleUnit } = {},
): Aggregate {
  // A key with n = 0 has no aggregate (never a mean of 0 or 1).
  if (values.length === 0) throw new InvalidArgumentError("values", "a non-empty list of scores", []);
  const clustered: ClusteredValue[] = values.map((v, i) =>
    typeof v === "number" ? { cluster: String(i).padStart(12, "0"), value: v } : v,
  );
  const m = clusterMean(clustered, {
    seed: opts.seed ?? DEFAULT_SEED,
    samples: opts.samples ?? DEFAULT_SAMPLES,
    unit: opts.resample ?? DEFAULT_RESAMPLE,
  });
  if (m === null) throw new InvalidArgumentError("values", "a non-empty list of scores", []);
  const agg: Aggregate = { mean: m.mean, n: m.n, nCases: m.nCases };
  if (m.ci95 !== null) agg.ci95 = m.ci95;
  return agg;
}

/** Scores per key, in key order, over the given turns, each tagged with its case. */
function collect(turns: readonly TurnReport[], keyOrder: readonly string[]): Map<string, ClusteredValue[]> {
  const byKey = new Map<string, ClusteredValue[]>(keyOrder.map((k) => [k, []]));
  for (const t of turns) {
    for (const r of t.results) {
      let arr = byKey.get(r.key);
      if (arr === undefined) {
        arr = [];
        byKey.set(r.key, arr);
      }
      arr.push({ cluster: t.caseId, value: r.score });
    }
  }
  return byKey;
}

/** A key's scores over a list of turns, each tagged with its case, and their mean chance level (undefined: none, see `collectWithChance`). */
interface KeyValues {
  values: ClusteredValue[];
  chance: number | undefined;
}

/**
 * Scores per key, in key order, over the given turns (as `collect`), with
 * each key's mean chance level over the turns that have it: undefined when
 * the key has no chance level or a turn's locale has no card count. One
 * pass over the turns; each key's chance levels are added in turn order.
 */
function collectWithChance(
  turns: readonly TurnReport[],
  keyOrder: readonly string[],
  chance: AggregateOptions["chance"],
): Map<string, KeyValues> {
  const byKey = new Map<string, KeyValues>(keyOrder.map((k) => [k, { values: [], chance: undefined }]));
  // Per key: the chance levels' sum and count, or null once a turn has none.
  const chanceOf = new Map<string, { sum: number; n: number } | null>();
  for (const t of turns) {
    const N = chance?.cardsPerLocale[t.locale];
    for (let i = 0; i < t.results.length; i++) {
      const r = t.results[i]!;
      let kv = byKey.get(r.key);
      if (kv === undefined) {
        kv = { values: [], chance: undefined };
        byKey.set(r.key, kv);
      }
      kv.values.push({ cluster: t.caseId, value: r.score });
      if (chance === undefined) continue;
      // A turn counts once per key, however many results it has of it.
      let again = false;
      for (let j = 0; j < i && !again; j++) again = t.results[j]!.key === r.key;
      if (again) continue;
      let acc = chanceOf.get(r.key);
      if (acc === null) continue;
      // A graded turn's nDCG@k has the chance level of its gains (turnChanceLevel).
      const c = N === undefined ? null : turnChanceLevel(r.key, N, t, chance.k);
      if (c === null) {
        chanceOf.set(r.key, null);
        continue;
      }
      if (acc === undefined) {
        acc = { sum: 0, n: 0 };
        chanceOf.set(r.key, acc);
      }
      acc.sum += c;
      acc.n++;
    }
  }
  for (const [key, acc] of chanceOf) if (acc !== null && acc.n > 0) byKey.get(key)!.chance = acc.sum / acc.n;
  return byKey;
}

/**
 * `collectWithChance`, once per distinct list of turns: the split groups of
 * a report often hold every turn (one kind, one locale), and such a group's
 * scores and chance levels are those of the whole list.
 */
class CollectedTurns {
  private readonly seen: { turns: readonly TurnReport[]; byKey: Map<string, KeyValues> }[] = [];
  constructor(
    private readonly order: readonly string[],
    private readonly chance: AggregateOptions["chance"],
  ) {}
  of(turns: readonly TurnReport[]): Map<string, KeyValues> {
    for (const s of this.seen)
      if (s.turns.length === turns.length && s.turns.every((t, i) => t === turns[i])) return s.byKey;
    const byKey = collectWithChance(turns, this.order, this.chance);
    this.seen.push({ turns, byKey });
    return byKey;
  }
}

/** The aggregates of `turns`, their intervals filled in when `batch` runs (the key order of each aggregate is that of `summarize`, then `chance`). */
function summarizeAll(
  turns: readonly TurnReport[],
  collected: CollectedTurns,
  batch: ClusterMeanBatch,
): Record<string, Aggregate> {
  const out: Record<string, Aggregate> = {};
  for (const [key, { values, chance: c }] of collected.of(turns)) {
    if (values.length === 0) continue;
    // The callback runs when the batch does, after the aggregate is made below.
    const m = batch.add(values, (ci95) => {
      const agg = out[key]!;
      if (ci95 !== null) agg.ci95 = ci95;
      if (c !== undefined) agg.chance = c;
    });
    if (m === null) throw new InvalidArgumentError("values", "a non-empty list of scores", []);
    out[key] = { mean: m.mean, n: m.n, nCases: m.nCases };
  }
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
function groupBy(
  turns: readonly TurnReport[],
  field: "kind" | "locale",
  known: readonly string[],
): Map<string, TurnReport[]> {
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

/** Groups of an extra split, in its canonical order; turns of cases without a group are left out. */
function groupByCase(turns: readonly TurnReport[], split: ExtraSplit): Map<string, TurnReport[]> {
  const seen = new Map<string, TurnReport[]>();
  for (const t of turns) {
    const g = split.groupOf(t.caseId);
    if (g === undefined) continue;
    const arr = seen.get(g);
    if (arr === undefined) seen.set(g, [t]);
    else arr.push(t);
  }
  const known = split.order ?? [];
  const order = [...known.filter((g) => seen.has(g)), ...[...seen.keys()].filter((g) => !known.includes(g)).sort()];
  return new Map(order.map((g) => [g, seen.get(g) as TurnReport[]]));
}

/** One split dimension for deltas: its name, its groups (canonical order) and the reference group. */
interface SplitForDeltas {
  split: string;
  groups: Map<string, TurnReport[]>;
  reference: string | undefined;
}

/**
 * Deltas of every non-reference group against the reference group of each
 * split, for each key; then, per key, the Holm adjustment over all of that
 * key's deltas (every split together).
 */
function splitDeltas(splits: readonly SplitForDeltas[], keys: readonly string[], opts: Resample): GroupDelta[] {
  const deltas: GroupDelta[] = [];
  for (const key of keys) {
    const family: GroupDelta[] = [];
    for (const { split, groups, reference } of splits) {
      if (groups.size < 2) continue;
      const ref = reference !== undefined && groups.has(reference) ? reference : ([...groups.keys()][0] as string);
      const refValues = collect(groups.get(ref) as TurnReport[], [key]).get(key) as ClusteredValue[];
      if (refValues.length === 0) continue;
      for (const [group, turns] of groups) {
        if (group === ref) continue;
        const values = collect(turns, [key]).get(key) as ClusteredValue[];
        const test = bootstrapDelta(refValues, values, opts);
        if (test === null) continue;
        const d: GroupDelta = {
          key,
          split,
          group,
          reference: ref,
          nGroup: test.nB,
          nReference: test.nA,
          nCasesGroup: test.nCasesB,
          nCasesReference: test.nCasesA,
          meanGroup: test.meanB,
          meanReference: test.meanA,
          diff: test.diff,
          pValue: test.pValue,
        };
        if (test.ci95 !== null) d.ci95 = test.ci95;
        family.push(d);
      }
    }
    const adjusted = holmAdjust(family.map((d) => d.pValue));
    family.forEach((d, i) => {
      d.pAdjusted = adjusted[i] as number;
      d.familySize = family.length;
      d.significant = (adjusted[i] as number) < FAMILY_ALPHA;
      d.verdict = wordDeltaVerdict(d); // worded once, here; every rendering prints it
    });
    deltas.push(...family);
  }
  return deltas;
}

/** Small-KB warnings for the locales present in the turns, in canonical locale order. */
function chanceWarnings(byLocale: Map<string, TurnReport[]>, chance: AggregateOptions["chance"]): string[] {
  if (chance === undefined) return [];
  const out: string[] = [];
  for (const locale of byLocale.keys()) {
    const N = chance.cardsPerLocale[locale];
    if (N === undefined) continue;
    const w = smallKbWarning(locale, N, chance.k);
    if (w !== null) out.push(w);
  }
  return out;
}

/** Aggregate per-turn results: overall, per kind, per locale, vacuous keys, split deltas (triad keys) and chance levels. */
export function aggregateTurns(allTurns: readonly TurnReport[], opts: AggregateOptions): Aggregation {
  return aggregateInto(allTurns, opts);
}

/** `aggregateTurns`, the intervals added to `shared` (filled in when the caller runs it) or, without one, computed here. */
function aggregateInto(
  allTurns: readonly TurnReport[],
  opts: AggregateOptions,
  shared?: ClusterMeanBatch,
): Aggregation {
  const resample: Resample = {
    seed: opts.seed ?? DEFAULT_SEED,
    samples: opts.samples ?? DEFAULT_SAMPLES,
    unit: opts.resample ?? DEFAULT_RESAMPLE,
  };
  // Every interval of the aggregates is computed in one batch (bit-identical to one clusterMean each; src/eval/stats/bootstrap.ts).
  const batch = shared ?? new ClusterMeanBatch({ seed: resample.seed, samples: resample.samples, unit: resample.unit });
  const order = keyOrder(allTurns, opts.evaluators);
  // With a split, answer-side results of tune turns stay out of the headline figures (./parts.ts).
  const parted = headlineTurns(allTurns);
  // Synthetic cases are a split of their own, never mixed into the headline (or the locale split) when real cases are present.
  const turns = withoutSynthetic(parted);
  const collected = new CollectedTurns(order, opts.chance);
  const aggregates = summarizeAll(turns, collected, batch);

  const byKind = groupBy(parted, "kind", CASE_KINDS);
  const kind: Record<string, Record<string, Aggregate>> = {};
  for (const [g, ts] of byKind) kind[g] = summarizeAll(ts, collected, batch);
  const byLocale = groupBy(turns, "locale", LOCALES);
  const locale: Record<string, Record<string, Aggregate>> = {};
  for (const [g, ts] of byLocale) locale[g] = summarizeAll(ts, collected, batch);

  const splits: Report["splits"] = { kind, locale };
  const forDeltas: SplitForDeltas[] = [
    { split: "kind", groups: byKind, reference: "golden" },
    { split: "locale", groups: byLocale, reference: opts.referenceLocale ?? (byLocale.has("en") ? "en" : undefined) },
  ];
  const extras: ExtraSplit[] = [...(opts.extraSplits ?? [])];
  if (hasParts(allTurns) && !extras.some((e) => e.name === "part")) {
    // The tune/holdout part is one more split of every turn (all keys, answer-side included), its delta in the same Holm family.
    const partOfCase = new Map(allTurns.map((t) => [t.caseId, t.part] as const));
    extras.push({
      name: "part",
      groupOf: (caseId) => partOfCase.get(caseId),
      order: ["tune", "holdout"],
      reference: "tune",
    });
  }
  for (const extra of extras) {
    if (extra.name in splits)
      throw new InvalidArgumentError(
        "extraSplits name",
        "a split name other than kind and locale, used once",
        extra.name,
      );
    const groups = groupByCase(allTurns, extra);
    const out: Record<string, Record<string, Aggregate>> = {};
    for (const [g, ts] of groups) out[g] = summarizeAll(ts, collected, batch);
    splits[extra.name] = out;
    forDeltas.push({ split: extra.name, groups, reference: extra.reference });
  }

  // Turn position (1, 2, 3, 4+; or the long buckets once a turn is past #3, ./positions.ts): a split of turns, not of cases
  // (a case has turns in several groups), so no deltas against a reference.
  const position: Record<string, Record<string, Aggregate>> = {};
  for (const [g, ts] of turnSplits(turns, hasLongPositions(allTurns)).position as Map<string, TurnReport[]>)
    position[g] = summarizeAll(ts, collected, batch);
  splits.position = position;

  const { vacuous, vacuousReasons } = vacuousKeys(allTurns, opts.evaluators, aggregates);
  for (const key of vacuous) if (splits.part?.tune?.[key] !== undefined) vacuousReasons[key] = NO_HOLDOUT_TURN;
  const deltas = splitDeltas(forDeltas, TRIAD_KEYS, resample);
  if (shared === undefined) batch.run();
  return {
    aggregates,
    splits,
    vacuous,
    vacuousReasons,
    deltas,
    chanceWarnings: chanceWarnings(byLocale, opts.chance),
    answerSide: answerSideOf(allTurns, order),
  };
}

export interface BuildReportInput extends AggregateOptions {
  run: RunInfo;
  turns: TurnReport[];
  gate?: GateResult | null;
  /** Cards per locale in the KB: gives every retrieval metric its chance level at `run.k` (unless `chance` is given). */
  cardsPerLocale?: Readonly<Record<string, number>>;
  /** Whether counterfactual retrieval ran (and why not): gives the report its `queryAttribution` section (docs/query-attribution.md). Unset: no section. */
  counterfactual?: { enabled: boolean; reason?: string };
}

/** Assemble the one Report object every rendering is made from. */
export function buildReport(input: BuildReportInput): Report {
  const chance =
    input.chance ??
    (input.cardsPerLocale !== undefined ? { cardsPerLocale: input.cardsPerLocale, k: input.run.k } : undefined);
  // One batch for the intervals of the aggregates and of the funnel, run before the report is assembled.
  const r = resampleOf(input);
  const batch = new ClusterMeanBatch({ seed: r.seed, samples: r.samples, unit: r.resample });
  const agg = aggregateInto(input.turns, { ...input, ...(chance !== undefined ? { chance } : {}) }, batch);
  const funnel = withFunnel(input.turns, r, batch);
  batch.run();
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
    bootstrap: {
      seed: input.seed ?? DEFAULT_SEED,
      samples: input.samples ?? DEFAULT_SAMPLES,
      unit: input.resample ?? DEFAULT_RESAMPLE,
      test: DELTA_TEST,
      correction: DELTA_CORRECTION,
    },
    ...(chance !== undefined
      ? { chance: { cardsPerLocale: { ...chance.cardsPerLocale }, warnings: agg.chanceWarnings } }
      : {}),
    answerSide: agg.answerSide,
    ...(input.counterfactual !== undefined
      ? { queryAttribution: queryAttributionOf(input.turns, { ...input.counterfactual, ...resampleOf(input) }) }
      : {}),
    ...funnel,
    ...withCurves(input.turns, input.run.k),
    ...withJudgments(input.turns, input.run.k),
  };
}

/** The recall@k curves per stage (./recall-curves.ts), when some gold-bearing turn had a trace (as the funnel). */
function withCurves(turns: readonly TurnReport[], k: number): { recallCurves?: NonNullable<Report["recallCurves"]> } {
  const recallCurves = recallCurvesOf(turns, k);
  return recallCurves.all.curves.length === 0 ? {} : { recallCurves };
}

function withJudgments(
  turns: readonly TurnReport[],
  k: number,
): { judgments?: NonNullable<Report["judgments"]>; measuresNotComputed?: NonNullable<Report["measuresNotComputed"]> } {
  const judgments = judgmentsOf(turns, k);
  if (judgments !== undefined) return { judgments };
  const measuresNotComputed = measuresNotComputedOf(turns);
  return measuresNotComputed === undefined ? {} : { measuresNotComputed };
}

function resampleOf(input: BuildReportInput): { seed: number; samples: number; resample: ResampleUnit } {
  return {
    seed: input.seed ?? DEFAULT_SEED,
    samples: input.samples ?? DEFAULT_SAMPLES,
    resample: input.resample ?? DEFAULT_RESAMPLE,
  };
}

function withFunnel(
  turns: readonly TurnReport[],
  opts: { seed: number; samples: number; resample: ResampleUnit },
  batch: ClusterMeanBatch,
): { funnel?: NonNullable<Report["funnel"]> } {
  const funnel = funnelOf(turns, opts, batch);
  return funnel === undefined ? {} : { funnel };
}
