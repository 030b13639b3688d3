/**
 * The compact stdout table of a Report (docs/architecture.md §7); conventions
 * in src/eval/report/render.ts. Given a `width` (the CLI passes the terminal's), every
 * line fits it: a split table wider than that is stacked (one block per group,
 * its figures in columns) and any longer line is wrapped at spaces (./wrap.ts).
 */
import { positionLabel } from "../funnel-stats.js";
import {
  attributionCostText,
  attributionOffText,
  attributionTable,
  conversationNote,
  funnelTable,
  queryMeansTable,
} from "./conversation.js";
import { graphHeaderLines, graphTurnNotes, graphTurnTag } from "../graph-report.js";
import { answererText, answerSideNote, PART_LABELS, replayText, rowLabel } from "../report-parts.js";
import type { GroupDelta, Report } from "../types.js";
import {
  cell,
  cellAggregate,
  chanceWarnings,
  ciMethod,
  deltaMethod,
  deltaVerdict,
  embedderText,
  retrievalRows,
  extraSplits,
  f3,
  fmtCI,
  fmtP,
  fmtSigned,
  fmtSignedCI,
  goldBearing,
  goldPositionsText,
  HIT_KEY,
  partialText,
  ids,
  kindCounts,
  metricLabel,
  missedCount,
  missedTurns,
  RECALL_NOTE,
  reportKeys,
  turnId,
  vacuousText,
  repeatsLines,
  syntheticNotes,
  toLabelTurns,
  judgmentLines,
  measuresNotComputedLine,
} from "./shared.js";
import { compactLines } from "./table-compact.js";
import { ANSI, gateLines, grid, type Groups, type Paint, painter } from "./table-grid.js";
import { fitText, padVisible, visibleLength, wrapLine } from "./wrap.js";

function deltaCases(n: number | undefined): string {
  return n === undefined ? "" : ` (${n} case${n === 1 ? "" : "s"})`;
}

function fmtPs(d: GroupDelta): string {
  return d.pAdjusted === undefined
    ? `p=${fmtP(d.pValue)}`
    : `p=${fmtP(d.pValue)} adj=${fmtP(d.pAdjusted)} m=${d.familySize ?? 1}`;
}

function deltaText(d: GroupDelta, k: number): string {
  return `${metricLabel(d.key, k)} ${d.split} ${d.group} ${fmtSigned(d.diff)} vs ${d.reference} (${f3(d.meanGroup)} n=${d.nGroup}${deltaCases(d.nCasesGroup)} vs ${f3(d.meanReference)} n=${d.nReference}${deltaCases(d.nCasesReference)}) ${d.ci95 === undefined ? "" : `CI ${fmtSignedCI(d.ci95)} `}${fmtPs(d)} ${deltaVerdict(d)}`;
}

/**
 * A split's table: a row per key, a column per group. When `width` is given
 * and that is wider, the stacked form (`stackedGrid`) instead.
 */
function splitGrid(
  report: Report,
  title: string,
  groups: Groups,
  paint: Paint,
  headline = true,
  width?: number,
): string[] {
  const k = report.run.k;
  const header = { cells: [title, ...groups.map(([g]) => g)], style: [title, ...groups].map(() => "bold" as const) };
  const rows = reportKeys(report).map((key) => {
    const cells = [
      headline ? rowLabel(report, key, metricLabel(key, k)) : metricLabel(key, k),
      ...groups.map(([, agg]) => cell(report, agg, key, !headline)),
    ];
    const vac = report.vacuous.includes(key);
    return { cells, style: cells.map((_, i) => (i > 0 && vac ? ("yellow" as const) : undefined)) };
  });
  const wide = grid([header, ...rows], paint);
  if (width === undefined || wide.every((l) => visibleLength(l) <= width)) return wide;
  return stackedGrid(report, title, groups, paint, headline, width);
}

/**
 * The narrow form of a split's table: one block per group, headed
 * `metric [group]`, each figure of a cell in its own column (mean, 95% CI, n,
 * cases, chance; a column no row has is left out). A text cell (not
 * measured, "— n=0") spans those columns, wrapped under itself. Nothing of
 * the wide form is lost: the same keys, groups and figures.
 */
function stackedGrid(
  report: Report,
  title: string,
  groups: Groups,
  paint: Paint,
  headline: boolean,
  width: number,
): string[] {
  const k = report.run.k;
  const keys = reportKeys(report);
  const labels = keys.map((key) => (headline ? rowLabel(report, key, metricLabel(key, k)) : metricLabel(key, k)));
  const names = ["mean", "95% CI", "n", "cases", "chance"];
  const out: string[] = [];
  for (const [g, [name, agg]] of groups.entries()) {
    if (g > 0) out.push("");
    const cells = keys.map((key) => {
      const a = cellAggregate(report, agg, key, !headline);
      if (a === undefined) return cell(report, agg, key, !headline);
      return [
        f3(a.mean),
        fmtCI(a.ci95),
        String(a.n),
        a.nCases === undefined ? "" : String(a.nCases),
        a.chance === undefined ? "" : f3(a.chance),
      ];
    });
    const shown = names.map((_, c) => c < 3 || cells.some((x) => Array.isArray(x) && x[c] !== ""));
    const pick = (xs: string[]) => xs.filter((_, c) => shown[c]);
    const head = `${title} [${name}]`;
    const labelWidth = Math.max(visibleLength(head), ...labels.map(visibleLength));
    const figureRows = cells.filter((x): x is string[] => Array.isArray(x));
    const colWidths = pick(names).map((n, c) =>
      Math.max(n.length, ...figureRows.map((x) => visibleLength(pick(x)[c]!))),
    );
    const pad = padVisible;
    // Padded on the visible text, then painted; the last column is not padded (no trailing spaces).
    const line = (label: string, xs: string[], style?: keyof typeof ANSI) =>
      [
        pad(label, labelWidth),
        ...xs.map((x, c) => {
          const padded = c === xs.length - 1 ? x : pad(x, colWidths[c]!);
          return style === undefined ? padded : paint(style, padded);
        }),
      ]
        .join("  ")
        .trimEnd();
    out.push(line(paint("bold", head), pick(names), "bold"));
    for (const [i, key] of keys.entries()) {
      const x = cells[i]!;
      const style = report.vacuous.includes(key) ? ("yellow" as const) : undefined;
      if (Array.isArray(x)) {
        out.push(line(labels[i]!, pick(x), style));
        continue;
      }
      // A text cell: spans the figure columns, wrapped under itself while that leaves room for a few words.
      const indent = labelWidth + 2;
      const room = width - indent;
      const pieces = room >= 20 ? wrapLine(x, room, 0) : [x];
      const paintText = (t: string) => (style === undefined ? t : paint(style, t));
      out.push(`${pad(labels[i]!, labelWidth)}  ${paintText(pieces[0]!)}`);
      for (const p of pieces.slice(1)) out.push(`${" ".repeat(indent)}${paintText(p)}`);
    }
  }
  return out;
}

/**
 * Compact stdout summary: run line and embedder, overall + golden/adversarial,
 * per locale, locale deltas with their tests, missed turns, notes, gate.
 * Colour only when `color` is true (the caller applies NO_COLOR / TTY rules).
 * `width` (columns; 0 or absent: no limit): no line is wider (colour codes
 * not counted). The same report and width always give the same text.
 */
const SETUP_WORDS = {
  "lsa-fit": "LSA fit",
  "lsa-load": "LSA state loaded",
  "model-load": "model loaded",
  none: "built-in, nothing to prepare",
} as const;

type SetupKind = keyof typeof SETUP_WORDS;

/**
 * How the embedder was made ready, as `ingest`, `beir` and the report print
 * it: `<words[kind]> <ms>` (no time for `none`) and, for an LSA fit, the
 * chance baseline's part (`LSA fit 1.51 s (chance baseline 0.70 s)`).
 */
export function embedderSetupText(
  e: { kind: SetupKind; ms: number; chanceMs?: number },
  words: Readonly<Record<SetupKind, string>>,
  sec: (ms: number) => string,
): string {
  const chance = e.chanceMs !== undefined ? ` (chance baseline ${sec(e.chanceMs)})` : "";
  return `${words[e.kind]}${e.kind === "none" ? "" : ` ${sec(e.ms)}`}${chance}`;
}

/** The embedder's fit (or load) and the store's write, from `timings.setup` (wall clock): `LSA fit 0.41 s; store write 1.20 s (ingested)`. Null without it. */
export function setupText(report: Report): string | null {
  const s = report.timings?.setup;
  if (s === undefined) return null;
  const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const store =
    s.store === null
      ? "no store write (memory)"
      : s.store.status === "ingested"
        ? `store write ${sec(s.store.writeMs)} (ingested: embed + write)`
        : `store up to date (checked in ${sec(s.store.writeMs)})`;
  return `${embedderSetupText(s.embedder, SETUP_WORDS, sec)}; ${store}`;
}

/** How `renderTable` draws a report: `compact` is the CLI's first screen (at most SCREEN_LINES lines for a default run), otherwise every table. */
export interface TableOptions {
  color: boolean;
  width?: number;
  verbose?: boolean;
  /**
   * The first screen (what `retrace eval` / `start` print without `--verbose`):
   * one metric table whose columns are the run, each kind and each locale
   * (a kind or locale table that would repeat the run's column is left out),
   * the split deltas that are significant, the conversation tables as one
   * line each, the first missed turns. Everything else is in `--verbose`,
   * the markdown (`--out markdown:`) and the HTML page.
   */
  compact?: boolean;
}

/** The line budget of the compact first screen of a default run (issue 50): the Next: hints come after it. */
export const SCREEN_LINES = 40;

export function renderTable(report: Report, opts: TableOptions): string {
  const paint = painter(opts.color);
  // 0 (or no width): no limit, the wide tables as they are.
  const width = opts.width !== undefined && opts.width > 0 && Number.isFinite(opts.width) ? opts.width : undefined;
  const { run } = report;
  const lines: string[] = [];
  const compact = opts.compact === true;
  lines.push(
    `${paint("bold", "retrace")}  k=${run.k}  store=${run.store}${run.mode !== undefined ? `  mode=${run.mode}` : ""}${run.rerank !== undefined ? `  rerank=${run.rerank ?? "off"}` : ""}  dataset=${run.datasetHash.slice(0, 12)}  kb=${run.kbHash.slice(0, 12)}${report.timings !== undefined ? `  ${(report.timings.durationMs / 1000).toFixed(1)} s` : ""}`,
  );
  if (report.shard !== undefined) lines.push(paint("yellow", partialText(report.shard)));
  // The first screen names the embedder and its kind; the description's parenthesis (how it was fitted) with --verbose.
  // A graph of your own or a recording: the graph (or recording) line under it names the same thing, and the first screen leaves it to that line.
  const embedder = embedderText(report);
  if (!compact || report.run.graph === undefined)
    lines.push(`embedder: ${compact ? embedder.replace(/ \(.*$/u, "") : embedder}`);
  const setup = setupText(report);
  if (setup !== null && !compact) lines.push(`setup: ${setup}`);
  for (const [label, text] of retrievalRows(report, { compact })) lines.push(`${label}: ${text}`);
  lines.push(...graphHeaderLines(report, { compact }));
  const answerer = answererText(report);
  if (answerer !== null) lines.push(`answerer: ${answerer}`);
  const replay = replayText(report);
  if (replay !== null) lines.push(`replay: ${replay}`);
  lines.push(`turns: ${report.turns.length} (${kindCounts(report)}); gold-bearing: ${goldBearing(report)}`);
  if (compact) {
    lines.push(...compactLines(report, paint, width));
    const text = `${lines.join("\n")}\n`;
    return width === undefined ? text : fitText(text, width);
  }
  lines.push("");
  const kinds = Object.entries(report.splits.kind);
  lines.push(...splitGrid(report, "metric", [["all", report.aggregates], ...kinds], paint, true, width));
  const locales = Object.entries(report.splits.locale);
  if (locales.length > 0) {
    lines.push("");
    lines.push(...splitGrid(report, "metric", locales, paint, true, width));
  }
  for (const [name, groups] of extraSplits(report)) {
    lines.push("");
    // The tune/holdout part shows every key per part, answer-side included (docs/holdout.md).
    if (name === "part")
      lines.push(
        ...splitGrid(
          report,
          "metric",
          PART_LABELS.map(([p, label]) => [label, groups[p]]),
          paint,
          false,
          width,
        ),
      );
    // Turn positions are named as every turn key numbers them (`turn #0`…; the JSON keys stay "1"…"4+").
    else if (name === "position")
      lines.push(
        ...splitGrid(
          report,
          "metric (position)",
          Object.entries(groups).map(([g, agg]) => [positionLabel(g), agg]),
          paint,
          true,
          width,
        ),
      );
    else lines.push(...splitGrid(report, `metric (${name})`, Object.entries(groups), paint, true, width));
  }

  const deltas = report.deltas ?? [];
  if (deltas.length > 0) {
    lines.push("");
    lines.push(paint("bold", `split deltas (${deltaMethod(report)}):`));
    for (const d of deltas) lines.push(`  ${deltaText(d, run.k)}`);
  } else if (locales.length > 1) {
    lines.push("");
    lines.push("locale deltas are indicative only: no significance test in this report.");
  }

  for (const w of chanceWarnings(report)) lines.push(paint("yellow", `warning: ${w}`));

  const repeats = repeatsLines(report);
  if (repeats !== null) {
    lines.push("", paint("bold", repeats.note));
    if (repeats.metrics.length > 0) {
      lines.push(
        "  two-stage 95% intervals (cases resampled, then repeats within each case); variance share within case (repeats) / between cases:",
      );
      for (const [label, mean, ci, shares] of repeats.metrics) lines.push(`  ${label}: ${mean} ${ci}  ${shares}`);
    }
    if (repeats.flaky.length > 0) {
      lines.push(paint("bold", "  flaky turns:"));
      for (const f of repeats.flaky) lines.push(`    ${f}`);
    }
  }

  lines.push(...conversationLines(report, paint));

  lines.push("");
  if (report.vacuous.includes(HIT_KEY)) {
    lines.push(`missed turns: ${vacuousText(report.vacuousReasons[HIT_KEY] ?? "not measured")}`);
  } else {
    const missed = missedTurns(report);
    lines.push(paint("bold", `missed turns (no gold card in the top-${run.k}): ${missedCount(report)}`));
    for (const t of missed) {
      lines.push(`  ${paint("red", turnId(t))} ${t.locale} ${t.kind}  ${JSON.stringify(t.user)}`);
      lines.push(`    gold=${ids(t.gold)} top${run.k}=${ids(t.retrievedIds ?? [])}`);
      const tag = graphTurnTag(report, t); // --graph runs: "no retrieval", unknown ids, several calls
      if (tag !== "") lines.push(`    retrieval: ${tag}`);
      const where = goldPositionsText(t);
      if (where !== "") lines.push(`    gold by stage: ${where}`);
    }
  }

  const toLabel = toLabelTurns(report);
  if (toLabel.length > 0) {
    lines.push(
      "",
      paint("bold", `turns to label (no must_cite_one_of; they ran and scored nothing): ${toLabel.length}`),
    );
    for (const t of toLabel) lines.push(`  ${turnId(t)} ${t.locale}  ${JSON.stringify(t.user)}`);
  }
  const judgments = judgmentLines(report);
  if (judgments.summary.length > 0) {
    lines.push("", paint("bold", "judgments:"), ...judgments.summary.map((l) => `  ${l}`));
    for (const h of judgments.holes) lines.push(`    ${h}`);
  }
  // The measures not computed (no judgments): one line, with --verbose only (the markdown and JSON always say it).
  const notComputed = opts.verbose === true ? measuresNotComputedLine(report) : null;
  if (notComputed !== null) lines.push(paint("dim", `note: ${notComputed}`));
  const graphNotes = graphTurnNotes(report);
  if (graphNotes.length > 0) lines.push("", ...graphNotes);
  for (const n of syntheticNotes(report)) lines.push(paint("yellow", `warning: ${n}`));
  lines.push("");
  lines.push(paint("dim", `note: ${RECALL_NOTE}`));
  const sideNote = answerSideNote(report);
  if (sideNote !== null) lines.push(paint("dim", `note: ${sideNote}`));
  lines.push(paint("dim", `note: ${ciMethod(report)} turns are caseId#turn, turn 0-based.`));
  lines.push("");
  lines.push(...gateLines(report, paint));
  const text = `${lines.join("\n")}\n`;
  return width === undefined ? text : fitText(text, width);
}

/** The query attribution and the stage funnel (./conversation.ts), as grids. */
function conversationLines(report: Report, paint: Paint): string[] {
  const out: string[] = [];
  const off = attributionOffText(report);
  if (off !== null) out.push("", `query attribution: ${off}`);
  const cost = attributionCostText(report); // --graph --counterfactual: extra calls and unattributed turns
  for (const [title, t] of [
    ["query attribution (gold-bearing turns; docs/query-attribution.md):", attributionTable(report)],
    ["each query's means over the attributed turns:", queryMeansTable(report)],
    ["stage funnel:", funnelTable(report)],
  ] as const) {
    if (t === null) continue;
    out.push("", paint("bold", title));
    out.push(
      ...grid(
        [{ cells: t.header, style: t.header.map(() => "bold" as const) }, ...t.rows.map((cells) => ({ cells }))],
        paint,
      ),
    );
    if (cost !== null && title.startsWith("query attribution")) out.push(cost);
  }
  if (report.funnel !== undefined) out.push(paint("dim", `note: ${conversationNote(report)}`));
  return out;
}
