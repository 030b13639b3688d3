/**
 * The conversation view of a report, shared by the text table and the
 * markdown renderer: the query attribution (counts overall and per turn
 * position, each query's metric means) and the stage funnel with its
 * intervals (overall and per turn position). docs/query-attribution.md,
 * docs/metrics.md ("Stage funnel"). Pure.
 */
import { HIT_KEY, metricSpec } from "../../measures/metrics.js";
import { ATTRIBUTIONS, ATTRIBUTION_LABELS, QUERY_VARIANTS, QUERY_VARIANT_LABELS } from "../query-attribution.js";
import type { FunnelStage, Report } from "../types.js";

const f3 = (x: number) => x.toFixed(3);
const ci = (c: [number, number] | undefined) => (c === undefined ? "—" : `[${f3(c[0])}, ${f3(c[1])}]`);

/** Why a report has no attribution: off (with its reason), or a `--graph` run (not yet implemented), or an older report. */
export function attributionOffText(report: Report): string | null {
  const qa = report.queryAttribution;
  if (qa !== undefined) return qa.enabled ? null : `off: ${qa.reason ?? "counterfactual retrieval did not run"}`;
  if (report.run.graph !== undefined) return "off: counterfactual retrieval is not yet implemented for --graph (docs/query-attribution.md)";
  return null;
}

/** A table (header, rows) of the attribution counts: overall, then per turn position. */
export function attributionTable(report: Report): { header: string[]; rows: string[][] } | null {
  const qa = report.queryAttribution;
  if (qa === undefined || !qa.enabled) return null;
  const header = ["turns", "n", ...ATTRIBUTIONS.map((a) => ATTRIBUTION_LABELS[a])];
  const row = (label: string, counts: Record<string, number>) => [label, String(Object.values(counts).reduce((s, x) => s + x, 0)), ...ATTRIBUTIONS.map((a) => String(counts[a] ?? 0))];
  const rows = [row("all", qa.counts), ...Object.entries(qa.splits.position ?? {}).map(([g, c]) => row(`turn ${g}`, c))];
  return { header, rows };
}

/** A table of each query's hit@k (and the other registry metrics' means) over the attributed turns. */
export function queryMeansTable(report: Report): { header: string[]; rows: string[][] } | null {
  const qa = report.queryAttribution;
  if (qa === undefined || !qa.enabled) return null;
  const keys = [HIT_KEY, ...Object.keys(qa.means.graph ?? {}).filter((k) => k !== HIT_KEY)];
  const header = ["query", "n", ...keys.map((k) => (metricSpec(k)?.label ?? k).replace("@k", `@${report.run.k}`)), `${metricSpec(HIT_KEY)?.label.replace("@k", `@${report.run.k}`) ?? "hit"} 95% CI`];
  const rows: string[][] = [];
  for (const v of QUERY_VARIANTS) {
    const m = qa.means[v];
    if (m === undefined) continue;
    rows.push([QUERY_VARIANT_LABELS[v], String(m[HIT_KEY]?.n ?? 0), ...keys.map((k) => (m[k] === undefined ? "—" : f3(m[k].mean))), ci(m[HIT_KEY]?.ci95)]);
  }
  return { header, rows };
}

/** A table of the funnel: one row per stage, the share with its interval and n, overall and per turn position. */
export function funnelTable(report: Report): { header: string[]; rows: string[][] } | null {
  const f = report.funnel;
  if (f === undefined) return null;
  const positions = Object.entries(f.splits.position ?? {});
  const cell = (s: FunnelStage | undefined) => (s === undefined ? "—" : `${f3(s.share)} ${ci(s.ci95)} n=${s.n}`);
  const header = ["stage", "gold still present (all)", ...positions.map(([g]) => `turn ${g}`)];
  const rows = f.stages.map((s) => [s.label, cell(s), ...positions.map(([, rows]) => cell(rows.find((r) => r.stage === s.stage)))]);
  return { header, rows };
}

/** The unit line under the funnel and attribution tables. */
export function conversationNote(report: Report): string {
  const b = report.bootstrap;
  return `stage share = gold-bearing turns with a gold card still present at the stage; 95% percentile bootstrap over ${b?.unit ?? "case"}s (seed ${b?.seed ?? 42}, ${b?.samples ?? 2000} resamples); turn 4+ = turns 4 and later.`;
}
