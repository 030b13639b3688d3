/**
 * `retrace eval --shard i/n` on the command line (docs/reliability.md,
 * "Sharded sweeps"): the option's parser and what it may not be combined
 * with. A shard's report is partial: its gate is not evaluated (the merged
 * report gates), so gate and baseline options belong to `retrace merge`.
 */
import { InvalidArgumentError as CommanderArgumentError } from "commander";
import { InvalidArgumentError } from "../errors.js";
import { FLOOR_OPTIONS, type FloorOption } from "../eval/gate/gate.js";
import { parseShardSpec, type ShardSpec } from "../eval/gate/shard.js";
import type { ShardInfo } from "../eval/report/types.js";

/** Commander parser of `--shard i/n`: a bad value is a usage error (exit 2) echoing the value and the valid range. */
export function parseShardOption(raw: string): ShardSpec {
  try {
    return parseShardSpec(raw);
  } catch (e) {
    throw new CommanderArgumentError((e as Error).message);
  }
}

/** The options of `eval` / `start` that `--shard` constrains. */
export interface ShardedRunOptions extends Partial<Record<FloorOption, unknown>> {
  shard?: ShardSpec;
  graph?: string;
  updateBaseline?: boolean;
  baseline?: string;
  maxDrop?: number;
  maxFlips?: number;
}

/**
 * Throws InvalidArgumentError (exit 2, before anything starts) when
 * `--shard` comes with an option that gates or writes a baseline (they act
 * on the whole run: pass them to `retrace merge`), or with `--graph`
 * (sharding runs retrace's own graph only).
 */
export function checkShardOptions(o: ShardedRunOptions): void {
  if (o.shard === undefined) return;
  const given = `--shard ${o.shard.index}/${o.shard.count}`;
  if (o.graph !== undefined) throw new InvalidArgumentError("--shard", "used without --graph (sharded sweeps run retrace's own graph)", given);
  const gating = [
    ...FLOOR_OPTIONS.filter(({ option }) => o[option] !== undefined).map(({ flag }) => flag),
    ...(o.baseline !== undefined ? ["--baseline"] : []),
    ...(o.maxDrop !== undefined ? ["--max-drop"] : []),
    ...(o.maxFlips !== undefined ? ["--max-flips"] : []),
    ...(o.updateBaseline === true ? ["--update-baseline"] : []),
  ];
  if (gating.length > 0)
    throw new InvalidArgumentError(
      gating.join(", "),
      "given to `retrace merge`, not to a shard (a shard's report is partial and is not gated; the merged report is)",
      `${gating.join(" ")} with ${given}`,
    );
}

/** One stderr line saying what a shard ran and that its report is partial. */
export function shardNote(s: ShardInfo): string {
  return `shard ${s.index}/${s.count}: ${s.caseIds.length} of ${s.dataset.caseIds.length} cases, ${s.turns} of ${s.dataset.turns} turns; partial report, gate not evaluated (retrace merge the ${s.count} shard reports to gate)`;
}
