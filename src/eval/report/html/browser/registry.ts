/**
 * The report and compare pages' shared state: the page data and the registries it carries (metric keys, stages, query attribution), set once by `setData` when the page starts. Part of the page script (./report.ts).
 */
import type { Aggregate, TurnReport } from "../../types.js";
import type { PageData } from "../page-data.js";
import type { RunPageData } from "../report-page.js";

export type Run = RunPageData;
export type Turn = TurnReport;
export type Captured = NonNullable<TurnReport["captured"]>;
export type CapturedList = Captured["stages"][number];
export type Interval = readonly [number, number] | null | undefined;
/** A column of a summary table: group name, its aggregates (key → aggregate), and the split it belongs to. */
export type Group = [string, Record<string, Aggregate | undefined> | undefined, string];

export let DATA: PageData; // set by setData() once the embedded data is unpacked
// The metric registry's keys (src/eval/measures/metrics.ts) and the stage registry (src/eval/report/stages.ts),
// from DATA.registry: set by setData().
export let HIT: string, RECALL: string, NDCG: string, TRIAD: string[];
export let STAGE_LABEL: Record<string, string>, STAGE_COLOR: Record<string, string>, TRACE_STAGES: string[];
// The query attribution's labels and the three queries' names (src/eval/report/query-attribution.ts).
export let ATTR_ORDER: string[], ATTR_LABEL: Record<string, string>, QUERY_ORDER: string[], QUERY_SIDE: string[];
export let QUERY_LABEL: Record<string, string>, QUERY_UNATTRIBUTED: Record<string, string>;

/** The page's data and the registries it carries, set once by ./report.ts when the data is unpacked. */
export function setData(data: PageData): void {
  DATA = data;
  const metrics = DATA.registry.metrics,
    stages = DATA.registry.stages;
  HIT = metrics.key.hit;
  RECALL = metrics.key.recall;
  NDCG = metrics.key.ndcg;
  TRIAD = metrics.triad;
  STAGE_LABEL = stages.label;
  STAGE_COLOR = stages.color;
  TRACE_STAGES = stages.trace;
  ATTR_ORDER = DATA.registry.attribution.order;
  ATTR_LABEL = DATA.registry.attribution.label;
  QUERY_ORDER = DATA.registry.queries.order;
  QUERY_SIDE = DATA.registry.queries.sideBySide;
  QUERY_LABEL = DATA.registry.queries.label;
  QUERY_UNATTRIBUTED = DATA.registry.queries.unattributed;
}
