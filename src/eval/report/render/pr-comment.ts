/**
 * The pull-request comment of a run (`--out pr-comment:FILE`, docs/ci.md): a
 * concise markdown body — the gate verdict and its failures, the metric
 * deltas against the baseline with their paired intervals (answer-side rows
 * on the held-out turns), the hit@k flips both ways, the stage funnel (and
 * its change when the reference is a report), and the turns whose recall@k
 * or nDCG@k moved while hit@k held. Every delta, interval, verdict, flip and
 * moved turn (in its order) is the Comparison src/eval/gate/compare.ts
 * computed (../comparison.ts; `referenceComparison` for a run and its
 * baseline, `buildComparison` for `retrace compare`): the comment computes
 * none of them.
 *
 * Every list is cut with "… and N more", every quoted text is shortened, and
 * the body as a whole is kept under MAX_COMMENT_CHARS (GitHub refuses a
 * comment over 65,536 characters), whatever the size of the run. Pure and
 * deterministic: the same report and baseline give the same body.
 */
import type { Comparison, FunnelCount, MovedTurn } from "../comparison.js";
import { HIT_KEY } from "../../measures/metrics.js";
import { turnKey } from "../../stats/bootstrap.js";
import { f3, fmtCI, fmtP, fmtSigned, metricLabel, quarantineText, reportKeys, retrieverText } from "./shared.js";
import type { Report } from "../types.js";
import { mdCode, mdText } from "./markdown-escape.js";

/** GitHub's limit on an issue or pull-request comment body, in characters. */
export const GITHUB_COMMENT_LIMIT = 65_536;
/** The body is kept under this many characters (a margin under the limit for a marker a workflow may add). */
export const MAX_COMMENT_CHARS = 60_000;

/** How many entries each list shows before "… and N more". */
export const COMMENT_LIST_LIMITS = { failures: 10, flips: 20, moved: 10 } as const;

export interface PrCommentOptions {
  /**
   * The comparison with the reference run (A; this run is B), computed once
   * by src/eval/gate/compare.ts (`referenceComparison(report, reference,
   * { seed })`, or `retrace compare`'s `buildComparison`); null = no reference.
   */
  comparison: Comparison | null;
  /** The reference when it is a full report: its stage funnel is compared too (a baseline holds none). */
  referenceReport?: Report | null;
  /** How the comment names the run (e.g. `retrace eval`, the report file). */
  title?: string;
}

/** Text for a markdown table cell or list item: one line, shown as text, never markdown or HTML (src/eval/report/render/markdown-escape.ts), at most `max` characters. */
function md(s: string, max = 160): string {
  return mdText(s, max);
}

function more(n: number, what: string): string[] {
  return n > 0 ? [`- … and ${n} more ${what}`] : [];
}

function verdictLines(report: Report): string[] {
  const g = report.gate;
  if (g === null)
    return [
      report.shard !== undefined
        ? "**Gate: not evaluated** (a partial report of one shard; the merged report gates)"
        : "**Gate: not evaluated**",
    ];
  const lines: string[] = [];
  if (g.passed)
    lines.push(
      `**Gate: ✅ PASS**${(g.checks ?? []).length === 0 ? " (no floor or baseline check was set)" : ` (${(g.checks ?? []).length} checks)`}`,
    );
  else {
    lines.push(`**Gate: ❌ FAIL** (${g.failures.length} failure${g.failures.length === 1 ? "" : "s"})`, "");
    for (const f of g.failures.slice(0, COMMENT_LIST_LIMITS.failures))
      lines.push(`- \`${f.kind}\` ${md(f.reason, 300)}`);
    lines.push(...more(g.failures.length - COMMENT_LIST_LIMITS.failures, "failures (the report's gate.failures)"));
  }
  if (g.tolerance !== undefined)
    lines.push("", `Baseline tolerance: ${g.tolerance.maxDrop} (${md(g.tolerance.source)}).`);
  if (g.dropTest !== undefined) lines.push("", `Baseline drop test: ${md(g.dropTest.description, 400)}.`);
  const q = quarantineText(report);
  if (q !== null) lines.push("", md(q, 300));
  return lines;
}

function metricLines(report: Report, c: Comparison | null): string[] {
  const k = report.run.k;
  if (c === null) {
    const lines = ["| metric | mean | 95% CI | n turns |", "|---|---|---|---|"];
    for (const key of reportKeys(report)) {
      const a = report.aggregates[key];
      if (a !== undefined) lines.push(`| ${md(metricLabel(key, k))} | ${f3(a.mean)} | ${fmtCI(a.ci95)} | ${a.n} |`);
    }
    return ["### Metrics", "", "No reference run: no deltas (give `--baseline` to compare).", "", ...lines];
  }
  const rows = c.comparisons;
  const unit = c.method.unit;
  const lines = [
    `| metric | reference | this run | Δ | 95% CI (${unit}s) | p | verdict | n turns |`,
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    const ci = r.ci95 === null ? `(< 2 ${r.unit}s)` : `[${fmtSigned(r.ci95[0])}, ${fmtSigned(r.ci95[1])}]`;
    const label = `${metricLabel(r.key, k)}${r.turns === "holdout" ? " (held-out)" : ""}`;
    lines.push(
      `| ${md(label)} | ${f3(r.meanA)} | ${f3(r.meanB)} | ${r.significant ? "**" : ""}${fmtSigned(r.diff)}${r.significant ? "**" : ""} | ${ci} | ${fmtP(r.pValue)} | ${r.verdict} | ${r.n} |`,
    );
  }
  return [
    "### Metrics against the reference",
    "",
    ...lines,
    "",
    `**Bold**: significant. Answer-side rows (held-out) are on the held-out turns, as \`retrace eval\` reports them. ${md(c.note.join(" "), 600)}`,
  ];
}

function flipLinesOf(flips: Comparison["flips"], report: Report): string[] {
  const k = report.run.k;
  const q = new Set((report.gate?.quarantine?.turns ?? []).map((t) => turnKey(t.caseId, t.turn)));
  const byId = new Map(report.turns.map((t) => [turnKey(t.caseId, t.turn), t]));
  const lost = flips.turns.filter((f) => f.direction === "hit→miss");
  const gained = flips.turns.filter((f) => f.direction === "miss→hit");
  const lines = [`### ${metricLabel(HIT_KEY, k)} flips: ${flips.hitToMiss} hit→miss, ${flips.missToHit} miss→hit`];
  for (const [label, list] of [
    ["hit→miss", lost],
    ["miss→hit", gained],
  ] as const) {
    if (list.length === 0) continue;
    lines.push("", `**${label}**`, "");
    for (const f of list.slice(0, COMMENT_LIST_LIMITS.flips)) {
      const t = byId.get(f.id);
      const detail =
        t === undefined
          ? ""
          : ` — “${md(t.user, 80)}” gold [${md(t.gold.join(", "), 80)}] top [${md((t.retrievedIds ?? []).join(", "), 120)}]`;
      lines.push(`- ${mdCode(f.id, 120)} (${md(f.locale ?? "?")})${q.has(f.id) ? " *(quarantined)*" : ""}${detail}`);
    }
    lines.push(
      ...more(list.length - COMMENT_LIST_LIMITS.flips, `${label} turns (\`retrace compare --json\` lists them all)`),
    );
  }
  return lines;
}

/** A share as a percentage with one decimal (formatting only: the share is the report's). */
const pct = (share: number, n: number) => (n === 0 ? "—" : `${(100 * share).toFixed(1)}%`);

/** The report's stage funnel (src/eval/report/funnel-stats.ts), and its change against the reference report's as the comparison computed it (`funnelChange`): present / n per stage, as each report counted them. */
function funnelLines(report: Report, c: Comparison | null): string[] {
  const now = report.funnel?.stages ?? [];
  if (now.length === 0) return [];
  const change = c?.funnelChange;
  if (change === undefined) {
    const lines = ["| stage | gold-bearing turns with gold | share |", "|---|---|---|"];
    for (const r of now) lines.push(`| ${md(r.label)} | ${r.present} / ${r.n} | ${pct(r.share, r.n)} |`);
    return [
      "### Stage funnel",
      "",
      ...lines,
      "",
      "No reference report: the funnel's change needs one (`retrace compare A.json B.json --out pr-comment:FILE`).",
    ];
  }
  const side = (x: FunnelCount | null) => (x === null ? "—" : `${x.present} / ${x.n} (${pct(x.share, x.n)})`);
  const lines = ["| stage | reference | this run | Δ turns |", "|---|---|---|---|"];
  for (const r of change)
    lines.push(
      `| ${md(r.label)} | ${side(r.a)} | ${side(r.b)} | ${r.turns === null ? "—" : `${r.turns >= 0 ? "+" : "−"}${Math.abs(r.turns)}`} |`,
    );
  return ["### Stage funnel change", "", ...lines];
}

function movedLines(c: Comparison, k: number): string[] {
  const moved: readonly MovedTurn[] = c.moved.turns;
  if (moved.length === 0) return [];
  const lines = [
    `### Turns that moved (${metricLabel(HIT_KEY, k)} held; |Δ recall| or |Δ nDCG| ≥ ${c.moved.threshold}; biggest drop first)`,
    "",
    "| turn | locale | hit | Δ recall | Δ nDCG |",
    "|---|---|---|---|---|",
  ];
  for (const m of moved.slice(0, COMMENT_LIST_LIMITS.moved))
    lines.push(
      `| ${mdCode(m.id, 120)} | ${md(m.locale ?? "?")} | ${m.hit} | ${fmtSigned(m.recall)} | ${fmtSigned(m.ndcg)} |`,
    );
  if (moved.length > COMMENT_LIST_LIMITS.moved)
    lines.push("", `… and ${moved.length - COMMENT_LIST_LIMITS.moved} more turns that moved.`);
  return lines;
}

/** The comment body (markdown), under MAX_COMMENT_CHARS. */
export function renderPrComment(report: Report, o: PrCommentOptions): string {
  const c = o.comparison;
  const parts: string[][] = [
    [`## ${md(o.title ?? "retrace")}`, "", ...verdictLines(report)],
    metricLines(report, c),
    c !== null ? flipLinesOf(c.flips, report) : [],
    funnelLines(report, c),
    c !== null ? movedLines(c, report.run.k) : [],
    [
      `<sub>${md(retrieverText(report))} · k=${report.run.k} · ${report.turns.length} turns · dataset \`${report.run.datasetHash.slice(0, 12)}\`${c !== null ? ` · reference ${md(c.a, 120)}` : ""}${c !== null && c.heldOutTurns !== null ? ` · ${c.heldOutTurns} held-out turns` : ""}</sub>`,
    ],
  ];
  let body = `${parts
    .filter((p) => p.length > 0)
    .map((p) => p.join("\n"))
    .join("\n\n")}\n`;
  if (body.length > MAX_COMMENT_CHARS) {
    // Only reachable with very long ids; the lists are already cut. Cut at a line and say so.
    const note =
      "\n\n… (comment cut to stay under GitHub's size limit; the full report is in the step summary and the report artifact)\n";
    const cut = body.lastIndexOf("\n", MAX_COMMENT_CHARS - note.length);
    body = `${body.slice(0, cut)}${note}`;
  }
  return body;
}
