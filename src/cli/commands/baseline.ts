/**
 * `retrace baseline floors [FILE]`: evidence-based floors (observed minus
 * slack: the lower bound of the recorded 95% interval, per scope, rounded
 * down to the step; src/app/baseline.ts) printed as `--min-*` flags to paste.
 */
import type { Command } from "commander";
import { defaultBaselineFile, readAggregates, suggestFloors, type FloorSuggestion } from "../../app/baseline.js";
import { action, out } from "../io.js";
import { numberOption } from "../options.js";

/** `--min-hit all=0.85,en=0.9` lines, one per metric. */
export function renderFloors(s: FloorSuggestion[], source: string): string {
  if (s.length === 0) return `${source} holds no retrieval aggregate to derive floors from (a store-less run?)`;
  const lines = [`# evidence-based floors from ${source}: lower bound of each recorded 95% interval, rounded down`];
  for (const x of s) {
    const flags = Object.entries(x.floors).map(([scope, v]) => `${scope}=${v}`);
    if (flags.length > 0) lines.push(`${x.flag} ${flags.join(",")}`);
    for (const [scope, why] of Object.entries(x.skipped)) lines.push(`# ${x.flag}: scope ${scope} skipped (${why})`);
  }
  return lines.join("\n");
}

export function register(program: Command): void {
  const cmd = program.command("baseline").description("Work with a KB's regression baseline (<kb>/eval/baseline.json)");
  cmd
    .command("floors")
    .description("Print evidence-based --min-* floors (lower bound of each recorded 95% interval, per scope) to paste into retrace eval")
    .argument("[file]", "a baseline or report JSON (default <kb>/eval/baseline.json)")
    .option("--kb <dir>", "knowledge-base folder whose baseline is read", "kb")
    .option("--step <x>", "round floors down to a multiple of this", numberOption("--step", { min: 0, minExclusive: true, max: 1 }), 0.01)
    .option("--json", "print JSON")
    .action(
      action(async (file: string | undefined, o: { kb: string; step: number; json?: boolean }) => {
        const step = o.step;
        const source = file ?? defaultBaselineFile(o.kb);
        const { aggregates, splits } = await readAggregates(source);
        const s = suggestFloors(aggregates, splits, step);
        if (o.json) out(JSON.stringify({ version: 1, source, step, floors: s }, null, 2));
        else out(renderFloors(s, source));
      }),
    );
}
