/**
 * The report's derived sections, filled in when a report written before they
 * existed is read (`parseAndFillReport`: what `readReport`, src/app/report.ts, and
 * `retrace compare`'s `readRunSide`, src/eval/gate/compare.ts, read a report file with;
 * docs/schema-versions.md):
 * the build computes them (./aggregate.ts `buildReport`), and a report read
 * back without them gets them here from the same functions, so every
 * renderer (terminal, markdown, HTML) only reads the report and never
 * computes a figure or words a verdict itself (issue 55, item 2).
 *
 * - `recallCurves` (./recall-curves.ts): recall@k per stage; left out when no
 *   gold-bearing turn had a trace, as the build leaves it out.
 * - `queryAttribution.splitTurns`: each split group's attributed turns, the
 *   sum of the group's attribution counts (./query-attribution.ts).
 * - `deltas[].verdict`: each split delta's verdict, worded by the build's rule
 *   (./verdict.ts).
 * - `turns[].goldLostAt`: where each missed gold card of a turn was lost
 *   (./lost-at.ts, the rule the sweep applies when it scores the turn); a turn
 *   without the field gets it when some card missed (a turn where none missed
 *   has none either way).
 * - `turnOutcomes` (./turn-outcomes.ts): the gold-bearing turns counted, the
 *   missed ones listed and counted.
 * - `summaryRepeats` (./turn-outcomes.ts): the summary's columns and tables
 *   that repeat the all column, and why.
 *
 * A report that already has them (every report retrace writes now) comes back
 * as the same object, its bytes untouched. Pure: the input is never mutated.
 */
import { goldLostAtOf } from "./lost-at.js";
import { recallCurvesOf } from "./recall-curves.js";
import { parseReport } from "./schemas.js";
import type { Report, TurnReport } from "./types.js";
import { summaryRepeatsOf, turnOutcomesOf } from "./turn-outcomes.js";
import { wordDeltaVerdict } from "./verdict.js";

/** The report with the derived sections it lacks filled in (the same object when it lacks none). */
export function withDerivedSections(report: Report): Report {
  let out = report;
  if (out.recallCurves === undefined) {
    const recallCurves = recallCurvesOf(out.turns, out.run.k);
    if (recallCurves.all.curves.length > 0) out = { ...out, recallCurves };
  }
  const qa = out.queryAttribution;
  if (qa !== undefined && qa.splitTurns === undefined) {
    const splitTurns = Object.fromEntries(
      Object.entries(qa.splits).map(([split, groups]) => [
        split,
        Object.fromEntries(
          Object.entries(groups).map(([g, counts]) => [g, Object.values(counts).reduce((s, x) => s + x, 0)]),
        ),
      ]),
    );
    out = { ...out, queryAttribution: { ...qa, splitTurns } };
  }
  const turns = withGoldLostAt(out.turns);
  if (turns !== out.turns) out = { ...out, turns };
  if (out.deltas?.some((d) => d.verdict === undefined) === true)
    out = {
      ...out,
      deltas: out.deltas.map((d) => (d.verdict === undefined ? { ...d, verdict: wordDeltaVerdict(d) } : d)),
    };
  if (out.turnOutcomes === undefined) out = { ...out, turnOutcomes: turnOutcomesOf(out.turns) };
  if (out.summaryRepeats === undefined) out = { ...out, summaryRepeats: summaryRepeatsOf(out) };
  return out;
}

/** The turns, each lacking `goldLostAt` given it where some gold card missed (the same array when none needed it). */
function withGoldLostAt(turns: readonly TurnReport[]): TurnReport[] {
  let out: TurnReport[] | undefined;
  turns.forEach((t, i) => {
    if (t.goldLostAt !== undefined) return;
    const goldLostAt = goldLostAtOf(t);
    if (goldLostAt === undefined) return;
    (out ??= [...turns])[i] = { ...t, goldLostAt };
  });
  return out ?? (turns as TurnReport[]);
}

/**
 * A report JSON read back from a file, checked (`parseReport`: older
 * schemaVersions migrated, a bad field a DataValidationError naming the file
 * and the field, exit 2) and with the derived sections it lacks filled in.
 */
export function parseAndFillReport(data: unknown, file: string): Report {
  return withDerivedSections(parseReport(data, file));
}
