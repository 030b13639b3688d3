/**
 * What every fusion method shares (docs/fusion-and-tuning.md): the input and
 * output shapes, argument checks, the id tie-break, and one accumulator that
 * turns per-list contributions into a fused ranking. Pure functions: keyed by
 * chunk id, ties broken by id ascending, inputs never mutated, explicit zeros
 * respected (`??`, never `||`).
 */
import { z } from "zod";
import { InvalidArgumentError } from "../../errors.js";
import type { Ranked } from "../types.js";

/**
 * One fusion method as the registry (`registry.ts`) lists it: its name, the
 * zod schema of its parameters (the only validation of them: the retriever,
 * the graph's `configurable` and config files all parse through it), the
 * defaults of those parameters, and the function. `fuse(lists, params)`
 * receives parameters already parsed and complete.
 */
export interface FusionMethodSpec<
  N extends string = string,
  P extends Record<string, unknown> = Record<string, unknown>,
> {
  readonly name: N;
  /** One line for docs and `--help`: the formula in words. */
  readonly summary: string;
  /** Strict object schema of the parameters; every key optional (unset: `defaults`). */
  readonly params: z.ZodObject<{ [K in keyof P]: z.ZodType<P[K] | undefined, z.ZodTypeDef, unknown> }, "strict">;
  readonly defaults: Readonly<P>;
  fuse(lists: readonly FusionInput[], params: Readonly<P>): FusedRanked[];
}

/** Identity with the types checked: each method file declares its spec with it. */
export function defineFusion<N extends string, P extends Record<string, unknown>>(spec: {
  name: N;
  summary: string;
  defaults: P;
  params: NoInfer<FusionMethodSpec<N, P>["params"]>;
  fuse: (lists: readonly FusionInput[], params: NoInfer<Readonly<P>>) => FusedRanked[];
}): FusionMethodSpec<N, P> {
  return Object.freeze({ ...spec, defaults: Object.freeze({ ...spec.defaults }) });
}

/** The zod messages fusion parameters share, worded like InvalidArgumentError's expectations. */
export const PARAM_MESSAGES = Object.freeze({
  nonNegative: "a finite non-negative number",
  finite: "a finite number",
  positiveInteger: "a positive integer",
});

/** Parameter schemas of those three kinds (optional: unset takes the method's default). */
export const param = Object.freeze({
  nonNegative: () => {
    const m = { message: PARAM_MESSAGES.nonNegative };
    return z.number(m).finite(m).min(0, m).optional();
  },
  finite: () => {
    const m = { message: PARAM_MESSAGES.finite };
    return z.number(m).finite(m).optional();
  },
  positiveInteger: () => {
    const m = { message: PARAM_MESSAGES.positiveInteger };
    return z.number(m).int(m).min(1, m).optional();
  },
});

/** Code-unit order of ids (locale-independent, identical on every machine): the project's tie-break. */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Higher score first, then id ascending. */
export function compareByScoreThenId(a: Ranked, b: Ranked): number {
  return b.score - a.score || compareIds(a.id, b.id);
}

export function assertPositiveInteger(name: string, value: unknown): asserts value is number {
  if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) {
    throw new InvalidArgumentError(name, "a positive integer", value);
  }
}

export function assertNonNegativeInteger(name: string, value: unknown): asserts value is number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new InvalidArgumentError(name, "a non-negative integer", value);
  }
}

export function assertNonNegativeFinite(name: string, value: unknown): asserts value is number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(name, "a finite non-negative number", value);
  }
}

/** Fresh copies of `items` with ranks 1..n in array order (scores and ids kept). */
export function renumber(items: readonly Ranked[]): Ranked[] {
  return items.map((r, i) => ({ id: r.id, parentId: r.parentId, score: r.score, rank: i + 1 }));
}

export interface FusionInput {
  /** Name of the list (`dense`, `bm25`), used in error messages and in each contribution. */
  name: string;
  ranked: readonly Ranked[];
  /** Multiplier of this list's contributions; default 1. 0 is allowed and means "ignore its scores". */
  weight?: number;
}

/** What one list gave one fused id. The values of an id's contributions add up to its fused score. */
export interface Contribution {
  /** The list's name. */
  list: string;
  /** The id's rank in that list (1-based; the best rank when listed twice). */
  rank: number;
  /** The id's score in that list, as the list gave it. */
  score: number;
  /** The list-level value the method combines: 1/(k + rank) for RRF, the normalised score otherwise. */
  normalized: number;
  /** The list's weight. */
  weight: number;
  /** This list's share of the fused score (weight × normalized, times the list count for CombMNZ). */
  value: number;
}

/** A fused entry: a Ranked plus where its score came from. */
export interface FusedRanked extends Ranked {
  contributions: Contribution[];
}

/**
 * The entries of one list after validation: an id listed twice counts once,
 * at its best (lowest) rank, with that entry's score. Ranks must be positive
 * integers and scores finite. Order: rank ascending, then id.
 */
export function bestEntries(list: FusionInput, checkScores: boolean): Ranked[] {
  const best = new Map<string, Ranked>();
  for (const item of list.ranked) {
    assertPositiveInteger(`rank of ${item.id} in ${list.name}`, item.rank);
    if (checkScores && (typeof item.score !== "number" || !Number.isFinite(item.score))) {
      throw new InvalidArgumentError(`score of ${item.id} in ${list.name}`, "a finite number", item.score);
    }
    const prev = best.get(item.id);
    if (prev === undefined || item.rank < prev.rank) best.set(item.id, item);
  }
  return [...best.values()].sort((a, b) => a.rank - b.rank || compareIds(a.id, b.id));
}

/** Canonical order of an id's contributions (list name, then value, then rank), so the fused sum does not depend on the order of the lists. */
function compareContributions(a: Contribution, b: Contribution): number {
  return compareIds(a.list, b.list) || a.value - b.value || a.rank - b.rank || a.weight - b.weight || a.score - b.score;
}

/**
 * Builds the fused ranking from each list's per-entry normalised values.
 *
 * `normalize(entries)` returns one value per entry (same order). The fused
 * score of an id is Σ_lists weight·normalized, multiplied by
 * `multiplier(count)` where `count` is the number of lists with a positive
 * weight that returned the id (1 unless CombMNZ). Summation runs in a
 * canonical order, so the result is independent of the order of `lists` even
 * in floating point. `parentId` comes from the first list (in input order)
 * holding the id. Output: every id of every list, score descending, ties by id
 * ascending, ranks 1..n; ids whose total is 0 are kept.
 */
export function accumulate(
  lists: readonly FusionInput[],
  normalize: (entries: readonly Ranked[]) => number[],
  checkScores: boolean,
  multiplier: (count: number) => number = () => 1,
): FusedRanked[] {
  const acc = new Map<string, { parentId: string; contributions: Contribution[] }>();
  for (const list of lists) {
    const weight = list.weight ?? 1;
    assertNonNegativeFinite(`weight of ${list.name}`, weight);
    const entries = bestEntries(list, checkScores);
    const values = normalize(entries);
    entries.forEach((item, i) => {
      let entry = acc.get(item.id);
      if (entry === undefined) {
        entry = { parentId: item.parentId, contributions: [] };
        acc.set(item.id, entry);
      }
      const normalized = values[i] as number;
      entry.contributions.push({
        list: list.name,
        rank: item.rank,
        score: item.score,
        normalized,
        weight,
        value: weight * normalized,
      });
    });
  }
  const fused: FusedRanked[] = [];
  for (const [id, { parentId, contributions }] of acc) {
    const count = contributions.filter((c) => c.weight > 0).length;
    const m = multiplier(count);
    if (m !== 1) for (const c of contributions) c.value *= m;
    contributions.sort(compareContributions);
    const ascending = contributions.map((c) => c.value).sort((a, b) => a - b);
    let score = 0;
    for (const v of ascending) score += v;
    fused.push({ id, parentId, score, rank: 0, contributions });
  }
  fused.sort(compareByScoreThenId);
  fused.forEach((r, i) => {
    r.rank = i + 1;
  });
  return fused;
}
