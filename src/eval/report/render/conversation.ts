/**
 * The conversation view of a report, shared by the text table and the
 * markdown renderer: the query attribution (counts overall and per turn
 * position, each query's metric means) and the stage funnel with its
 * intervals (overall and per turn position). docs/query-attribution.md,
 * docs/metrics.md ("Stage funnel"). Pure.
 */
import { HIT_KEY, metricSpec } from "../../measures/metrics.js";
import { positionLabel } from "../funnel-stats.js";
import { positionNote } from "../positions.js";
import {
  ATTRIBUTIONS,
  ATTRIBUTION_LABELS,
  QUERY_VARIANTS,
  QUERY_VARIANT_LABELS,
  UNATTRIBUTED_LABELS,
  UNATTRIBUTED_REASONS,
  type Attribution,
} from "../query-attribution.js";
import type { FunnelStage, Report, TurnReport } from "../types.js";
import { padVisible, visibleLength } from "./wrap.js";

const f3 = (x: number) => x.toFixed(3);
const ci = (c: [number, number] | undefined) => (c === undefined ? "—" : `[${f3(c[0])}, ${f3(c[1])}]`);

/** Why a report has no attribution: off (with its reason), or a `--graph` report written before `--counterfactual` existed. */
export function attributionOffText(report: Report): string | null {
  const qa = report.queryAttribution;
  if (qa !== undefined) return qa.enabled ? null : `off: ${qa.reason ?? "counterfactual retrieval did not run"}`;
  if (report.run.graph !== undefined)
    return "off: this --graph run did not ask for it (--counterfactual; docs/query-attribution.md)";
  return null;
}

/**
 * `--graph --counterfactual`: the extra retriever calls made and the
 * gold-bearing turns left unattributed, by reason
 * ("counterfactual retriever calls: 12; not attributed: no retrieval 1"); null otherwise.
 */
export function attributionCostText(report: Report): string | null {
  const qa = report.queryAttribution;
  if (qa === undefined || !qa.enabled || (qa.retrieverCalls === undefined && qa.unattributed === undefined))
    return null;
  const parts: string[] = [];
  if (qa.retrieverCalls !== undefined) parts.push(`counterfactual retriever calls: ${qa.retrieverCalls}`);
  const off = UNATTRIBUTED_REASONS.filter((r) => (qa.unattributed?.[r] ?? 0) > 0).map(
    (r) => `${UNATTRIBUTED_LABELS[r]} ${qa.unattributed![r]}`,
  );
  parts.push(`gold-bearing turns not attributed: ${off.length === 0 ? "none" : off.join(", ")}`);
  return parts.join("; ");
}

/** The three queries of a gold-bearing turn side by side, each with its rank of the best gold card and hit@k, or why the turn has no attribution (docs/query-attribution.md). */
export function queriesLines(r: Pick<TurnReport, "queries" | "queriesOff">, k: number): string[] {
  if (r.queriesOff !== undefined)
    return [`queries: not attributed (${UNATTRIBUTED_LABELS[r.queriesOff.reason]}): ${r.queriesOff.detail}`];
  const q = r.queries;
  if (q === undefined) return [];
  const rows = QUERY_VARIANTS.flatMap((v) => {
    const o = q[v];
    return o === undefined
      ? []
      : [
          [
            QUERY_VARIANT_LABELS[v],
            `rank ${o.rank ?? "—"}`,
            `hit@${k} ${o.scores[HIT_KEY] ?? 0}`,
            JSON.stringify(o.query),
          ],
        ];
  });
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => visibleLength(row[i] as string))));
  return [
    `queries: ${ATTRIBUTION_LABELS[q.attribution as Attribution]} (rank = best gold card's rank in the card list, — = not listed)`,
    ...rows.map((row) => `  ${row.map((c, i) => (i < 3 ? padVisible(c, widths[i] as number) : c)).join("  ")}`),
  ];
}

/** A table (header, rows) of the attribution counts: overall, then per turn position; n is the report's (`turns`, `splitTurns`). */
export function attributionTable(report: Report): { header: string[]; rows: string[][] } | null {
  const qa = report.queryAttribution;
  if (qa === undefined || !qa.enabled) return null;
  const header = ["turns", "n", ...ATTRIBUTIONS.map((a) => ATTRIBUTION_LABELS[a])];
  const row = (label: string, n: number | undefined, counts: Record<string, number>) => [
    label,
    n === undefined ? "—" : String(n),
    ...ATTRIBUTIONS.map((a) => String(counts[a] ?? 0)),
  ];
  const totals = qa.splitTurns?.position ?? {};
  const rows = [
    row("all", qa.turns, qa.counts),
    ...Object.entries(qa.splits.position ?? {}).map(([g, c]) => row(positionLabel(g), totals[g], c)),
  ];
  return { header, rows };
}

/** A table of each query's hit@k (and the other registry metrics' means) over the attributed turns. */
export function queryMeansTable(report: Report): { header: string[]; rows: string[][] } | null {
  const qa = report.queryAttribution;
  if (qa === undefined || !qa.enabled) return null;
  const keys = [HIT_KEY, ...Object.keys(qa.means.graph ?? {}).filter((k) => k !== HIT_KEY)];
  const header = [
    "query",
    "n",
    ...keys.map((k) => (metricSpec(k)?.label ?? k).replace("@k", `@${report.run.k}`)),
    `${metricSpec(HIT_KEY)?.label.replace("@k", `@${report.run.k}`) ?? "hit"} 95% CI`,
  ];
  const rows: string[][] = [];
  for (const v of QUERY_VARIANTS) {
    const m = qa.means[v];
    if (m === undefined) continue;
    rows.push([
      QUERY_VARIANT_LABELS[v],
      String(m[HIT_KEY]?.n ?? 0),
      ...keys.map((k) => (m[k] === undefined ? "—" : f3(m[k].mean))),
      ci(m[HIT_KEY]?.ci95),
    ]);
  }
  return { header, rows };
}

/** A table of the funnel: one row per stage, the share with its interval and n, overall and per turn position. */
export function funnelTable(report: Report): { header: string[]; rows: string[][] } | null {
  const f = report.funnel;
  if (f === undefined) return null;
  const positions = Object.entries(f.splits.position ?? {});
  const cell = (s: FunnelStage | undefined) => (s === undefined ? "—" : `${f3(s.share)} ${ci(s.ci95)} n=${s.n}`);
  const header = ["stage", "gold still present (all)", ...positions.map(([g]) => positionLabel(g))];
  const rows = f.stages.map((s) => [
    s.label,
    cell(s),
    ...positions.map(([, rows]) => cell(rows.find((r) => r.stage === s.stage))),
  ]);
  return { header, rows };
}

/** The unit line under the funnel and attribution tables. */
export function conversationNote(report: Report): string {
  const b = report.bootstrap;
  return `stage share = gold-bearing turns with a gold card still present at the stage; 95% percentile bootstrap over ${b?.unit ?? "case"}s (seed ${b?.seed ?? 42}, ${b?.samples ?? 2000} resamples); ${positionNote(Object.keys(report.splits.position ?? {}))}.`;
}

/**
 * The conversation view in three lines, for the first screen (the tables above
 * are in `--verbose`, the markdown and the HTML): the attribution counts over
 * every gold-bearing turn, each query's hit@k, and the funnel's overall shares.
 * The same figures as the first row or column of each table.
 */
export function conversationSummaryLines(report: Report): string[] {
  const out: string[] = [];
  const qa = report.queryAttribution;
  if (qa !== undefined && qa.enabled) {
    out.push(
      `query attribution (${qa.turns} gold-bearing turns): ${ATTRIBUTIONS.map((a) => `${ATTRIBUTION_LABELS[a]} ${qa.counts[a] ?? 0}`).join(", ")}`,
    );
    const hit = metricSpec(HIT_KEY)?.label.replace("@k", `@${report.run.k}`) ?? HIT_KEY;
    const measured = QUERY_VARIANTS.flatMap((v) => {
      const m = qa.means[v]?.[HIT_KEY];
      return m === undefined ? [] : [{ v, m }];
    });
    // The n most queries share is said once, after the metric; a query measured on other turns says its own.
    const ns = measured.map(({ m }) => m.n);
    const common = ns.find((n) => ns.filter((x) => x === n).length > ns.length / 2);
    if (measured.length > 0)
      out.push(
        `queries' ${hit}${common !== undefined ? ` (n=${common})` : ""}: ${measured
          .map(({ v, m }) => `${QUERY_VARIANT_LABELS[v]} ${f3(m.mean)}${m.n !== common ? ` (n=${m.n})` : ""}`)
          .join(", ")}`,
      );
  }
  const f = report.funnel;
  if (f !== undefined)
    out.push(
      `gold at each stage: ${f.stages.map((s) => `${s.stage === "final" ? `top-${report.run.k}` : s.label} ${f3(s.share)}`).join(", ")}`,
    );
  return out;
}
