/**
 * Aggregation of per-turn results into the report's numbers (docs/statistics.md).
 * `buildReport` assembles every section of the report from one pass (means,
 * splits, chance, deltas, answer side); the scores per key are collected by
 * ./collect.ts and the split groups and their deltas made by ./split-deltas.ts:
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
import { recallCurvesOf } from "./recall-curves.js";
import { summaryRepeatsOf, turnOutcomesOf } from "./turn-outcomes.js";
import { InvalidArgumentError } from "../../errors.js";
import { CASE_KINDS, LOCALES } from "../../kb/types.js";
import { chanceHit, smallKbWarning } from "../measures/chance.js";
import type { EvaluatorSpec } from "../measures/evaluators.js";
import { answerSideOf, hasParts, headlineTurns, NO_HOLDOUT_TURN, withoutSynthetic } from "./parts.js";
import { funnelOf, hasLongPositions, turnSplits } from "./funnel-stats.js";
import { queryAttributionOf } from "./query-attribution.js";
import { TRIAD_KEYS } from "../measures/metrics.js";
import { judgmentsOf, measuresNotComputedOf } from "./judgments.js";
import {
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
import { runSteps, type Steps } from "../stats/steps.js";
import { CollectedTurns, summarizeAll } from "./collect.js";
import {
  DELTA_CORRECTION,
  DELTA_TEST,
  groupBy,
  groupByCase,
  splitDeltas,
  type ExtraSplit,
  type Resample,
  type SplitForDeltas,
} from "./split-deltas.js";

export { artifactsOf } from "./vacuous.js";
export { DELTA_CORRECTION, DELTA_TEST, FAMILY_ALPHA, type ExtraSplit } from "./split-deltas.js";

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

/** Declared keys first (evaluator order), then any undeclared key seen in results, alphabetically. */
function keyOrder(turns: readonly TurnReport[], evaluators: readonly EvaluatorSpec[]): string[] {
  const declared: string[] = [];
  for (const spec of evaluators) for (const k of spec.keys) if (!declared.includes(k)) declared.push(k);
  const extra = new Set<string>();
  for (const t of turns) for (const r of t.results) if (!declared.includes(r.key)) extra.add(r.key);
  return [...declared, ...[...extra].sort()];
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

/**
 * The small-KB warnings as the first screen words them (the terminal's
 * compact table, src/eval/report/render/table-compact.ts, prints them): the
 * warnings of two or more locales as one line naming each locale, its cards
 * and its chance hit@k for a one-card gold; undefined when fewer than two
 * locales have one (the screen then prints `warnings` as they are).
 */
function screenChanceWarnings(warnings: readonly string[], chance: AggregateOptions["chance"]): string[] | undefined {
  if (chance === undefined) return undefined;
  const k = chance.k;
  const small = Object.entries(chance.cardsPerLocale).filter(([locale, n]) => {
    const w = smallKbWarning(locale, n, k);
    return w !== null && warnings.includes(w);
  });
  if (small.length < 2) return undefined;
  const merged = new Set(small.map(([locale, n]) => smallKbWarning(locale, n, k)));
  return [
    `k=${k} is at least a third of the cards of ${small.map(([l, n]) => `${l} (${n})`).join(", ")}: a random ranking already scores hit@${k} = ${small.map(([, n]) => chanceHit(n, 1, k).toFixed(3)).join(", ")} there for a one-card gold; read those figures against chance`,
    ...warnings.filter((w) => !merged.has(w)),
  ];
}

const screenOf = (screen: string[] | undefined) => (screen !== undefined ? { screen } : {});

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
  return runSteps(aggregateSteps(allTurns, opts, shared));
}

/** `aggregateInto` in steps (src/eval/stats/steps.ts): one pass over the turns a step. */
function* aggregateSteps(
  allTurns: readonly TurnReport[],
  opts: AggregateOptions,
  shared?: ClusterMeanBatch,
): Steps<Aggregation> {
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
  yield;

  const byKind = groupBy(parted, "kind", CASE_KINDS);
  const kind: Record<string, Record<string, Aggregate>> = {};
  for (const [g, ts] of byKind) {
    kind[g] = summarizeAll(ts, collected, batch);
    yield;
  }
  const byLocale = groupBy(turns, "locale", LOCALES);
  const locale: Record<string, Record<string, Aggregate>> = {};
  for (const [g, ts] of byLocale) {
    locale[g] = summarizeAll(ts, collected, batch);
    yield;
  }

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
    for (const [g, ts] of groups) {
      out[g] = summarizeAll(ts, collected, batch);
      yield;
    }
    splits[extra.name] = out;
    forDeltas.push({ split: extra.name, groups, reference: extra.reference });
  }

  // Turn position (1, 2, 3, 4+; or the long buckets once a turn is past #3, ./positions.ts): a split of turns, not of cases
  // (a case has turns in several groups), so no deltas against a reference.
  const position: Record<string, Record<string, Aggregate>> = {};
  for (const [g, ts] of turnSplits(turns, hasLongPositions(allTurns)).position as Map<string, TurnReport[]>) {
    position[g] = summarizeAll(ts, collected, batch);
    yield;
  }
  splits.position = position;

  const { vacuous, vacuousReasons } = vacuousKeys(allTurns, opts.evaluators, aggregates);
  for (const key of vacuous) if (splits.part?.tune?.[key] !== undefined) vacuousReasons[key] = NO_HOLDOUT_TURN;
  yield;
  const deltas = splitDeltas(forDeltas, TRIAD_KEYS, resample);
  yield;
  if (shared === undefined) yield* batch.runSteps();
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
  return runSteps(buildReportSteps(input));
}

/**
 * `buildReport` in steps (src/eval/stats/steps.ts): one pass over the turns,
 * or one slice of resamples, a step; the same report, byte for byte.
 */
export function* buildReportSteps(input: BuildReportInput): Steps<Report> {
  const chance =
    input.chance ??
    (input.cardsPerLocale !== undefined ? { cardsPerLocale: input.cardsPerLocale, k: input.run.k } : undefined);
  // One batch for the intervals of the aggregates and of the funnel, run before the report is assembled.
  const r = resampleOf(input);
  const batch = new ClusterMeanBatch({ seed: r.seed, samples: r.samples, unit: r.resample });
  const agg = yield* aggregateSteps(input.turns, { ...input, ...(chance !== undefined ? { chance } : {}) }, batch);
  const funnel = withFunnel(input.turns, r, batch);
  yield;
  yield* batch.runSteps();
  const queryAttribution =
    input.counterfactual !== undefined
      ? { queryAttribution: queryAttributionOf(input.turns, { ...input.counterfactual, ...resampleOf(input) }) }
      : {};
  yield;
  const curves = withCurves(input.turns, input.run.k);
  yield;
  const judgments = withJudgments(input.turns, input.run.k);
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
      ? {
          chance: {
            cardsPerLocale: { ...chance.cardsPerLocale },
            warnings: agg.chanceWarnings,
            ...screenOf(screenChanceWarnings(agg.chanceWarnings, chance)),
          },
        }
      : {}),
    answerSide: agg.answerSide,
    ...queryAttribution,
    ...funnel,
    ...curves,
    turnOutcomes: turnOutcomesOf(input.turns),
    summaryRepeats: summaryRepeatsOf(agg),
    ...judgments,
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
