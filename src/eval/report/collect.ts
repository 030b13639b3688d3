/**
 * The scores of a report's turns per key (./aggregate.ts): collected once
 * per distinct list of turns, each tagged with its case, with each key's
 * mean chance level, and summarized into aggregates whose intervals a
 * shared bootstrap batch fills in (docs/statistics.md).
 */
import { InvalidArgumentError } from "../../errors.js";
import { turnChanceLevel } from "../measures/metrics.js";
import type { ClusteredValue, ClusterMeanBatch } from "../stats/bootstrap.js";
import type { Aggregate, TurnReport } from "./types.js";

/** Cards per locale (N) and k, for the chance levels of the retrieval metrics; undefined: no chance levels. */
export type ChanceInput = { cardsPerLocale: Readonly<Record<string, number>>; k: number } | undefined;

/** Scores per key, in key order, over the given turns, each tagged with its case. */
export function collect(turns: readonly TurnReport[], keyOrder: readonly string[]): Map<string, ClusteredValue[]> {
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
export interface KeyValues {
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
  chance: ChanceInput,
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
export class CollectedTurns {
  private readonly seen: { turns: readonly TurnReport[]; byKey: Map<string, KeyValues> }[] = [];
  constructor(
    private readonly order: readonly string[],
    private readonly chance: ChanceInput,
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
export function summarizeAll(
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
