/** The markdown rendering of a Report (docs/architecture.md §7); conventions in src/eval/report/render.ts. */
import { DELTA_COLUMNS } from "../columns.js";
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
import type { Aggregate, Report } from "../types.js";
import {
  cell,
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
  quarantineText,
  repeatsLines,
  ids,
  kindCounts,
  metricLabel,
  missedCount,
  missedTurns,
  RECALL_NOTE,
  reportKeys,
  turnId,
  vacuousText,
  syntheticNotes,
  toLabelTurns,
  judgmentLines,
  measuresNotComputedLine,
} from "./shared.js";
import { mdCode, mdFence, mdText } from "./markdown-escape.js";

/** Text from cases, documents and graphs in a table cell, list item or heading: shown as text, never markdown or HTML (./markdown-escape.ts). */
const md = (s: string): string => mdText(s);

function mdTable(header: string[], rows: string[][]): string[] {
  return [
    `| ${header.join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ];
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
  if (report.shard !== undefined) out.push(`> **${md(partialText(report.shard))}**`, "");
  out.push(
    ...mdTable(
      ["run", ""],
      [
        ["dataset hash", mdCode(run.datasetHash)],
        ["KB hash", mdCode(run.kbHash)],
        ["embedder", md(embedderText(report))],
        ...retrievalRows(report).map(([label, text]) => [label, md(text)]),
        ...(answererText(report) !== null ? [["answerer", md(answererText(report) as string)]] : []),
        ...(replayText(report) !== null ? [["replay", md(replayText(report) as string)]] : []),
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
  if (graphLines.length > 0) out.push("", ...mdFence(graphLines)); // a fence no line of the graph's ids or errors can close

  out.push("", "## Overall", "");
  out.push(
    ...mdTable(
      ["metric", "mean", `95% CI (${report.bootstrap?.unit ?? "turn"}s resampled)`, "n turns", "n cases", "chance"],
      reportKeys(report).map((key) => {
        const label = md(rowLabel(report, key, metricLabel(key, k)));
        if (report.vacuous.includes(key))
          return [label, md(vacuousText(report.vacuousReasons[key] ?? "not measured")), "", "0", "0", ""];
        const agg = report.aggregates[key];
        return agg === undefined
          ? [label, "—", "", "0", "0", ""]
          : [
              label,
              f3(agg.mean),
              md(fmtCI(agg.ci95)),
              String(agg.n),
              agg.nCases === undefined ? "" : String(agg.nCases),
              agg.chance === undefined ? "" : f3(agg.chance),
            ];
      }),
    ),
  );

  const repeats = repeatsLines(report);
  if (repeats !== null) {
    out.push("", "## Repeats", "", md(repeats.note));
    if (repeats.metrics.length > 0)
      out.push(
        "",
        ...mdTable(
          [
            "metric",
            "mean over repeats",
            "95% CI (two-stage: cases, then repeats)",
            "variance within case / between cases",
          ],
          repeats.metrics.map((r) => r.map(md)),
        ),
      );
    if (repeats.flaky.length > 0) out.push("", "Flaky turns:", "", ...repeats.flaky.map((f) => `- ${md(f)}`));
  }

  out.push("", "## By kind", "");
  out.push(...mdSplit(report, Object.entries(report.splits.kind)));
  out.push("", "## By locale", "");
  out.push(...mdSplit(report, Object.entries(report.splits.locale)));
  for (const [name, groups] of extraSplits(report)) {
    if (name === "part") {
      out.push("", "## By part (tune / holdout)", "");
      out.push(
        ...mdSplit(
          report,
          PART_LABELS.map(([p, label]) => [label, groups[p]]),
          false,
        ),
      );
    } else if (name === "position") {
      // Named as every turn key numbers turns (`turn #0`…; the JSON keys stay "1"…"4+").
      out.push("", "## By turn position", "");
      out.push(
        ...mdSplit(
          report,
          Object.entries(groups).map(([g, agg]) => [positionLabel(g), agg]),
        ),
      );
    } else {
      out.push("", `## By ${md(name)}`, "");
      out.push(...mdSplit(report, Object.entries(groups)));
    }
  }
  const off = attributionOffText(report);
  if (off !== null) out.push("", "## Query attribution", "", md(off));
  for (const [title, t] of [
    ["## Query attribution", attributionTable(report)],
    ["### Each query's means", queryMeansTable(report)],
    ["## Stage funnel", funnelTable(report)],
  ] as const) {
    if (t === null) continue;
    out.push(
      "",
      title,
      "",
      ...mdTable(
        t.header.map(md),
        t.rows.map((r) => r.map(md)),
      ),
    );
    const cost = title === "## Query attribution" ? attributionCostText(report) : null; // --graph --counterfactual
    if (cost !== null) out.push("", md(cost));
  }
  if (report.funnel !== undefined) out.push("", md(conversationNote(report)));
  const deltas = report.deltas ?? [];
  if (deltas.length > 0) {
    out.push("", `Split deltas (${md(deltaMethod(report))}):`, "");
    out.push(
      ...mdTable(
        [...DELTA_COLUMNS],
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
    for (const key of report.vacuous)
      out.push(`- \`${key}\`: ${md(vacuousText(report.vacuousReasons[key] ?? "not measured"))}`);
  }

  const synthetic = syntheticNotes(report);
  if (synthetic.length > 0)
    out.push("", "## Synthetic cases only", "", ...synthetic.map((n) => `> **Warning:** ${md(n)}`));
  const toLabel = toLabelTurns(report);
  if (toLabel.length > 0) {
    out.push(
      "",
      "## Turns to label",
      "",
      `${toLabel.length} turn${toLabel.length === 1 ? "" : "s"} without \`must_cite_one_of\` (imported): they ran and scored nothing.`,
      "",
    );
    out.push(
      ...mdTable(
        ["turn", "locale", "query"],
        toLabel.map((t) => [mdCode(turnId(t)), md(t.locale), md(t.user)]),
      ),
    );
  }
  const judgments = judgmentLines(report);
  if (judgments.summary.length > 0) {
    out.push("", "## Judgments", "", ...judgments.summary.map((l) => `- ${md(l)}`));
    if (judgments.holes.length > 0)
      out.push("", "Turns with unjudged cards in the top-k:", "", ...judgments.holes.map((h) => `- ${md(h)}`));
  }
  const notComputed = measuresNotComputedLine(report);
  if (notComputed !== null) out.push("", md(`Note: ${notComputed}.`));
  out.push("", "## Missed turns", "");
  if (report.vacuous.includes(HIT_KEY)) {
    out.push(`Retrieval was ${md(vacuousText(report.vacuousReasons[HIT_KEY] ?? "not measured"))}.`);
  } else {
    const missed = missedTurns(report),
      n = missedCount(report);
    if (n === 0) out.push(`None: every gold-bearing turn had a gold card in the top-${k}.`);
    else {
      out.push(`${n} gold-bearing turn${n === 1 ? "" : "s"} with no gold card in the top-${k}:`, "");
      // --graph runs add a column: "no retrieval", unknown ids, several retriever calls.
      const graph = run.graph !== undefined;
      out.push(
        ...mdTable(
          ["turn", "locale", "kind", "query", "gold", `top-${k}`, "gold by stage", ...(graph ? ["retrieval"] : [])],
          missed.map((t) => [
            mdCode(turnId(t)),
            md(t.locale),
            md(t.kind),
            md(t.user),
            md(ids(t.gold)),
            md(ids(t.retrievedIds ?? [])),
            md(goldPositionsText(t)),
            ...(graph ? [md(graphTurnTag(report, t))] : []),
          ]),
        ),
      );
    }
  }

  out.push("", "## Gate", "");
  const g = report.gate;
  if (g === null)
    out.push(
      report.shard !== undefined
        ? "Not evaluated: a partial report of one shard; the merged report gates."
        : "Not evaluated.",
    );
  else if (g.passed)
    out.push(
      g.checks !== undefined && g.checks.length === 0 ? "**PASS** (no floor or baseline check was set)" : "**PASS**",
    );
  else {
    out.push(`**FAIL** (${g.failures.length} failure${g.failures.length === 1 ? "" : "s"})`, "");
    for (const f of g.failures) out.push(`- \`${f.kind}\` ${md(f.reason)}`);
  }
  if (g?.dropTest !== undefined) out.push("", `Baseline drop test: ${md(g.dropTest.description)}.`);
  const quarantined = quarantineText(report);
  if (quarantined !== null) out.push("", md(quarantined));
  if (g !== null && (g.checks ?? []).length > 0) {
    out.push(
      "",
      ...mdTable(
        ["check", "scope", "verdict", "reason"],
        (g.checks ?? []).map((c) => [md(c.option), md(c.scope), c.verdict, md(c.reason)]),
      ),
    );
  }

  const sideNote = answerSideNote(report);
  out.push(
    "",
    "## Notes",
    "",
    `- ${RECALL_NOTE}`,
    ...(sideNote !== null ? [`- ${md(sideNote)}`] : []),
    `- ${ciMethod(report)}`,
    "- Turns are `caseId#turn`, turn 0-based.",
    "",
  );
  return out.join("\n");
}
