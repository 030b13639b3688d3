/**
 * `retrace eval --shard i/n` on the command line (docs/reliability.md,
 * "Sharded sweeps"): the option's parser. What a shard may not be combined
 * with is checked by the use-case (checkShardOptions, src/app/eval.ts): a
 * shard's report is partial, its gate is not evaluated (the merged report
 * gates), so gate and baseline options belong to `retrace merge`.
 */
import { InvalidArgumentError as CommanderArgumentError } from "commander";
import { parseShardSpec, type ShardSpec } from "../eval/gate/shard.js";

/** Commander parser of `--shard i/n`: a bad value is a usage error (exit 2) echoing the value and the valid range. */
export function parseShardOption(raw: string): ShardSpec {
  try {
    return parseShardSpec(raw);
  } catch (e) {
    throw new CommanderArgumentError((e as Error).message);
  }
}
