/**
 * Renderings of ONE Report (DESIGN.md §3.5): JSON, markdown, a compact stdout
 * table and JUnit XML. Nothing here computes a metric, a mean or an interval:
 * every number comes from the report object, so the renderings cannot
 * disagree with each other or with `--json`.
 *
 * Conventions of every rendering:
 * - each aggregate is shown with its n and its 95% interval;
 * - a vacuous key is shown as "not measured (<reason>)" (or "not run: ...")
 *   instead of a number;
 * - recall@k is labelled a lower bound (gold is disjunctive);
 * - turns are identified as `caseId#turn`, turn 0-based (the baseline's key).
 */
import {
  CITATION_CORRECTNESS_KEY,
  CITATION_COVERAGE_KEY,
  GROUNDEDNESS_KEY,
  NOT_RUN_PREFIX,
  REFUSAL_CORRECTNESS_KEY,
} from "./evaluators.js";
import { METRICS } from "./metrics.js";
import type { Aggregate, GroupDelta, Report, TurnReport } from "./types.js";

const HIT_KEY = "retrieval_hit_at_k";
const RECALL_KEY = "retrieval_recall_at_k";
/** p-value below which a locale delta is called significant. */
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

/** `0.812 [0.745, 0.871] n=134` */
function fmtAgg(agg: Aggregate): string {
  return `${f3(agg.mean)} ${fmtCI(agg.ci95)} n=${agg.n}`;
}

/** The cell of `key` in a group: its aggregate, the vacuous text, or "— n=0". */
function cell(report: Report, group: Record<string, Aggregate> | undefined, key: string): string {
  const reason = report.vacuousReasons[key];
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
  return b === undefined
    ? "intervals: 95% percentile bootstrap of the mean (seeded); (no CI) when n < 2."
    : `intervals: 95% percentile bootstrap of the mean, ${b.samples} resamples, seed ${b.seed}; (no CI) when n < 2.`;
}

function deltaVerdict(d: GroupDelta): string {
  return d.pValue < SIGNIFICANCE_LEVEL ? "significant" : "not significant";
}

function deltaText(d: GroupDelta, k: number): string {
  return `${metricLabel(d.key, k)} ${d.group} ${fmtSigned(d.diff)} vs ${d.reference} (${f3(d.meanGroup)} n=${d.nGroup} vs ${f3(d.meanReference)} n=${d.nReference}) ${d.ci95 === undefined ? "" : `CI ${fmtCI(d.ci95)} `}p=${fmtP(d.pValue)} ${deltaVerdict(d)}`;
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

function splitGrid(report: Report, title: string, groups: [string, Record<string, Aggregate> | undefined][], paint: Paint): string[] {
  const k = report.run.k;
  const header = { cells: [title, ...groups.map(([g]) => g)], style: [title, ...groups].map(() => "bold" as const) };
  const rows = reportKeys(report).map((key) => {
    const cells = [metricLabel(key, k), ...groups.map(([, agg]) => cell(report, agg, key))];
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
  lines.push(`turns: ${report.turns.length} (${kindCounts(report)}); gold-bearing: ${goldBearing(report)}`);
  lines.push("");
  const kinds = Object.entries(report.splits.kind);
  lines.push(...splitGrid(report, "metric", [["all", report.aggregates], ...kinds], paint));
  const locales = Object.entries(report.splits.locale);
  if (locales.length > 0) {
    lines.push("");
    lines.push(...splitGrid(report, "metric", locales, paint));
  }

  const deltas = report.deltas ?? [];
  if (deltas.length > 0) {
    lines.push("");
    lines.push(paint("bold", `locale deltas (two-sample permutation test; significant when p < ${SIGNIFICANCE_LEVEL}):`));
    for (const d of deltas) lines.push(`  ${deltaText(d, run.k)}`);
  } else if (locales.length > 1) {
    lines.push("");
    lines.push("locale deltas are indicative only: no significance test in this report.");
  }

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

  lines.push("");
  lines.push(paint("dim", `note: ${RECALL_NOTE}`));
  lines.push(paint("dim", `note: ${ciMethod(report)} turns are caseId#turn, turn 0-based.`));
  lines.push("");
  lines.push(...gateLines(report, paint));
  return `${lines.join("\n")}\n`;
}

function gateLines(report: Report, paint: Paint): string[] {
  const g = report.gate;
  if (g === null) return ["gate: not evaluated"];
  if (g.passed) return [`gate: ${paint("green", "PASS")}`];
  return [
    `gate: ${paint("red", "FAIL")} (${g.failures.length} failure${g.failures.length === 1 ? "" : "s"})`,
    ...g.failures.map((f) => `  - [${f.kind}] ${f.reason}`),
  ];
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

function mdSplit(report: Report, groups: [string, Record<string, Aggregate> | undefined][]): string[] {
  const k = report.run.k;
  return mdTable(
    ["metric", ...groups.map(([g]) => md(g))],
    reportKeys(report).map((key) => [md(metricLabel(key, k)), ...groups.map(([, agg]) => md(cell(report, agg, key)))]),
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

  out.push("", "## Overall", "");
  out.push(
    ...mdTable(
      ["metric", "mean", "95% CI", "n"],
      reportKeys(report).map((key) => {
        const label = md(metricLabel(key, k));
        if (report.vacuous.includes(key)) return [label, md(vacuousText(report.vacuousReasons[key] ?? "not measured")), "", "0"];
        const agg = report.aggregates[key];
        return agg === undefined ? [label, "—", "", "0"] : [label, f3(agg.mean), md(fmtCI(agg.ci95)), String(agg.n)];
      }),
    ),
  );

  out.push("", "## By kind", "");
  out.push(...mdSplit(report, Object.entries(report.splits.kind)));
  out.push("", "## By locale", "");
  out.push(...mdSplit(report, Object.entries(report.splits.locale)));
  const deltas = report.deltas ?? [];
  if (deltas.length > 0) {
    out.push("", `Locale deltas, two-sample permutation test (significant when p < ${SIGNIFICANCE_LEVEL}):`, "");
    out.push(
      ...mdTable(
        ["metric", "locale", "vs", "diff", "95% CI", "n", "p", "verdict"],
        deltas.map((d) => [
          md(metricLabel(d.key, k)),
          md(d.group),
          md(d.reference),
          fmtSigned(d.diff),
          md(fmtCI(d.ci95)),
          `${d.nGroup} vs ${d.nReference}`,
          fmtP(d.pValue),
          deltaVerdict(d),
        ]),
      ),
    );
  } else if (Object.keys(report.splits.locale).length > 1) {
    out.push("", "Locale deltas are indicative only: this report has no significance test for them.");
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
  else if (g.passed) out.push("**PASS**");
  else {
    out.push(`**FAIL** (${g.failures.length} failure${g.failures.length === 1 ? "" : "s"})`, "");
    for (const f of g.failures) out.push(`- \`${f.kind}\` ${md(f.reason)}`);
  }

  out.push("", "## Notes", "", `- ${RECALL_NOTE}`, `- ${ciMethod(report)}`, "- Turns are `caseId#turn`, turn 0-based.", "");
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
 * JUnit XML: one <testcase> per gold-bearing turn (classname
 * `retrace.<locale>.<kind>`, name `caseId#turn: query`). A turn whose hit@k
 * is 0 fails, with the evaluator's comment as the message and the gold
 * positions as the body; a turn whose retrieval was not measured is
 * <skipped> with the reason.
 */
export function renderJUnit(report: Report): string {
  const k = report.run.k;
  const cases: string[] = [];
  let failures = 0;
  let skipped = 0;
  for (const t of report.turns) {
    if (t.gold.length === 0) continue;
    const hit = t.results.find((r) => r.key === HIT_KEY);
    const total = report.timings?.turns[turnId(t)]?.total;
    const a: Record<string, string | number> = { classname: `retrace.${t.locale}.${t.kind}`, name: `${turnId(t)}: ${t.user}` };
    if (total !== undefined) a.time = (total / 1000).toFixed(3);
    if (hit === undefined) {
      skipped++;
      const reason = report.vacuousReasons[HIT_KEY] ?? (t.retrievedIds === null ? "no store" : "no hit@k result");
      cases.push(`    <testcase${attrs(a)}>\n      <skipped${attrs({ message: vacuousText(reason) })}/>\n    </testcase>`);
    } else if (hit.score === 0) {
      failures++;
      const message = hit.comment ?? `hit@${k}=0`;
      const body = [
        `query: ${t.user}`,
        `gold: ${ids(t.gold)}`,
        `top${k}: ${ids(t.retrievedIds ?? [])}`,
        ...(goldPositionsText(t) !== "" ? [`gold by stage: ${goldPositionsText(t)}`] : []),
      ].join("\n");
      cases.push(
        `    <testcase${attrs(a)}>\n      <failure${attrs({ message, type: `${HIT_KEY}` })}>${xmlEscape(body)}</failure>\n    </testcase>`,
      );
    } else {
      cases.push(`    <testcase${attrs(a)}/>`);
    }
  }
  const tests = cases.length;
  const counts = { tests, failures, errors: 0, skipped };
  const suiteTime: Record<string, string> = report.timings !== undefined ? { time: (report.timings.durationMs / 1000).toFixed(3) } : {};
  const props = [
    ["datasetHash", report.run.datasetHash],
    ["kbHash", report.run.kbHash],
    ["embedder", report.run.embedder ?? "none"],
    ["k", String(k)],
    ["store", report.run.store],
    ["gate", report.gate === null ? "not evaluated" : report.gate.passed ? "pass" : "fail"],
  ]
    .map(([name, value]) => `      <property${attrs({ name: name as string, value: value as string })}/>`)
    .join("\n");
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites${attrs({ name: "retrace", ...counts, ...suiteTime })}>`,
    `  <testsuite${attrs({ name: `retrace.retrieval.hit_at_${k}`, ...counts, ...(report.timings !== undefined ? { timestamp: report.timings.started } : {}), ...suiteTime })}>`,
    `    <properties>\n${props}\n    </properties>`,
    ...cases,
    `  </testsuite>`,
    `</testsuites>`,
    "",
  ].join("\n");
}
