/**
 * One report from N repeats of a graph sweep (`retrace eval --graph --repeat
 * N`; docs/ci.md, "Repeats and flaky turns"). Pure: the turn reports of each
 * repeat (dataset order, the same turns in every repeat) in, the combined
 * turns and the report's `repeats` section out.
 *
 * - A turn's score for each key is its mean over the repeats; the turn keeps
 *   the first repeat's retrieval, trace and answer (what the turn views show).
 * - A turn that errored in any repeat is an error turn (the first repeat's
 *   error it had): the gate's `--max-errors` counts it, nothing is hidden.
 * - A flaky turn: gold-bearing, hit@k 1 in some repeats and 0 in others.
 * - `identical`: every turn scored the same in every repeat (and errored in
 *   all or none): the combined turns are then the first repeat's, unchanged,
 *   and the section carries no metrics (the aggregates are a single run's).
 * - Otherwise each scored turn carries its scores per repeat
 *   (`repeatScores`), and, per key, the section gives the two-stage interval
 *   and the variance shares (src/eval/stats/repeats.ts) over the turns scored
 *   in every repeat (`repeatsSection`, which `retrace merge` uses too).
 */
import { twoStageMean, varianceShares, type RepeatedValue } from "../stats/repeats.js";
import type { Report, RepeatsSection, TurnReport } from "../report/types.js";
import { summaryRepeatsOf } from "../report/turn-outcomes.js";

/** The key whose 1/0 values decide a flaky turn. */
export const FLAKY_KEY = "retrieval_hit_at_k";

export interface CombinedRepeats {
  turns: TurnReport[];
  section: RepeatsSection;
}

const fmt = (x: number) => x.toFixed(3);

/** Combines the repeats' turn reports (see the module comment). `seed`/`samples`: the run's bootstrap settings. */
export function combineRepeats(
  runs: readonly (readonly TurnReport[])[],
  opts: { seed: number; samples?: number },
): CombinedRepeats {
  const { turns, ...o } = combineRepeatTurns(runs);
  return {
    turns,
    section: repeatsSection(turns, {
      ...o,
      seed: opts.seed,
      ...(opts.samples !== undefined ? { samples: opts.samples } : {}),
    }),
  };
}

/**
 * The combined turns of `combineRepeats` and what its section is computed
 * from besides them (the section's intervals are the costly part: a caller
 * may compute them elsewhere, src/eval/sweep/repeats-thread.ts).
 */
export function combineRepeatTurns(runs: readonly (readonly TurnReport[])[]): {
  turns: TurnReport[];
  n: number;
  identical: boolean;
  errorTurns: number;
} {
  const n = runs.length;
  const first = runs[0] ?? [];
  if (n < 2) throw new Error(`combineRepeats: expected at least 2 repeats, got ${n}`);
  for (const r of runs)
    if (r.length !== first.length)
      throw new Error(`combineRepeats: every repeat has the same turns (${first.length}), got ${r.length}`);
  const turns: TurnReport[] = [];
  /** Per combined turn (undefined for an error turn): key → its score in each repeat, for the keys every repeat scored. */
  const scores: (Record<string, number[]> | undefined)[] = [];
  let errorTurns = 0;
  let identical = true;
  first.forEach((t0, i) => {
    const reps = runs.map((r) => r[i] as TurnReport);
    for (const t of reps)
      if (t.caseId !== t0.caseId || t.turn !== t0.turn)
        throw new Error(
          `combineRepeats: turn ${i} is ${t0.caseId}#${t0.turn} in repeat 1 but ${t.caseId}#${t.turn} in another`,
        );
    const errored = reps.filter((t) => t.error !== undefined);
    if (errored.length > 0) {
      errorTurns++;
      if (errored.length < n) identical = false;
      turns.push(errored[0] as TurnReport);
      scores.push(undefined);
      return;
    }
    const own: Record<string, number[]> = {};
    const results = t0.results.map((r) => {
      const values = reps.map((t) => t.results.find((x) => x.key === r.key)?.score);
      const complete = values.every((v): v is number => typeof v === "number");
      const present = values.filter((v): v is number => typeof v === "number");
      const mean = present.reduce((a, b) => a + b, 0) / present.length;
      if (!complete || present.some((v) => v !== r.score)) identical = false;
      if (complete) own[r.key] = values;
      if (present.every((v) => v === r.score)) return r;
      return {
        ...r,
        score: mean,
        comment:
          `mean over ${present.length} repeats ${fmt(mean)} (${present.map(fmt).join(", ")}); repeat 1: ${r.comment ?? ""}`.trimEnd(),
      };
    });
    turns.push(results.every((r, j) => r === t0.results[j]) ? t0 : { ...t0, results });
    scores.push(own);
  });
  // Identical repeats: the first repeat's turns as they are (a single run's report). Otherwise every scored turn carries its scores per repeat.
  const combined = identical
    ? turns
    : turns.map((t, i) =>
        scores[i] === undefined || Object.keys(scores[i]).length === 0 ? t : { ...t, repeatScores: scores[i] },
      );
  return { turns: combined, n, identical, errorTurns };
}

/**
 * The `repeats` section of a run from its combined turns (their
 * `repeatScores`): flaky turns in turn order, and per key, over the turns
 * every repeat scored, the two-stage interval and the variance shares. With
 * `identical`, no flaky turns and no metrics. Used by `combineRepeats` and by
 * `retrace merge` (the merged shards' turns give the unsharded run's section).
 */
export function repeatsSection(
  turns: readonly TurnReport[],
  o: { n: number; identical: boolean; errorTurns: number; seed: number; samples?: number },
): RepeatsSection {
  const flaky: RepeatsSection["flaky"] = [];
  const byKey = new Map<string, RepeatedValue[]>();
  if (!o.identical)
    for (const t of turns) {
      for (const [key, values] of Object.entries(t.repeatScores ?? {})) {
        const arr = byKey.get(key) ?? [];
        arr.push({ cluster: t.caseId, values });
        byKey.set(key, arr);
      }
      const hits = t.repeatScores?.[FLAKY_KEY];
      if (hits !== undefined) {
        const h = hits.filter((v) => v === 1).length;
        if (h > 0 && h < hits.length)
          flaky.push({ caseId: t.caseId, turn: t.turn, hits: h, n: hits.length, rate: h / hits.length });
      }
    }
  const metrics: RepeatsSection["metrics"] = {};
  for (const key of [...byKey.keys()].sort()) {
    const values = byKey.get(key) as RepeatedValue[];
    const m = twoStageMean(values, { seed: o.seed, ...(o.samples !== undefined ? { samples: o.samples } : {}) });
    const v = varianceShares(values);
    if (m === null || v === null) continue;
    metrics[key] = {
      mean: m.mean,
      n: m.n,
      ...(m.ci95 !== null ? { ci95: m.ci95 } : {}),
      withinShare: v.withinShare,
      betweenShare: v.betweenShare,
    };
  }
  return { n: o.n, identical: o.identical, flaky, errorTurns: o.errorTurns, metrics };
}

/**
 * Puts a run's `repeats` section on its report: each key's overall interval
 * becomes the two-stage one (cases, then repeats), which accounts for both
 * sources of variation. The same for `eval --graph --repeat` and `retrace merge`.
 */
export function attachRepeats(report: Report, section: RepeatsSection): void {
  report.repeats = section;
  for (const [key, m] of Object.entries(section.metrics)) {
    const agg = report.aggregates[key];
    if (agg !== undefined && m.ci95 !== undefined) agg.ci95 = m.ci95;
  }
  // The overall intervals changed: which summary columns repeat the all column is decided again on them.
  report.summaryRepeats = summaryRepeatsOf(report);
}
