/**
 * The compact first screen of the stdout table (`TableOptions.compact` in
 * ./table.ts): one metric table, the significant split deltas, the
 * conversation summaries and the first missed turns.
 */
import { attributionOffText, conversationSummaryLines } from "./conversation.js";
import { graphTurnNotes, graphTurnTag } from "../graph-report.js";
import { HELD_OUT_MARK, rowLabel } from "../report-parts.js";
import type { Report } from "../types.js";
import {
  cellAggregate,
  chanceWarnings,
  deltaVerdict,
  f3,
  fmtCI,
  fmtP,
  fmtSigned,
  HIT_KEY,
  metricLabel,
  missedCount,
  missedTurns,
  reportKeys,
  turnId,
  vacuousText,
  repeatsLines,
  syntheticNotes,
  toLabelTurns,
  judgmentLines,
} from "./shared.js";
import { gateLines, grid, type Groups, type Paint } from "./table-grid.js";
import { padVisible, visibleLength } from "./wrap.js";

/** Turns listed by name on the first screen (missed turns, turn errors, turns to label); the rest are counted. */
const LISTED_ON_SCREEN = 5;

/** A user message cut to 60 characters (with "…") for a one-line entry of the first screen. */
const shortText = (s: string) => ([...s].length > 60 ? `${[...s].slice(0, 59).join("")}…` : s);

/** Where what the first screen leaves out is shown. */
const ELSEWHERE = "--verbose, --out markdown:FILE or --out html:FILE";

/** The report's small-KB chance warnings as the first screen words them (built with the report: `chance.screen`). */
function screenChanceWarnings(report: Report): string[] {
  return report.chance?.screen ?? chanceWarnings(report);
}

/** The indented list under each unindented line of `lines`, cut to `max` entries and a count of the rest. */
function capLists(lines: readonly string[], max: number): string[] {
  const out: string[] = [];
  let listed = 0;
  let cut = 0;
  const flush = () => {
    if (cut > 0) out.push(`  … and ${cut} more (${ELSEWHERE})`);
    listed = 0;
    cut = 0;
  };
  for (const l of lines) {
    if (!l.startsWith("  ")) {
      flush();
      out.push(l);
    } else if (listed < max) {
      listed++;
      out.push(l);
    } else cut++;
  }
  flush();
  return out;
}

/**
 * The body of the first screen (`TableOptions.compact`): everything is read
 * from the report, as the full table reads it; only less of it is shown.
 */
export function compactLines(report: Report, paint: Paint, width: number | undefined): string[] {
  const k = report.run.k;
  const lines: string[] = [""];
  // One table: the run, then each kind and each locale when there are several (one alone repeats the run's column).
  const kinds = Object.entries(report.splits.kind);
  const locales = Object.entries(report.splits.locale);
  const groups: Groups = [...(kinds.length > 1 ? kinds : []), ...(locales.length > 1 ? locales : [])];
  const keys = reportKeys(report);
  const measured = keys.filter((key) => cellAggregate(report, report.aggregates, key) !== undefined);
  const header = ["metric", "all", "n", "chance", ...groups.map(([g]) => g)];
  // The held-out mark as a dagger (the note under the screen says what it means): the label column stays narrow.
  const rowLabelOf = (key: string) => rowLabel(report, key, metricLabel(key, k)).replace(` ${HELD_OUT_MARK}`, " †");
  const rows = measured.map((key) => {
    const a = cellAggregate(report, report.aggregates, key)!;
    return [
      rowLabelOf(key),
      `${f3(a.mean)} ${fmtCI(a.ci95)}`,
      String(a.n),
      a.chance === undefined ? "" : f3(a.chance),
      ...groups.map(([, agg]) => {
        const g = cellAggregate(report, agg, key);
        return g === undefined ? "—" : f3(g.mean);
      }),
    ];
  });
  const table = (hs: string[], rs: string[][]) =>
    grid([{ cells: hs, style: hs.map(() => "bold" as const) }, ...rs.map((cells) => ({ cells }))], paint);
  const fits = (t: string[]) => width === undefined || t.every((l) => visibleLength(l) <= width);
  const one = table(header, rows);
  // Too wide: without the chance column (the chance warnings stay), else in two tables.
  const noChance = table(
    header.filter((_, i) => i !== 3),
    rows.map((r) => r.filter((_, i) => i !== 3)),
  );
  if (measured.length === 0) lines.push(paint("bold", "metric"));
  else if (groups.length === 0 || fits(one)) lines.push(...one);
  else if (fits(noChance)) lines.push(...noChance);
  else {
    // Too wide: the run's figures, then the groups' means under them.
    lines.push(
      ...table(
        header.slice(0, 4),
        rows.map((r) => r.slice(0, 4)),
      ),
    );
    lines.push(
      ...table(
        ["metric", ...header.slice(4)],
        rows.map((r) => [r[0]!, ...r.slice(4)]),
      ),
    );
  }
  // A key not measured: its row names why, under the label column (its text does not widen the figure columns).
  const labelWidth = Math.max("metric".length, ...keys.map((key) => visibleLength(rowLabelOf(key))));
  for (const key of keys.filter((x) => !measured.includes(x)))
    lines.push(
      `${padVisible(rowLabelOf(key), labelWidth)}  ${paint("yellow", report.vacuous.includes(key) ? vacuousText(report.vacuousReasons[key] ?? "not measured") : "— n=0")}`,
    );

  const deltas = report.deltas ?? [];
  if (deltas.length > 0) {
    const sig = deltas.filter((d) => deltaVerdict(d) === "significant");
    lines.push(
      sig.length === 0
        ? `split deltas: none of ${deltas.length} significant`
        : `split deltas significant (${sig.length} of ${deltas.length}; adjusted p): ${sig
            .map(
              (d) =>
                `${metricLabel(d.key, k)} ${d.split} ${d.group} ${fmtSigned(d.diff)} vs ${d.reference} p=${fmtP(d.pAdjusted ?? d.pValue)}`,
            )
            .join("; ")}`,
    );
  }
  for (const w of screenChanceWarnings(report)) lines.push(paint("yellow", `warning: ${w}`));

  const repeats = repeatsLines(report);
  if (repeats !== null)
    lines.push(
      paint("bold", repeats.note),
      ...(repeats.flaky.length > 0 ? [`  flaky turns: ${repeats.flaky.length} (${ELSEWHERE})`] : []),
    );

  // Why attribution is off, in its first words (the reason in full with --verbose and in the markdown and HTML).
  const off = attributionOffText(report);
  const offShort = off === null ? null : off.replace(/^(off: [^:]*):.*$/su, "$1 (--verbose says why)");
  const conversation = [
    ...(offShort !== null ? [`query attribution: ${offShort}`] : []),
    ...conversationSummaryLines(report),
  ];
  if (conversation.length > 0) lines.push("", ...conversation);

  // The missed turns follow the conversation lines (their bold heading sets them apart); after the table itself, a blank line.
  if (conversation.length === 0) lines.push("");
  if (report.vacuous.includes(HIT_KEY)) {
    lines.push(`missed turns: ${vacuousText(report.vacuousReasons[HIT_KEY] ?? "not measured")}`);
  } else {
    const missed = missedTurns(report);
    lines.push(paint("bold", `missed turns (no gold card in the top-${k}): ${missedCount(report)}`));
    for (const t of missed.slice(0, LISTED_ON_SCREEN)) {
      const tag = graphTurnTag(report, t);
      lines.push(
        `  ${paint("red", turnId(t))} ${t.locale} ${t.kind}  ${JSON.stringify(shortText(t.user))}${tag !== "" ? `  retrieval: ${tag}` : ""}`,
      );
    }
    if (missed.length > LISTED_ON_SCREEN)
      lines.push(
        `  … and ${missedCount(report) - LISTED_ON_SCREEN} more, with gold and top-${k} of each (${ELSEWHERE})`,
      );
  }
  const toLabel = toLabelTurns(report);
  if (toLabel.length > 0)
    lines.push(`turns to label (no must_cite_one_of; they ran and scored nothing): ${toLabel.length}`);
  const judgments = judgmentLines(report);
  if (judgments.summary.length > 0) {
    lines.push(paint("bold", "judgments:"), ...judgments.summary.map((l) => `  ${l}`));
    for (const h of judgments.holes.slice(0, LISTED_ON_SCREEN)) lines.push(`    ${h}`);
    if (judgments.holes.length > LISTED_ON_SCREEN)
      lines.push(`    … and ${judgments.holes.length - LISTED_ON_SCREEN} more (${ELSEWHERE})`);
  }
  const graphNotes = capLists(graphTurnNotes(report, { compact: true }), LISTED_ON_SCREEN);
  if (graphNotes.length > 0) lines.push(...graphNotes);
  for (const n of syntheticNotes(report)) lines.push(paint("yellow", `warning: ${n}`));
  lines.push("");
  const side = report.answerSide;
  if (side !== undefined && side.keys.length > 0)
    lines.push(
      paint(
        "dim",
        side.scope === "all"
          ? "note: no held-out part (no split.json beside the cases): the answer-side rows include the turns the answerer's rules were tuned on."
          : `note: † = holdout part only (${side.turns.holdout} of ${side.turns.holdout + side.turns.tune} turns); the answerer's rules were fitted on the tune part.`,
      ),
    );
  lines.push(
    paint("dim", `note: per-group intervals, turn positions, methods: --verbose, --out markdown:FILE or html:FILE.`),
  );
  // The gate line right under the notes: one row less on the first screen (issue 50: 40 rows at 100 columns with a local Chroma's start-up lines).
  lines.push(...gateLines(report, paint));
  return lines;
}
