/**
 * The CI gate (docs/gates-and-exit-codes.md): a pure function of a report,
 * thresholds and an optional baseline → `{passed, failures[], checks[]}`.
 * No I/O; the same input gives the same result.
 *
 * - **Floors** on hit@k, recall@k, nDCG@k and MRR@k, each overall (scope
 *   `all`) and/or per scope: `golden`, `adversarial`, `tune`, `holdout`, or
 *   a locale present in the run. The scope mean is the mean of the key over
 *   the turns of the scope that carry it (the report's turn-weighted mean);
 *   a floor passes when mean ≥ floor (1e-9 float slack). Off unless set.
 * - **Drops against a baseline** on each triad key (and MRR when both have
 *   it), overall and per locale: fails when baseline mean − mean > maxDrop.
 *   The baseline's locale means are taken over its per-turn scores of the
 *   same turns (same datasetHash, so the same turns). Default maxDrop: 0 when
 *   the baseline was made on the same dataset, KB, k, configuration and
 *   store kind (the pipeline is deterministic: any drop is a change), else
 *   0.02 (DEFAULT_MAX_DROP), and the result says which; a `--graph` run's
 *   default is always DEFAULT_MAX_DROP (a graph of your own may not be deterministic).
 *   With repeats that differed (`--repeat N`, a graph that is not
 *   deterministic), a drop check is interval-aware: it fails only when the
 *   one-sided 95% lower bound of the drop (REPEAT_GATE_LEVEL; a bootstrap of
 *   the repeats within each case, cases fixed, the baseline's repeats too when
 *   it recorded them: src/eval/stats/repeats.ts `repeatDropBound`) exceeds
 *   maxDrop; `result.dropTest` says which test decided (docs/statistics.md,
 *   "Baseline gates with repeats"). `drops: false` leaves them out (a baseline
 *   given for its flips alone). A dataset of one locale is checked once, as
 *   `all` (its locale scope is the same turns).
 * - **Flips** (`maxFlips`): turns whose hit@k went 1 → 0 against the
 *   baseline, listed with case, turn, locale and where the gold went (the
 *   trace summary's goldPositions); fails when there are more than maxFlips.
 * - **Quarantine** (`quarantine`, `--quarantine FILE`, ./quarantine.ts):
 *   the listed turns stay in the report but every check above reads the
 *   run without them: floor means over the remaining turns of the scope,
 *   drops between both sides' means over the remaining turns, flips among
 *   them. `result.quarantine` lists the turns left out.
 * - A floor or baseline check on a key this run did not measure (vacuous or
 *   n = 0 in the scope) is a "not_measured" failure, never a pass.
 * - A baseline for other cases / k / retrieval config throws
 *   BaselineMismatchError; a baseline lacking a triad key the run measured
 *   is a "baseline_mismatch" failure. Bad thresholds, an unknown scope, a
 *   `tune`/`holdout` floor on a report without part information, or
 *   maxFlips without a baseline throw InvalidArgumentError (exit 2).
 */
import { InvalidArgumentError } from "../../errors.js";
import { assertComparable, storeKindOf, type Baseline } from "./baseline.js";
import { quarantinedTurns, type Quarantine } from "./quarantine.js";
import { HIT_KEY, METRICS, metricSpec, type FloorOption } from "../measures/metrics.js";
import { DEFAULT_SAMPLES, DEFAULT_SEED, pairedBootstrap, perTurnScores, turnKey } from "../stats/bootstrap.js";
import { repeatDropBound, type PairedRepeats } from "../stats/repeats.js";
import { stageGate, type StageThresholds } from "./stage-gate.js";
import type { GateCheck, GateFailure, GateFlip, GateResult, Report, TurnReport } from "../report/types.js";
import { withoutSynthetic } from "../report/parts.js";

/** Tolerated absolute drop of a mean against a baseline made on another KB version or store kind. */
export const DEFAULT_MAX_DROP = 0.02;

/** Float slack so that a drop of exactly `maxDrop` passes despite rounding (0.9 − 0.88 ≠ 0.02 in binary). */
const EPSILON = 1e-9;

/**
 * Floor options and the metric key each gates, in the order checks are made
 * and listed: the registry's metrics that declare a `floor`.
 */
export const FLOOR_OPTIONS: readonly { option: FloorOption; flag: string; key: string; label: string }[] =
  Object.freeze(METRICS.flatMap((m) => (m.floor === undefined ? [] : [{ ...m.floor, key: m.key, label: m.label }])));

export type { FloorOption };
/** A floor per option (`minHit`, ...): a number (scope `all`) or a floor per scope. Unset = off. */
export type FloorThresholds = { [O in FloorOption]?: number | ScopedFloors };

/** Scopes that are not locales. */
export const FIXED_SCOPES = ["all", "golden", "adversarial", "synthetic", "tune", "holdout"] as const;

/** `{ all: 0.9 }`, `{ en: 0.95, adversarial: 0.8 }`: floor per scope. */
export type ScopedFloors = Readonly<Record<string, number>>;

/** Floors (`minHit`, `minRecall`, ...: one per FLOOR_OPTIONS entry), drops and flips. */
export interface GateThresholds extends FloorThresholds {
  /** Tolerated absolute drop of each mean against the baseline, overall and per locale (default: see module doc). */
  maxDrop?: number;
  /** Tolerated number of hit@k 1→0 turns against the baseline (unset = not gated; needs a baseline). */
  maxFlips?: number;
  /**
   * Whether the drops against a given baseline are checked (default true; at
   * `maxDrop`, else the default tolerance). False: a baseline given for its
   * flips (or stage drops) alone — `--gate max-flips` without `--gate max-drop` or
   * `--baseline` on the command line.
   */
  drops?: boolean;
  /** Stage floors and drops (`--gate min-stage`, `--gate max-stage-drop`: ./stage-gate.ts); unset = off. */
  minStage?: StageThresholds;
  maxStageDrop?: StageThresholds;
  /** Seed / resamples of the paired test quoted in regression reasons (defaults 42 / 2,000). */
  seed?: number;
  samples?: number;
  /** Turns the gate leaves out (`--quarantine FILE`); they stay in the report. */
  quarantine?: Quarantine;
}

/** The report's turns the gate reads: all of them but the quarantined ones. */
export function gatedTurns(report: Pick<Report, "turns">, quarantine: Quarantine | undefined): TurnReport[] {
  const q = quarantinedTurns(quarantine);
  return q.size === 0 ? [...report.turns] : report.turns.filter((t) => !q.has(turnKey(t.caseId, t.turn)));
}

function checkUnit(name: string, v: unknown): void {
  if (v === undefined) return;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > 1)
    throw new InvalidArgumentError(name, "a number between 0 and 1", v);
}

const f3 = (x: number) => x.toFixed(3);
const fmtP = (p: number) => (p < 0.001 ? "<0.001" : p.toFixed(3));
const label = (key: string) => metricSpec(key)?.label ?? key;
/** `retrieval_hit_at_k` for scope all, `retrieval_hit_at_k[en]` otherwise. */
const scoped = (key: string, scope: string) => (scope === "all" ? key : `${key}[${scope}]`);

/** The part (tune / holdout) a reported turn belongs to, when the report carries it. */
function partOf(t: TurnReport): string | undefined {
  const p = (t as TurnReport & { part?: unknown }).part;
  return typeof p === "string" ? p : undefined;
}

/** Whether turn `t` belongs to `scope` (already validated). */
function inScope(t: TurnReport, scope: string): boolean {
  if (scope === "all") return true;
  if (scope === "golden" || scope === "adversarial" || scope === "synthetic") return t.kind === scope;
  if (scope === "tune" || scope === "holdout") return partOf(t) === scope;
  return t.locale === scope;
}

/** Locales of the run's turns, in first-seen order. */
export function localesOf(report: Pick<Report, "turns">): string[] {
  const seen: string[] = [];
  for (const t of report.turns) if (!seen.includes(t.locale)) seen.push(t.locale);
  return seen;
}

/**
 * Throws InvalidArgumentError unless `scope` is `all`, `golden`,
 * `adversarial`, a locale of the run, or `tune`/`holdout` on a report whose
 * turns carry their part.
 */
export function checkScope(report: Pick<Report, "turns">, scope: string, flag: string): void {
  const locales = localesOf(report);
  if ((FIXED_SCOPES as readonly string[]).includes(scope)) {
    if ((scope === "tune" || scope === "holdout") && !report.turns.some((t) => partOf(t) !== undefined))
      throw new InvalidArgumentError(
        `${flag} scope "${scope}"`,
        "used on a report whose turns carry their tune/holdout part (a KB with eval/split.json)",
        "a report without part information",
      );
    return;
  }
  if (!locales.includes(scope))
    throw new InvalidArgumentError(`${flag} scope`, `one of ${[...FIXED_SCOPES, ...locales].join(", ")}`, scope);
}

/** Mean and n of `key` over the turns of `scope` that carry it; null mean when n = 0. */
function scopeMean(turns: readonly TurnReport[], key: string, scope: string): { mean: number | null; n: number } {
  let sum = 0;
  let n = 0;
  // Scope all is the headline's turns: synthetic ones only when no real turn is present (src/eval/report/parts.ts).
  for (const t of scope === "all" ? withoutSynthetic(turns) : turns) {
    if (!inScope(t, scope)) continue;
    const r = t.results.find((x) => x.key === key);
    if (r === undefined) continue;
    sum += r.score;
    n++;
  }
  return { mean: n === 0 ? null : sum / n, n };
}

/** Mean and n of `key` over per-turn scores (`caseId#turn` → key → score); null mean when n = 0. */
function perTurnMean(
  perTurn: Readonly<Record<string, Readonly<Record<string, number>>>>,
  key: string,
): { mean: number | null; n: number } {
  let sum = 0;
  let n = 0;
  for (const scores of Object.values(perTurn)) {
    const s = scores[key];
    if (s === undefined) continue;
    sum += s;
    n++;
  }
  return { mean: n === 0 ? null : sum / n, n };
}

/** Why `key` has no usable mean in this report, or null when it has one. */
function notMeasuredReason(report: Report, key: string): string | null {
  if (report.vacuous.includes(key)) return report.vacuousReasons[key] ?? "not measured";
  const agg = report.aggregates[key];
  if (agg === undefined || agg.n === 0) return "n=0";
  return null;
}

function normalizeFloors(flag: string, option: string, v: number | ScopedFloors | undefined): [string, number][] {
  if (v === undefined) return [];
  if (typeof v === "number") {
    checkUnit(option, v);
    return [["all", v]];
  }
  return Object.entries(v).map(([scope, x]) => {
    checkUnit(`${flag} ${scope}`, x);
    return [scope, x];
  });
}

/**
 * The default tolerance of drop checks: 0 when the baseline measured the same
 * dataset, KB, k, configuration and store kind as the report (the pipeline is
 * deterministic, so any drop is a change), else DEFAULT_MAX_DROP. Call after
 * assertComparable (dataset, k and configuration already equal).
 */
export function defaultMaxDrop(baseline: Baseline, report: Report): { maxDrop: number; source: string } {
  // A graph of your own may call a model or a store that is not deterministic: never the 0 of retrace's pipeline.
  if (report.run.graph !== undefined)
    return {
      maxDrop: DEFAULT_MAX_DROP,
      source: `default ${DEFAULT_MAX_DROP}: a --graph run (your graph may not be deterministic; set --gate max-drop=X to change it)`,
    };
  const why: string[] = [];
  if (baseline.kbHash !== report.run.kbHash) why.push("another KB version");
  const kind = report.run.storeKind ?? storeKindOf(report.run.store);
  // A baseline written before store kinds were recorded is taken as the same kind.
  if (baseline.storeKind !== undefined && baseline.storeKind !== kind)
    why.push(`another store kind (${baseline.storeKind}, now ${kind})`);
  if (why.length === 0)
    return {
      maxDrop: 0,
      source: "default 0: same dataset, KB, k, configuration and store kind (deterministic pipeline)",
    };
  return {
    maxDrop: DEFAULT_MAX_DROP,
    source: `default ${DEFAULT_MAX_DROP}: the baseline was made with ${why.join(" and ")}`,
  };
}

/** Turns whose hit@k was 1 in the baseline and is 0 in the report, in report order. */
export function hitFlips(report: Report, baseline: Baseline): GateFlip[] {
  const flips: GateFlip[] = [];
  for (const t of report.turns) {
    const now = t.results.find((r) => r.key === HIT_KEY)?.score;
    const before = baseline.perTurn[turnKey(t.caseId, t.turn)]?.[HIT_KEY];
    if (now !== 0 || before !== 1) continue;
    const flip: GateFlip = {
      caseId: t.caseId,
      turn: t.turn,
      locale: t.locale,
      kind: t.kind,
      user: t.user,
      gold: t.gold,
      retrievedIds: t.retrievedIds ?? [],
    };
    if (t.trace !== undefined) flip.goldPositions = t.trace.goldPositions;
    flips.push(flip);
  }
  return flips;
}

/** `caseId#turn (locale): gold [a] now dense 7, bm25 —, fused 9` */
export function flipText(f: GateFlip): string {
  const where =
    f.goldPositions === undefined
      ? "no trace"
      : Object.entries(f.goldPositions)
          .map(
            ([id, stages]) =>
              `${id}: ${Object.entries(stages)
                .map(([s, r]) => `${s} ${r ?? "—"}`)
                .join(", ")}`,
          )
          .join("; ");
  return `${f.caseId}#${f.turn} (${f.locale}, ${f.kind}) gold=[${f.gold.join(", ")}] top=[${f.retrievedIds.join(", ")}] now ${where}`;
}

/** Confidence level of the interval-aware drop test: one-sided 95% (docs/statistics.md, "Baseline gates with repeats"). */
export const REPEAT_GATE_LEVEL = 0.95;

interface DropTest {
  record: NonNullable<GateResult["dropTest"]>;
  seed: number;
  samples: number;
}

/**
 * Which test the drop checks use (docs/statistics.md, "Baseline gates with
 * repeats"): the interval-aware one when this run's repeats differed (its
 * turns carry `repeatScores`), else the point comparison of means, as
 * without repeats. The baseline's own repeats, when it recorded them, are
 * resampled too; a baseline without them counts as fixed numbers (said in the
 * description).
 */
function dropTestOf(report: Report, baseline: Baseline, thresholds: GateThresholds): DropTest {
  const seed = thresholds.seed ?? DEFAULT_SEED;
  const samples = thresholds.samples ?? DEFAULT_SAMPLES;
  const r = report.repeats;
  if (r === undefined || r.identical) {
    const why = r === undefined ? "a run without --repeat" : `the ${r.n} repeats were identical`;
    return {
      seed,
      samples,
      record: {
        method: "point",
        description: `point means (${why}): fails when the baseline's mean minus this run's exceeds the tolerance`,
      },
    };
  }
  const pct = Math.round(REPEAT_GATE_LEVEL * 100);
  const base =
    baseline.repeats?.perTurn !== undefined
      ? `the baseline's ${baseline.repeats.n} repeats and this run's ${r.n} resampled within each case, each run on its own`
      : baseline.repeats !== undefined
        ? `this run's ${r.n} repeats resampled within each case; the baseline's ${baseline.repeats.n} repeats were identical, its means fixed`
        : `this run's ${r.n} repeats resampled within each case; the baseline was written without --repeat, so its means count as fixed (its own run-to-run noise is not measured: write it with --repeat for the full test)`;
  return {
    seed,
    samples,
    record: {
      method: "repeat-bootstrap",
      level: REPEAT_GATE_LEVEL,
      description: `one-sided ${pct}% repeat bootstrap of the drop (cases fixed; ${base}; ${samples} resamples, seed ${seed}): fails only when the lower bound of the drop exceeds the tolerance`,
    },
  };
}

/** A drop check by the interval-aware test over the scope's turns scored in both runs; null when none is. */
function repeatDropCheck(
  key: string,
  scope: string,
  turns: readonly TurnReport[],
  baseline: Baseline,
  maxDrop: number,
  test: DropTest,
): Omit<GateCheck, "option"> | null {
  const paired: PairedRepeats[] = [];
  for (const t of turns) {
    const tk = turnKey(t.caseId, t.turn);
    const now = t.results.find((x) => x.key === key)?.score;
    const before = baseline.perTurn[tk]?.[key];
    if (now === undefined || before === undefined) continue;
    paired.push({
      cluster: t.caseId,
      run: t.repeatScores?.[key] ?? [now],
      base: baseline.repeats?.perTurn?.[tk]?.[key] ?? [before],
    });
  }
  const b = repeatDropBound(paired, { seed: test.seed, samples: test.samples, alpha: 1 - REPEAT_GATE_LEVEL });
  if (b === null) return null;
  const passed = b.lower <= maxDrop + EPSILON;
  const pct = Math.round(b.level * 100);
  const head = `${scoped(key, scope)} ${f3(meanOf(paired.map((p) => p.run)))} vs the baseline's ${f3(meanOf(paired.map((p) => p.base)))}: ${b.drop > 0 ? `drop ${f3(b.drop)}` : "no drop"} over ${b.n} shared turns in ${b.nCases} cases (${b.repeats.run} repeats now, ${b.repeats.base} in the baseline); one-sided ${pct}% lower bound of the drop ${f3(b.lower)}`;
  const reason = passed
    ? `${head}, within the tolerance ${f3(maxDrop)}`
    : `${head}, above the tolerance ${f3(maxDrop)}: a regression beyond the graph's run-to-run noise`;
  return {
    kind: "drop",
    key,
    scope,
    threshold: maxDrop,
    observed: b.drop,
    n: b.n,
    baseline: meanOf(paired.map((p) => p.base)),
    bound: b.lower,
    verdict: passed ? "pass" : "fail",
    reason,
  };
}

/** The mean over turns of each turn's mean. */
function meanOf(perTurn: readonly (readonly number[])[]): number {
  let s = 0;
  for (const v of perTurn) s += v.reduce((a, b) => a + b, 0) / v.length;
  return s / perTurn.length;
}

function check(c: Omit<GateCheck, "verdict"> & { verdict?: GateCheck["verdict"] }, passed: boolean): GateCheck {
  return { ...c, verdict: c.verdict ?? (passed ? "pass" : "fail") };
}

export function gate(report: Report, thresholds: GateThresholds = {}, baseline?: Baseline): GateResult {
  checkUnit("maxDrop", thresholds.maxDrop);
  if (thresholds.maxFlips !== undefined && !(Number.isInteger(thresholds.maxFlips) && thresholds.maxFlips >= 0))
    throw new InvalidArgumentError("maxFlips", "a non-negative integer", thresholds.maxFlips);
  if (thresholds.maxFlips !== undefined && baseline === undefined)
    throw new InvalidArgumentError(
      "--gate max-flips",
      "used with a baseline (flips are counted against it)",
      "no baseline",
    );
  const failures: GateFailure[] = [];
  const checks: GateCheck[] = [];
  // Quarantined turns are out of every check (module doc); `full` keeps them for scope names and the list of what was left out.
  const full = report;
  const q = quarantinedTurns(thresholds.quarantine);
  if (q.size > 0) report = { ...report, turns: gatedTurns(report, thresholds.quarantine) };

  for (const { option, flag, key } of FLOOR_OPTIONS) {
    const named = `--gate ${flag.slice(2)}`; // the check's spelling in messages (src/cli/eval-options.ts GATE_CHECKS)
    const floors = normalizeFloors(named, option, thresholds[option]);
    for (const [scope] of floors) checkScope(full, scope, named);
    for (const [scope, floor] of floors) {
      const opt =
        scope === "all" ? `--gate ${flag.slice(2)}=${f3(floor)}` : `--gate ${flag.slice(2)}=${scope}=${f3(floor)}`;
      const why = notMeasuredReason(report, key);
      const { mean, n } = scopeMean(report.turns, key, scope);
      if (why !== null || mean === null) {
        const reason = `${scoped(key, scope)} was not measured (${why ?? `n=0 in scope ${scope}`}); the floor ${f3(floor)} (${scope === "all" ? option : opt}) cannot pass`;
        failures.push({ kind: "not_measured", key, reason, ...(scope === "all" ? {} : { scope }) });
        checks.push(
          check(
            {
              kind: "floor",
              key,
              scope,
              option: opt,
              threshold: floor,
              observed: null,
              n: 0,
              verdict: "not_measured",
              reason,
            },
            false,
          ),
        );
        continue;
      }
      const passed = mean >= floor - EPSILON;
      const reason = passed
        ? `${scoped(key, scope)} ${f3(mean)} (n=${n}) is at or above the floor ${f3(floor)}`
        : `${scoped(key, scope)} ${f3(mean)} (n=${n}) is below the floor ${f3(floor)}`;
      if (!passed) failures.push({ kind: "floor", key, reason, ...(scope === "all" ? {} : { scope }) });
      checks.push(
        check({ kind: "floor", key, scope, option: opt, threshold: floor, observed: mean, n, reason }, passed),
      );
    }
  }

  const result: GateResult = { passed: true, failures, checks };
  if (thresholds.quarantine !== undefined) {
    const left = full.turns.filter((t) => q.has(turnKey(t.caseId, t.turn)));
    result.quarantine = {
      file: thresholds.quarantine.file,
      listed: thresholds.quarantine.entries.length,
      count: left.length,
      turns: left.map((t) => ({
        caseId: t.caseId,
        turn: t.turn,
        locale: t.locale,
        reason: q.get(turnKey(t.caseId, t.turn)) as string,
      })),
    };
  }
  if (baseline !== undefined) {
    assertComparable(baseline, full);
    if (thresholds.drops !== false) {
      const tolerance =
        thresholds.maxDrop !== undefined
          ? { maxDrop: thresholds.maxDrop, source: "set with --gate max-drop" }
          : defaultMaxDrop(baseline, report);
      result.tolerance = tolerance;
      const maxDrop = tolerance.maxDrop;
      // The registry's drop checks: `always`, or `if-both` when the baseline and the run both have the key.
      const keys = METRICS.filter(
        (m) =>
          m.drop === "always" ||
          (m.drop === "if-both" && baseline.aggregates[m.key] !== undefined && report.aggregates[m.key] !== undefined),
      ).map((m) => m.key);
      // One locale: its scope is the same turns as `all`, so it is checked once, as `all`.
      const locales = localesOf(full);
      const scopes = ["all", ...(locales.length > 1 ? locales : [])];
      const opt = `--gate max-drop=${f3(maxDrop)}`;
      const test = dropTestOf(report, baseline, thresholds);
      // Recorded for runs with repeats (a run without them compares point means, as it always has).
      if (report.repeats !== undefined) result.dropTest = test.record;
      for (const key of keys) {
        const why = notMeasuredReason(report, key);
        if (why !== null) {
          const reason = `${key} was not measured (${why}); the baseline comparison cannot pass`;
          failures.push({ kind: "not_measured", key, reason });
          checks.push(
            check(
              {
                kind: "drop",
                key,
                scope: "all",
                option: opt,
                threshold: maxDrop,
                observed: null,
                n: 0,
                verdict: "not_measured",
                reason,
              },
              false,
            ),
          );
          continue;
        }
        if (baseline.aggregates[key] === undefined) {
          const reason = `the baseline has no ${key} (${label(key)}) to compare with; re-create it with --update-baseline`;
          failures.push({ kind: "baseline_mismatch", key, reason });
          checks.push(
            check(
              {
                kind: "drop",
                key,
                scope: "all",
                option: opt,
                threshold: maxDrop,
                observed: null,
                n: 0,
                verdict: "fail",
                reason,
              },
              false,
            ),
          );
          continue;
        }
        for (const scope of scopes) {
          const cur = scopeMean(report.turns, key, scope);
          const inThis = (scope === "all" ? withoutSynthetic(report.turns) : report.turns).filter((t) =>
            inScope(t, scope),
          );
          const basePerTurn: Record<string, Record<string, number>> = {};
          for (const t of inThis) {
            const s = baseline.perTurn[turnKey(t.caseId, t.turn)];
            if (s !== undefined) basePerTurn[turnKey(t.caseId, t.turn)] = s;
          }
          // Scope all: the baseline's own mean, unless turns are quarantined (then both sides over the remaining turns).
          const base =
            scope === "all" && q.size === 0
              ? { mean: baseline.aggregates[key]?.mean ?? null, n: baseline.aggregates[key]?.n ?? 0 }
              : perTurnMean(basePerTurn, key);
          if (cur.mean === null || base.mean === null) continue; // nothing to compare in this locale (e.g. no gold-bearing turn)
          const drop = base.mean - cur.mean;
          if (test.record.method === "repeat-bootstrap") {
            // The interval-aware test (docs/statistics.md, "Baseline gates with repeats"): both sides over the turns scored in both.
            const c = repeatDropCheck(key, scope, inThis, baseline, maxDrop, test);
            if (c !== null) {
              if (c.verdict === "fail")
                failures.push({ kind: "regression", key, reason: c.reason, ...(scope === "all" ? {} : { scope }) });
              checks.push({ ...c, option: opt });
              continue;
            }
          }
          const passed = drop <= maxDrop + EPSILON;
          let reason: string;
          if (passed) {
            reason = `${scoped(key, scope)} ${f3(cur.mean)} (n=${cur.n}) vs the baseline's ${f3(base.mean)} (n=${base.n}): ${drop > 0 ? `drop ${f3(drop)}` : "no drop"}, within the tolerance ${f3(maxDrop)}`;
          } else {
            // The same case-level paired bootstrap as `retrace compare` (docs/statistics.md): interval and p agree.
            const paired = pairedBootstrap(
              perTurnScores({ perTurn: basePerTurn }, key),
              perTurnScores({ turns: inThis }, key),
              {
                seed: thresholds.seed ?? DEFAULT_SEED,
                samples: thresholds.samples ?? DEFAULT_SAMPLES,
              },
            );
            const test =
              paired === null
                ? "no turn scored in both runs, so no paired test"
                : `paired case-level bootstrap p=${fmtP(paired.pValue)} over ${paired.n} shared turns in ${paired.nCases} cases`;
            reason = `${scoped(key, scope)} ${f3(cur.mean)} (n=${cur.n}) dropped from the baseline's ${f3(base.mean)} (n=${base.n}) by ${f3(drop)}, more than the tolerance ${f3(maxDrop)} (${test})`;
            failures.push({ kind: "regression", key, reason, ...(scope === "all" ? {} : { scope }) });
          }
          checks.push(
            check(
              {
                kind: "drop",
                key,
                scope,
                option: opt,
                threshold: maxDrop,
                observed: drop,
                n: cur.n,
                baseline: base.mean,
                reason,
              },
              passed,
            ),
          );
        }
      }
    }

    const flips = hitFlips(report, baseline);
    result.flips = flips;
    if (thresholds.maxFlips !== undefined) {
      const max = thresholds.maxFlips;
      const why = notMeasuredReason(report, HIT_KEY);
      const o = `--gate max-flips=${max}`;
      if (why !== null) {
        const reason = `${HIT_KEY} was not measured (${why}); flips against the baseline cannot be counted`;
        failures.push({ kind: "not_measured", key: HIT_KEY, reason });
        checks.push(
          check(
            {
              kind: "flips",
              key: HIT_KEY,
              scope: "all",
              option: o,
              threshold: max,
              observed: null,
              n: 0,
              verdict: "not_measured",
              reason,
            },
            false,
          ),
        );
      } else {
        const n = report.turns.filter((t) => t.results.some((r) => r.key === HIT_KEY)).length;
        const passed = flips.length <= max;
        const head = `${flips.length} turn${flips.length === 1 ? "" : "s"} went from hit 1 to 0 against the baseline (at most ${max} allowed)`;
        const reason = flips.length === 0 ? head : `${head}: ${flips.map(flipText).join(" | ")}`;
        if (!passed) failures.push({ kind: "flips", key: HIT_KEY, reason });
        checks.push(
          check(
            { kind: "flips", key: HIT_KEY, scope: "all", option: o, threshold: max, observed: flips.length, n, reason },
            passed,
          ),
        );
      }
    }
  }
  if (thresholds.minStage !== undefined || thresholds.maxStageDrop !== undefined) {
    const stages = stageGate(
      report,
      {
        ...(thresholds.minStage !== undefined ? { minStage: thresholds.minStage } : {}),
        ...(thresholds.maxStageDrop !== undefined ? { maxStageDrop: thresholds.maxStageDrop } : {}),
      },
      baseline,
    );
    failures.push(...stages.failures);
    checks.push(...stages.checks);
  }
  result.passed = failures.length === 0;
  return result;
}
