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
 * - Otherwise, per key, the two-stage interval and the variance shares
 *   (src/eval/stats/repeats.ts) over the turns scored in every repeat.
 */
import { twoStageMean, varianceShares, type RepeatedValue } from "../stats/repeats.js";
import type { RepeatsSection, TurnReport } from "../report/types.js";

/** The key whose 1/0 values decide a flaky turn. */
export const FLAKY_KEY = "retrieval_hit_at_k";

export interface CombinedRepeats {
  turns: TurnReport[];
  section: RepeatsSection;
}

const fmt = (x: number) => x.toFixed(3);

/** Combines the repeats' turn reports (see the module comment). `seed`/`samples`: the run's bootstrap settings. */
export function combineRepeats(runs: readonly (readonly TurnReport[])[], opts: { seed: number; samples?: number }): CombinedRepeats {
  const n = runs.length;
  const first = runs[0] ?? [];
  if (n < 2) throw new Error(`combineRepeats: expected at least 2 repeats, got ${n}`);
  for (const r of runs) if (r.length !== first.length) throw new Error(`combineRepeats: every repeat has the same turns (${first.length}), got ${r.length}`);
  const turns: TurnReport[] = [];
  const flaky: RepeatsSection["flaky"] = [];
  const byKey = new Map<string, RepeatedValue[]>();
  let errorTurns = 0;
  let identical = true;
  first.forEach((t0, i) => {
    const reps = runs.map((r) => r[i] as TurnReport);
    for (const t of reps) if (t.caseId !== t0.caseId || t.turn !== t0.turn) throw new Error(`combineRepeats: turn ${i} is ${t0.caseId}#${t0.turn} in repeat 1 but ${t.caseId}#${t.turn} in another`);
    const errored = reps.filter((t) => t.error !== undefined);
    if (errored.length > 0) {
      errorTurns++;
      if (errored.length < n) identical = false;
      turns.push(errored[0] as TurnReport);
      return;
    }
    const results = t0.results.map((r) => {
      const values = reps.map((t) => t.results.find((x) => x.key === r.key)?.score);
      const complete = values.every((v): v is number => typeof v === "number");
      const present = values.filter((v): v is number => typeof v === "number");
      const mean = present.reduce((a, b) => a + b, 0) / present.length;
      if (!complete || present.some((v) => v !== r.score)) identical = false;
      if (complete) {
        const arr = byKey.get(r.key) ?? [];
        arr.push({ cluster: t0.caseId, values });
        byKey.set(r.key, arr);
        if (r.key === FLAKY_KEY) {
          const hits = values.filter((v) => v === 1).length;
          if (hits > 0 && hits < n) flaky.push({ caseId: t0.caseId, turn: t0.turn, hits, n, rate: hits / n });
        }
      }
      if (present.every((v) => v === r.score)) return r;
      return { ...r, score: mean, comment: `mean over ${present.length} repeats ${fmt(mean)} (${present.map(fmt).join(", ")}); repeat 1: ${r.comment ?? ""}`.trimEnd() };
    });
    turns.push(results.every((r, j) => r === t0.results[j]) ? t0 : { ...t0, results });
  });
  const metrics: RepeatsSection["metrics"] = {};
  if (!identical)
    for (const key of [...byKey.keys()].sort()) {
      const values = byKey.get(key) as RepeatedValue[];
      const m = twoStageMean(values, { seed: opts.seed, ...(opts.samples !== undefined ? { samples: opts.samples } : {}) });
      const v = varianceShares(values);
      if (m === null || v === null) continue;
      metrics[key] = { mean: m.mean, n: m.n, ...(m.ci95 !== null ? { ci95: m.ci95 } : {}), withinShare: v.withinShare, betweenShare: v.betweenShare };
    }
  return { turns, section: { n, identical, flaky: identical ? [] : flaky, errorTurns, metrics } };
}
