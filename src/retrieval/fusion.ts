/**
 * Reciprocal rank fusion and the small ordering helpers every ranked-list
 * stage shares. Pure functions: keyed by chunk id, ties broken by id
 * ascending, inputs never mutated, explicit zeros respected (`??`, never `||`).
 *
 * RRF (Cormack, Clarke & Büttcher, SIGIR 2009):
 *   score(d) = Σ_lists weight_l / (k + rank_l(d)),  summed over the lists that contain d.
 */
import { InvalidArgumentError } from "../errors.js";
import type { Ranked } from "./types.js";

/** The RRF constant of the original paper (and of ADR-0022). */
export const RRF_K = 60;

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
  /** Name of the list (`dense`, `bm25`), used in error messages. */
  name: string;
  ranked: readonly Ranked[];
  /** Multiplier of this list's contributions; default 1. 0 is allowed and means "ignore its scores". */
  weight?: number;
}

export interface FusionOptions {
  /** The RRF constant; default `RRF_K` (60). 0 is allowed. */
  k?: number;
}

/**
 * Fuses ranked lists by reciprocal rank, keyed by chunk id.
 *
 * - Uses each entry's `rank` field (1-based), not its array position.
 * - An id listed twice in one list counts once for that list, at its best rank.
 * - An id absent from a list gets nothing from it (no "missing rank" penalty).
 * - `parentId` comes from the first list, in input order, holding the id (the
 *   lists agree on it in this project; the output is order-independent then).
 * - Each id's contributions are summed in a canonical order (ascending), so the
 *   result does not depend on the order of `lists` even in floating point.
 * - Output: every id of every list, score descending, ties by id ascending,
 *   ranks 1..n. Items whose total is 0 (weight 0) are kept, at the end.
 *
 * Throws InvalidArgumentError for a negative or non-finite weight or k, or a
 * rank that is not a positive integer.
 */
export function reciprocalRankFusion(lists: readonly FusionInput[], options?: FusionOptions): Ranked[] {
  const k = options?.k ?? RRF_K;
  assertNonNegativeFinite("k", k);
  const acc = new Map<string, { parentId: string; contributions: number[] }>();
  for (const list of lists) {
    const weight = list.weight ?? 1;
    assertNonNegativeFinite(`weight of ${list.name}`, weight);
    const best = new Map<string, Ranked>();
    for (const item of list.ranked) {
      assertPositiveInteger(`rank of ${item.id} in ${list.name}`, item.rank);
      const prev = best.get(item.id);
      if (prev === undefined || item.rank < prev.rank) best.set(item.id, item);
    }
    for (const [id, item] of best) {
      let entry = acc.get(id);
      if (entry === undefined) {
        entry = { parentId: item.parentId, contributions: [] };
        acc.set(id, entry);
      }
      entry.contributions.push(weight / (k + item.rank));
    }
  }
  const fused: Ranked[] = [];
  for (const [id, { parentId, contributions }] of acc) {
    contributions.sort((a, b) => a - b);
    let score = 0;
    for (const c of contributions) score += c;
    fused.push({ id, parentId, score, rank: 0 });
  }
  fused.sort(compareByScoreThenId);
  fused.forEach((r, i) => {
    r.rank = i + 1;
  });
  return fused;
}
