/**
 * Renderings of ONE Report (docs/architecture.md §7): JSON, markdown, a compact stdout
 * table and JUnit XML. Nothing here computes a metric, a mean or an interval:
 * every number comes from the report object, so the renderings cannot
 * disagree with each other or with `--json`.
 *
 * Conventions of every rendering:
 * - each aggregate is shown with its n and its 95% interval;
 * - a vacuous key is shown as "not measured (<reason>)" (or "not run: ...")
 *   instead of a number;
 * - recall@k is labelled a lower bound (gold is disjunctive);
 * - turns are identified as `caseId#turn`, turn 0-based (the baseline's key);
 * - with a tune/holdout split, answer-side rows of the overall, kind and
 *   locale tables are marked "(held-out)" (they are computed on the holdout
 *   part only) and a per-part table follows; without one, a note says that
 *   no held-out part exists (docs/holdout.md).
 */
import { graphHeaderLines, graphTurnNotes } from "./graph-report.js";
import {
  CITATION_CORRECTNESS_KEY,
  CITATION_COVERAGE_KEY,
  GROUNDEDNESS_KEY,
  NOT_RUN_PREFIX,
  REFUSAL_CORRECTNESS_KEY,
} from "./evaluators.js";
import { METRICS } from "./metrics.js";
import { answererText, answerSideNote, PART_LABELS, rowLabel } from "./report-parts.js";
import type { Aggregate, GroupDelta, Report, TurnReport } from "./types.js";

const HIT_KEY = "retrieval_hit_at_k";
const RECALL_KEY = "retrieval_recall_at_k";
/** Adjusted p-value below which a delta is called significant (docs/statistics.md). */
export const SIGNIFICANCE_LEVEL = 0.05;

const RECALL_NOTE =
  "recall@k is a conservative lower bound: gold is disjunctive (citing any one gold card meets the turn), so 1 of 2 acceptable cards scores 0.5; hit@k is the primary signal.";

/** The report as JSON text (carries `version`), pretty-printed, newline-terminated. */
export function reportToJSON(report: Report): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

// ---------------------------------------------------------------- shared helpers

/** Keys in the order every rendering lists them: the metric registry, then the other evaluators' keys. */
const CANONICAL_KEYS: readonly string[] = [
  ...METRICS.map((m) => m.key),
  CITATION_COVERAGE_KEY,
  CITATION_CORRECTNESS_KEY,
  REFUSAL_CORRECTNESS_KEY,
  GROUNDEDNESS_KEY,
];

/** Canonical key order first, then any other key in the order the report lists it. */
function reportKeys(report: Report): string[] {
  const present = [...Object.keys(report.aggregates), ...report.vacuous];
  const ordered = CANONICAL_KEYS.filter((k) => present.includes(k));
  for (const k of present) if (!ordered.includes(k)) ordered.push(k);
  return ordered;
}

/** `hit@5`, `recall@5 (lower bound)`, `nDCG@5`; other keys as they are. */
export function metricLabel(key: string, k: number): string {
  const spec = METRICS.find((m) => m.key === key);
  if (spec === undefined) return key;
  const label = spec.label.replace(/@k$/, `@${k}`);
  return key === RECALL_KEY ? `${label} (lower bound)` : label;
}

/** "not measured (no store)", or the reason itself when it says "not run: ...". */
export function vacuousText(reason: string): string {
  return reason.startsWith(NOT_RUN_PREFIX) ? reason : `not measured (${reason})`;
}

function f3(x: number): string {
  return x.toFixed(3);
}

function fmtSigned(x: number): string {
  return `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(3)}`;
}

function fmtP(p: number): string {
  return p < 0.001 ? "<0.001" : p.toFixed(3);
}

function fmtCI(ci: [number, number] | undefined): string {
  return ci === undefined ? "(no CI)" : `[${f3(ci[0])}, ${f3(ci[1])}]`;
}

/** `0.812 [0.745, 0.871] n=134 (40 cases) chance 0.132` — n counts turns; the chance level only for retrieval metrics. */
function fmtAgg(agg: Aggregate): string {
  const cases = agg.nCases === undefined ? "" : ` (${agg.nCases} case${agg.nCases === 1 ? "" : "s"})`;
  const chance = agg.chance === undefined ? "" : ` chance ${f3(agg.chance)}`;
  return `${f3(agg.mean)} ${fmtCI(agg.ci95)} n=${agg.n}${cases}${chance}`;
}

/**
 * The cell of `key` in a group: its aggregate, the vacuous text, or "— n=0".
 * In a part group (`partGroup`), a figure the group has is shown even when the
 * headline key is vacuous (e.g. an answer-side key with no held-out turn).
 */
function cell(report: Report, group: Record<string, Aggregate> | undefined, key: string, partGroup = false): string {
  const reason = report.vacuousReasons[key];
  if (partGroup && group?.[key] !== undefined) return fmtAgg(group[key]);
  if (report.vacuous.includes(key)) return vacuousText(reason ?? "not measured");
  const agg = group?.[key];
  return agg === undefined ? "— n=0" : fmtAgg(agg);
}

function turnId(t: Pick<TurnReport, "caseId" | "turn">): string {
  return `${t.caseId}#${t.turn}`;
}

function score(t: TurnReport, key: string): number | undefined {
  return t.results.find((r) => r.key === key)?.score;
}

/** Gold-bearing turns whose hit@k is 0: no gold card in the top-k. */
export function missedTurns(report: Report): TurnReport[] {
  return report.turns.filter((t) => score(t, HIT_KEY) === 0);
}

function ids(xs: readonly string[]): string {
  return `[${xs.join(", ")}]`;
}

/** `duplicate-charges: dense 7, bm25 —, fused 9` per gold card, from the trace summary. */
function goldPositionsText(t: TurnReport): string {
  const pos = t.trace?.goldPositions;
  if (pos === undefined) return "";
  return Object.entries(pos)
    .map(([id, stages]) => `${id}: ${Object.entries(stages).map(([stage, rank]) => `${stage} ${rank ?? "—"}`).join(", ")}`)
    .join("; ");
}

function kindCounts(report: Report): string {
  const counts = new Map<string, number>();
  for (const t of report.turns) counts.set(t.kind, (counts.get(t.kind) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${k} ${n}`).join(", ");
}

function goldBearing(report: Report): number {
  return report.turns.filter((t) => t.gold.length > 0).length;
}

function embedderText(report: Report): string {
  const { embedder, embedderDescription } = report.run;
  if (embedder === null) return "none (no retrieval ran)";
  return embedderDescription !== undefined ? `${embedder} — ${embedderDescription}` : embedder;
}

function ciMethod(report: Report): string {
  const b = report.bootstrap;
  if (b === undefined) return "intervals: 95% percentile bootstrap of the mean (seeded); (no CI) when n < 2.";
  const unit = b.unit ?? "turn";
  const what = unit === "case" ? "resampling whole cases (all turns of a case together)" : "resampling single turns (ignores the correlation of a case's turns)";
  return `intervals: 95% percentile bootstrap of the turn-weighted mean, ${what}, ${b.samples} resamples, seed ${b.seed}; n counts turns; (no CI) when fewer than 2 ${unit}s; chance = expected value of a uniformly random ranking of the locale's cards.`;
}

function deltaMethod(report: Report): string {
  const b = report.bootstrap;
  if (b?.test === undefined) return `significant when p < ${SIGNIFICANCE_LEVEL}`;
  return `${b.test}; unit: ${b.unit ?? "turn"}; ${b.correction ?? ""}; significant when the adjusted p < ${SIGNIFICANCE_LEVEL}; intervals are unadjusted 95%`;
}

/** Significant when the Holm-adjusted p is < 0.05; says why when the unadjusted interval excludes 0 but the adjusted p does not pass. */
function deltaVerdict(d: GroupDelta): string {
  const significant = d.significant ?? d.pValue < SIGNIFICANCE_LEVEL;
  if (significant) return "significant";
  if (d.pAdjusted !== undefined && d.pValue < SIGNIFICANCE_LEVEL)
    return `not significant after Holm (the unadjusted 95% CI excludes 0, raw p=${fmtP(d.pValue)}, but adjusted p=${fmtP(d.pAdjusted)} in a family of ${d.familySize ?? 1})`;
  return "not significant";
}

/** A delta's interval with explicit signs: `[−0.141, +0.006]`. */
function fmtSignedCI(ci: [number, number] | undefined): string {
  return ci === undefined ? "(no CI)" : `[${fmtSigned(ci[0])}, ${fmtSigned(ci[1])}]`;
}

function deltaCases(n: number | undefined): string {
  return n === undefined ? "" : ` (${n} case${n === 1 ? "" : "s"})`;
}

function fmtPs(d: GroupDelta): string {
  return d.pAdjusted === undefined ? `p=${fmtP(d.pValue)}` : `p=${fmtP(d.pValue)} adj=${fmtP(d.pAdjusted)} m=${d.familySize ?? 1}`;
}

function deltaText(d: GroupDelta, k: number): string {
  return `${metricLabel(d.key, k)} ${d.split} ${d.group} ${fmtSigned(d.diff)} vs ${d.reference} (${f3(d.meanGroup)} n=${d.nGroup}${deltaCases(d.nCasesGroup)} vs ${f3(d.meanReference)} n=${d.nReference}${deltaCases(d.nCasesReference)}) ${d.ci95 === undefined ? "" : `CI ${fmtSignedCI(d.ci95)} `}${fmtPs(d)} ${deltaVerdict(d)}`;
}

/** Splits other than kind and locale (e.g. tune / holdout), in the report's order. */
function extraSplits(report: Report): [string, Record<string, Record<string, Aggregate>>][] {
  return Object.entries(report.splits).filter(
    (e): e is [string, Record<string, Record<string, Aggregate>>] => e[0] !== "kind" && e[0] !== "locale" && e[1] !== undefined,
  );
}

function chanceWarnings(report: Report): string[] {
  return report.chance?.warnings ?? [];
}

// ---------------------------------------------------------------- stdout table

const ANSI = { bold: "\x1b[1m", dim: "\x1b[2m", red: "\x1b[31m", green: "\x1b[32m", yellow: "\x1b[33m", reset: "\x1b[0m" } as const;

type Paint = (style: keyof typeof ANSI, s: string) => string;

function painter(color: boolean): Paint {
  return color ? (style, s) => `${ANSI[style]}${s}${ANSI.reset}` : (_style, s) => s;
}

/** Columns padded on the visible text, then painted (so colour codes do not break alignment). */
function grid(rows: { cells: string[]; style?: (keyof typeof ANSI | undefined)[] }[], paint: Paint): string[] {
  const widths: number[] = [];
  for (const r of rows) r.cells.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, [...c].length)));
  return rows.map((r) =>
    r.cells
      .map((c, i) => {
        const padded = i === r.cells.length - 1 ? c : c + " ".repeat((widths[i] ?? 0) - [...c].length);
        const style = r.style?.[i];
        return style === undefined ? padded : paint(style, padded);
      })
      .join("  ")
      .trimEnd(),
  );
}

function splitGrid(report: Report, title: string, groups: [string, Record<string, Aggregate> | undefined][], paint: Paint, headline = true): string[] {
  const k = report.run.k;
  const header = { cells: [title, ...groups.map(([g]) => g)], style: [title, ...groups].map(() => "bold" as const) };
  const rows = reportKeys(report).map((key) => {
    const cells = [headline ? rowLabel(report, key, metricLabel(key, k)) : metricLabel(key, k), ...groups.map(([, agg]) => cell(report, agg, key, !headline))];
    const vac = report.vacuous.includes(key);
    return { cells, style: cells.map((_, i) => (i > 0 && vac ? ("yellow" as const) : undefined)) };
  });
  return grid([header, ...rows], paint);
}

/**
 * Compact stdout summary: run line and embedder, overall + golden/adversarial,
 * per locale, locale deltas with their tests, missed turns, notes, gate.
 * Colour only when `color` is true (the caller applies NO_COLOR / TTY rules).
 */
export function renderTable(report: Report, opts: { color: boolean }): string {
  const paint = painter(opts.color);
  const { run } = report;
  const lines: string[] = [];
  lines.push(
    `${paint("bold", "retrace")}  k=${run.k}  store=${run.store}${run.mode !== undefined ? `  mode=${run.mode}` : ""}${run.rerank !== undefined ? `  rerank=${run.rerank ?? "off"}` : ""}  dataset=${run.datasetHash.slice(0, 12)}  kb=${run.kbHash.slice(0, 12)}${report.timings !== undefined ? `  ${(report.timings.durationMs / 1000).toFixed(1)} s` : ""}`,
  );
  lines.push(`embedder: ${embedderText(report)}`);
  lines.push(...graphHeaderLines(report));
  const answerer = answererText(report);
  if (answerer !== null) lines.push(`answerer: ${answerer}`);
  lines.push(`turns: ${report.turns.length} (${kindCounts(report)}); gold-bearing: ${goldBearing(report)}`);
  lines.push("");
  const kinds = Object.entries(report.splits.kind);
  lines.push(...splitGrid(report, "metric", [["all", report.aggregates], ...kinds], paint));
  const locales = Object.entries(report.splits.locale);
  if (locales.length > 0) {
    lines.push("");
    lines.push(...splitGrid(report, "metric", locales, paint));
  }
  for (const [name, groups] of extraSplits(report)) {
    lines.push("");
    // The tune/holdout part shows every key per part, answer-side included (docs/holdout.md).
    if (name === "part") lines.push(...splitGrid(report, "metric", PART_LABELS.map(([p, label]) => [label, groups[p]]), paint, false));
    else lines.push(...splitGrid(report, `metric (${name})`, Object.entries(groups), paint));
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

  lines.push("");
  if (report.vacuous.includes(HIT_KEY)) {
    lines.push(`missed turns: ${vacuousText(report.vacuousReasons[HIT_KEY] ?? "not measured")}`);
  } else {
    const missed = missedTurns(report);
    lines.push(paint("bold", `missed turns (no gold card in the top-${run.k}): ${missed.length}`));
    for (const t of missed) {
      lines.push(`  ${paint("red", turnId(t))} ${t.locale} ${t.kind}  ${JSON.stringify(t.user)}`);
      lines.push(`    gold=${ids(t.gold)} top${run.k}=${ids(t.retrievedIds ?? [])}`);
      const where = goldPositionsText(t);
      if (where !== "") lines.push(`    gold by stage: ${where}`);
    }
  }

  const graphNotes = graphTurnNotes(report);
  if (graphNotes.length > 0) lines.push("", ...graphNotes);
  lines.push("");
  lines.push(paint("dim", `note: ${RECALL_NOTE}`));
  const sideNote = answerSideNote(report);
  if (sideNote !== null) lines.push(paint("dim", `note: ${sideNote}`));
  lines.push(paint("dim", `note: ${ciMethod(report)} turns are caseId#turn, turn 0-based.`));
  lines.push("");
  lines.push(...gateLines(report, paint));
  return `${lines.join("\n")}\n`;
}

function gateLines(report: Report, paint: Paint): string[] {
  const g = report.gate;
  if (g === null) return ["gate: not evaluated"];
  const checks = g.checks ?? [];
  const lines: string[] = [];
  if (g.passed) lines.push(`gate: ${paint("green", "PASS")}${g.checks !== undefined && checks.length === 0 ? " (no floor or baseline check was set)" : ""}`);
  else {
    lines.push(`gate: ${paint("red", "FAIL")} (${g.failures.length} failure${g.failures.length === 1 ? "" : "s"})`);
    lines.push(...g.failures.map((f) => `  - [${f.kind}] ${f.reason}`));
  }
  if (g.tolerance !== undefined) lines.push(`  baseline tolerance: ${g.tolerance.maxDrop} (${g.tolerance.source})`);
  const passed = checks.filter((c) => c.verdict === "pass");
  const shown = passed.slice(0, 6).map((c) => `${c.option} ${c.scope === "all" ? c.key : `${c.key}[${c.scope}]`}`);
  if (passed.length > 6) shown.push(`… and ${passed.length - 6} more (every check is in the JSON report's gate.checks)`);
  if (passed.length > 0) lines.push(`  passed checks (${passed.length}): ${shown.join("; ")}`);
  return lines;
}

// ---------------------------------------------------------------- markdown

/** Escape text for a markdown table cell: pipes, newlines and HTML-significant characters. */
function md(s: string): string {
  return s
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/\|/g, "\\|")
    .replace(/\r?\n/g, " ");
}

function mdTable(header: string[], rows: string[][]): string[] {
  return [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)];
}

function mdSplit(report: Report, groups: [string, Record<string, Aggregate> | undefined][], headline = true): string[] {
  const k = report.run.k;
  return mdTable(
    ["metric", ...groups.map(([g]) => md(g))],
    reportKeys(report).map((key) => [
      md(headline ? rowLabel(report, key, metricLabel(key, k)) : metricLabel(key, k)),
      ...groups.map(([, agg]) => md(cell(report, agg, key, !headline))),
    ]),
  );
}

/** The report as a markdown document (for PR comments and CI summaries). */
export function renderMarkdown(report: Report): string {
  const { run } = report;
  const k = run.k;
  const out: string[] = ["# retrace report", ""];
  out.push(
    ...mdTable(
      ["run", ""],
      [
        ["dataset hash", `\`${md(run.datasetHash)}\``],
        ["KB hash", `\`${md(run.kbHash)}\``],
        ["embedder", md(embedderText(report))],
        ...(answererText(report) !== null ? [["answerer", md(answererText(report) as string)]] : []),
        ["k", String(k)],
        ["store", md(run.store)],
        ...(run.mode !== undefined ? [["mode", md(run.mode)]] : []),
        ...(run.rerank !== undefined ? [["rerank", md(run.rerank ?? "off")]] : []),
        ...(report.timings !== undefined
          ? [
              ["started", md(report.timings.started)],
              ["duration", `${(report.timings.durationMs / 1000).toFixed(1)} s`],
            ]
          : []),
        ["turns", `${report.turns.length} (${md(kindCounts(report))}); gold-bearing ${goldBearing(report)}`],
      ],
    ),
  );
  const graphLines = [...graphHeaderLines(report), ...graphTurnNotes(report)];
  if (graphLines.length > 0) out.push("", "```", ...graphLines, "```");

  out.push("", "## Overall", "");
  out.push(
    ...mdTable(
      ["metric", "mean", `95% CI (${report.bootstrap?.unit ?? "turn"}s resampled)`, "n turns", "n cases", "chance"],
      reportKeys(report).map((key) => {
        const label = md(rowLabel(report, key, metricLabel(key, k)));
        if (report.vacuous.includes(key)) return [label, md(vacuousText(report.vacuousReasons[key] ?? "not measured")), "", "0", "0", ""];
        const agg = report.aggregates[key];
        return agg === undefined
          ? [label, "—", "", "0", "0", ""]
          : [label, f3(agg.mean), md(fmtCI(agg.ci95)), String(agg.n), agg.nCases === undefined ? "" : String(agg.nCases), agg.chance === undefined ? "" : f3(agg.chance)];
      }),
    ),
  );

  out.push("", "## By kind", "");
  out.push(...mdSplit(report, Object.entries(report.splits.kind)));
  out.push("", "## By locale", "");
  out.push(...mdSplit(report, Object.entries(report.splits.locale)));
  for (const [name, groups] of extraSplits(report)) {
    if (name === "part") {
      out.push("", "## By part (tune / holdout)", "");
      out.push(...mdSplit(report, PART_LABELS.map(([p, label]) => [label, groups[p]]), false));
    } else {
      out.push("", `## By ${md(name)}`, "");
      out.push(...mdSplit(report, Object.entries(groups)));
    }
  }
  const deltas = report.deltas ?? [];
  if (deltas.length > 0) {
    out.push("", `Split deltas (${md(deltaMethod(report))}):`, "");
    out.push(
      ...mdTable(
        ["metric", "split", "group", "vs", "diff", "95% CI", "n turns", "n cases", "raw p", "adjusted p", "family size", "verdict"],
        deltas.map((d) => [
          md(metricLabel(d.key, k)),
          md(d.split),
          md(d.group),
          md(d.reference),
          fmtSigned(d.diff),
          md(fmtSignedCI(d.ci95)),
          `${d.nGroup} vs ${d.nReference}`,
          d.nCasesGroup === undefined ? "" : `${d.nCasesGroup} vs ${d.nCasesReference ?? ""}`,
          fmtP(d.pValue),
          d.pAdjusted === undefined ? "" : fmtP(d.pAdjusted),
          d.familySize === undefined ? "" : String(d.familySize),
          md(deltaVerdict(d)),
        ]),
      ),
    );
  } else if (Object.keys(report.splits.locale).length > 1) {
    out.push("", "Locale deltas are indicative only: this report has no significance test for them.");
  }

  if (chanceWarnings(report).length > 0) {
    out.push("", "## Warnings", "");
    for (const w of chanceWarnings(report)) out.push(`- ${md(w)}`);
  }

  if (report.vacuous.length > 0) {
    out.push("", "## Not measured", "");
    for (const key of report.vacuous) out.push(`- \`${key}\`: ${md(vacuousText(report.vacuousReasons[key] ?? "not measured"))}`);
  }

  out.push("", "## Missed turns", "");
  if (report.vacuous.includes(HIT_KEY)) {
    out.push(`Retrieval was ${md(vacuousText(report.vacuousReasons[HIT_KEY] ?? "not measured"))}.`);
  } else {
    const missed = missedTurns(report);
    if (missed.length === 0) out.push(`None: every gold-bearing turn had a gold card in the top-${k}.`);
    else {
      out.push(`${missed.length} gold-bearing turn${missed.length === 1 ? "" : "s"} with no gold card in the top-${k}:`, "");
      out.push(
        ...mdTable(
          ["turn", "locale", "kind", "query", "gold", `top-${k}`, "gold by stage"],
          missed.map((t) => [
            `\`${md(turnId(t))}\``,
            md(t.locale),
            md(t.kind),
            md(t.user),
            md(ids(t.gold)),
            md(ids(t.retrievedIds ?? [])),
            md(goldPositionsText(t)),
          ]),
        ),
      );
    }
  }

  out.push("", "## Gate", "");
  const g = report.gate;
  if (g === null) out.push("Not evaluated.");
  else if (g.passed) out.push(g.checks !== undefined && g.checks.length === 0 ? "**PASS** (no floor or baseline check was set)" : "**PASS**");
  else {
    out.push(`**FAIL** (${g.failures.length} failure${g.failures.length === 1 ? "" : "s"})`, "");
    for (const f of g.failures) out.push(`- \`${f.kind}\` ${md(f.reason)}`);
  }
  if (g !== null && (g.checks ?? []).length > 0) {
    out.push("", ...mdTable(["check", "scope", "verdict", "reason"], (g.checks ?? []).map((c) => [md(c.option), md(c.scope), c.verdict, md(c.reason)])));
  }

  const sideNote = answerSideNote(report);
  out.push("", "## Notes", "", `- ${RECALL_NOTE}`, ...(sideNote !== null ? [`- ${md(sideNote)}`] : []), `- ${ciMethod(report)}`, "- Turns are `caseId#turn`, turn 0-based.", "");
  return out.join("\n");
}

// ---------------------------------------------------------------- JUnit XML

/**
 * Escape text for XML 1.0 attribute values and character data: `& < > " '`
 * become entities, and characters XML 1.0 forbids (C0 controls other than
 * tab/LF/CR, U+FFFE/U+FFFF, lone surrogates) are replaced with U+FFFD.
 */
export function xmlEscape(s: string): string {
  return s
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

function attrs(a: Record<string, string | number>): string {
  return Object.entries(a)
    .map(([k, v]) => ` ${k}="${xmlEscape(String(v))}"`)
    .join("");
}

/**
 * JUnit XML that mirrors the gate (docs/gates-and-exit-codes.md): a
 * testcase fails exactly when the gate fails because of it, so a CI
 * dashboard is red exactly when the exit code is 1.
 *
 * - Suite `retrace.gate`: one testcase per check the gate made (each floor
 *   per scope, each baseline drop per scope, the flips count), failed when
 *   its verdict is not "pass", with the gate's reason as the message.
 * - Suite `retrace.turns`: one testcase per gold-bearing turn (classname
 *   `retrace.<locale>.<kind>`, name `caseId#turn: query`). A turn fails only
 *   when a failed `--max-flips` check counted it (its hit@k went 1 → 0). A
 *   miss (hit@k = 0) that no check gates is reported in the testcase's
 *   <system-out> (the evaluator's comment and where the gold went), not as a
 *   failure. A turn whose retrieval was not measured is <skipped> with the
 *   reason.
 */
export function renderJUnit(report: Report): string {
  const k = report.run.k;
  // Wall-clock figures come from the report's `timings` section (docs/determinism.md).
  const suiteTime: Record<string, string> = report.timings !== undefined ? { time: (report.timings.durationMs / 1000).toFixed(3) } : {};
  const timestamp: Record<string, string> = report.timings !== undefined ? { timestamp: report.timings.started } : {};
  const g = report.gate;

  const gateCases: string[] = [];
  let gateFailures = 0;
  for (const c of g?.checks ?? []) {
    const a = { classname: `retrace.gate.${c.kind}`, name: `${c.option}: ${c.scope === "all" ? c.key : `${c.key}[${c.scope}]`}` };
    if (c.verdict === "pass") gateCases.push(`    <testcase${attrs(a)}>\n      <system-out>${xmlEscape(c.reason)}</system-out>\n    </testcase>`);
    else {
      gateFailures++;
      gateCases.push(`    <testcase${attrs(a)}>\n      <failure${attrs({ message: c.reason, type: c.verdict === "not_measured" ? "not_measured" : c.kind })}/>\n    </testcase>`);
    }
  }

  const flipsFailed = (g?.checks ?? []).some((c) => c.kind === "flips" && c.verdict !== "pass");
  const flipped = new Set(flipsFailed ? (g?.flips ?? []).map((f) => turnId(f)) : []);
  const turnCases: string[] = [];
  let turnFailures = 0;
  let skipped = 0;
  for (const t of report.turns) {
    if (t.gold.length === 0) continue;
    const hit = t.results.find((r) => r.key === HIT_KEY);
    const total = report.timings?.turns[turnId(t)]?.total;
    const a: Record<string, string | number> = { classname: `retrace.${t.locale}.${t.kind}`, name: `${turnId(t)}: ${t.user}` };
    if (total !== undefined) a.time = (total / 1000).toFixed(3);
    if (hit === undefined) {
      skipped++;
      const reason =
        t.error !== undefined
          ? `not run: the graph run threw: ${t.error}`
          : t.noRetrieval === true
            ? "no retrieval captured"
            : (report.vacuousReasons[HIT_KEY] ?? (t.retrievedIds === null ? "no store" : "no hit@k result"));
      turnCases.push(`    <testcase${attrs(a)}>\n      <skipped${attrs({ message: vacuousText(reason) })}/>\n    </testcase>`);
      continue;
    }
    const body = [
      `query: ${t.user}`,
      `gold: ${ids(t.gold)}`,
      `top${k}: ${ids(t.retrievedIds ?? [])}`,
      ...(goldPositionsText(t) !== "" ? [`gold by stage: ${goldPositionsText(t)}`] : []),
    ].join("\n");
    if (flipped.has(turnId(t))) {
      turnFailures++;
      const message = `hit@${k} went from 1 (baseline) to 0: ${hit.comment ?? ""}`.trimEnd();
      turnCases.push(`    <testcase${attrs(a)}>\n      <failure${attrs({ message, type: "flips" })}>${xmlEscape(body)}</failure>\n    </testcase>`);
    } else if (hit.score === 0) {
      turnCases.push(`    <testcase${attrs(a)}>\n      <system-out>${xmlEscape(`miss (not gated): ${hit.comment ?? `hit@${k}=0`}\n${body}`)}</system-out>\n    </testcase>`);
    } else {
      turnCases.push(`    <testcase${attrs(a)}/>`);
    }
  }

  const props = [
    ["datasetHash", report.run.datasetHash],
    ["kbHash", report.run.kbHash],
    ["embedder", report.run.embedder ?? "none"],
    ["k", String(k)],
    ["store", report.run.store],
    ["gate", g === null ? "not evaluated" : g.passed ? "pass" : "fail"],
    ["missedTurns", String(missedTurns(report).length)],
  ]
    .map(([name, value]) => `      <property${attrs({ name: name as string, value: value as string })}/>`)
    .join("\n");
  const gateCounts = { tests: gateCases.length, failures: gateFailures, errors: 0, skipped: 0 };
  const turnCounts = { tests: turnCases.length, failures: turnFailures, errors: 0, skipped };
  const all = { tests: gateCases.length + turnCases.length, failures: gateFailures + turnFailures, errors: 0, skipped };
  const suite = (name: string, counts: Record<string, number>, cases: string[]) => [
    `  <testsuite${attrs({ name, ...counts, ...timestamp, ...suiteTime })}>`,
    `    <properties>\n${props}\n    </properties>`,
    ...cases,
    `  </testsuite>`,
  ];
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites${attrs({ name: "retrace", ...all, ...suiteTime })}>`,
    ...suite("retrace.gate", gateCounts, gateCases),
    ...suite(`retrace.turns.hit_at_${k}`, turnCounts, turnCases),
    `</testsuites>`,
    "",
  ].join("\n");
}
