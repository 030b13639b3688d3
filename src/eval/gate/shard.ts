/**
 * Sharded sweeps (docs/reliability.md, "Sharded sweeps"): which cases shard
 * `i/n` runs, and the `shard` section that marks a partial report.
 *
 * The assignment rule (SHARD_RULE), over the cases a run selected (after
 * `--locale` / `--case`), in dataset order:
 *
 * 1. sort the cases by turn count, descending, then by id (ascending, by
 *    UTF-16 code units);
 * 2. give each case, in that order, to the shard with the fewest turns so
 *    far; ties go to the lowest shard index;
 * 3. each shard runs its cases in dataset order.
 *
 * Whole cases only (a case's turns share one conversation thread). The
 * assignment depends only on the ids and turn counts of the selected cases
 * and on n: not on concurrency, not on which shard is run, not on the
 * machine. Greedy longest-first keeps shard loads within one case's turns
 * of each other (the longest case's turn count). With more shards than
 * cases, the shards past the case count are empty.
 *
 * Pure functions; inputs are never mutated.
 */
import { InvalidArgumentError } from "../../errors.js";
import type { ShardInfo } from "../report/types.js";

/** Which shard of how many: `index` in 1..count. */
export interface ShardSpec {
  index: number;
  count: number;
}

/** Name of the assignment rule, recorded in every shard report; `retrace merge` refuses shards made by another rule. */
export const SHARD_RULE = "turns-desc-id-greedy-v1";

/** What `--shard` accepts, for messages. */
export const SHARD_SYNTAX = "i/n with integers 1 ≤ i ≤ n (e.g. 2/3)";

/**
 * `"2/3"` → `{ index: 2, count: 3 }`. Throws InvalidArgumentError (exit 2)
 * echoing the value given and the valid range: n must be an integer ≥ 1 and
 * i an integer in 1..n. Surrounding spaces are allowed; signs, decimals,
 * exponents and empty parts are not.
 */
export function parseShardSpec(raw: string, flag = "--shard"): ShardSpec {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(raw);
  if (m === null) throw new InvalidArgumentError(flag, SHARD_SYNTAX, raw);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (!Number.isSafeInteger(count) || count < 1)
    throw new InvalidArgumentError(flag, `${SHARD_SYNTAX}; n must be at least 1`, raw);
  if (!Number.isSafeInteger(index) || index < 1 || index > count)
    throw new InvalidArgumentError(flag, `${SHARD_SYNTAX}; with n = ${count}, i must be in 1..${count}`, raw);
  return { index, count };
}

/** A case as the assignment sees it: its id and its number of turns. */
export interface ShardableCase {
  id: string;
  turns: number;
}

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The 1-based shard of each case (same order as `cases`) under SHARD_RULE.
 * Throws InvalidArgumentError when `count` is not a positive integer or a
 * case id repeats (the assignment would not be a function of the id).
 */
export function assignShards(cases: readonly ShardableCase[], count: number): number[] {
  if (!Number.isSafeInteger(count) || count < 1)
    throw new InvalidArgumentError("shard count", "a positive integer", count);
  const seen = new Set<string>();
  for (const c of cases) {
    if (seen.has(c.id)) throw new InvalidArgumentError("case ids", "unique ids to assign to shards", c.id);
    seen.add(c.id);
  }
  const order = cases
    .map((c, i) => i)
    .sort((a, b) => cases[b]!.turns - cases[a]!.turns || byId(cases[a]!.id, cases[b]!.id));
  const loads = new Array<number>(count).fill(0);
  const shardOf = new Array<number>(cases.length);
  for (const i of order) {
    let best = 0;
    for (let s = 1; s < count; s++) if (loads[s]! < loads[best]!) best = s; // strict: ties stay with the lowest index
    loads[best]! += cases[i]!.turns;
    shardOf[i] = best + 1;
  }
  return shardOf;
}

/** The cases of shard `spec.index` of `spec.count`, in their input (dataset) order. */
export function shardCases<C extends { id: string; turns: readonly unknown[] }>(
  cases: readonly C[],
  spec: ShardSpec,
): C[] {
  const shardOf = assignShards(
    cases.map((c) => ({ id: c.id, turns: c.turns.length })),
    spec.count,
  );
  return cases.filter((_, i) => shardOf[i] === spec.index);
}

/**
 * The `shard` section of a partial report: which shard, the rule, this
 * shard's case ids and turn count, and the identity of the whole selection
 * the shards split (its dataset hash, its case ids in dataset order, its
 * turn count), which `retrace merge` checks the shards agree on.
 */
export function shardSection(
  spec: ShardSpec,
  selection: readonly { id: string; turns: readonly unknown[] }[],
  shard: readonly { id: string; turns: readonly unknown[] }[],
  selectionHash: string,
  opts: { recorded?: boolean } = {},
): ShardInfo {
  const turns = (cs: readonly { turns: readonly unknown[] }[]) => cs.reduce((s, c) => s + c.turns.length, 0);
  return {
    index: spec.index,
    count: spec.count,
    rule: SHARD_RULE,
    caseIds: shard.map((c) => c.id),
    turns: turns(shard),
    // A recorded-traces run reports only the turns that joined: the cases' own turn counts travel for the merge's assignment check.
    dataset: {
      datasetHash: selectionHash,
      caseIds: selection.map((c) => c.id),
      turns: turns(selection),
      ...(opts.recorded === true ? { caseTurns: selection.map((c) => c.turns.length) } : {}),
    },
  };
}

/** One log line saying what a shard ran and that its report is partial. */
export function shardNote(s: ShardInfo): string {
  return `shard ${s.index}/${s.count}: ${s.caseIds.length} of ${s.dataset.caseIds.length} cases, ${s.turns} of ${s.dataset.turns} turns; partial report, gate not evaluated (retrace merge the ${s.count} shard reports to gate)`;
}
