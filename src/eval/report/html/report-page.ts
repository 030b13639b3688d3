/**
 * `retrace eval --out html:` / `retrace report --out html:`: the report as one
 * self-contained HTML page (docs/html-report.md). Every number shown comes
 * from the Report object or from the pure pipeline view derived from it
 * (./funnel.ts); the page's script only lays them out.
 */
import {
  CITATION_CORRECTNESS_KEY,
  CITATION_COVERAGE_KEY,
  GROUNDEDNESS_KEY,
  REFUSAL_CORRECTNESS_KEY,
} from "../../measures/evaluators.js";
import { METRICS, TRIAD_KEYS, type MetricName } from "../../measures/metrics.js";
import { graphHeaderLines, graphTurnNotes } from "../graph-report.js";
import {
  ATTRIBUTIONS,
  ATTRIBUTION_LABELS,
  QUERY_VARIANTS,
  QUERY_VARIANT_LABELS,
  type QueryVariant,
  UNATTRIBUTED_LABELS,
} from "../query-attribution.js";
import { judgmentLines, metricLabel, vacuousText } from "../render.js";
import { attributionCostText, attributionOffText, conversationNote } from "../render/conversation.js";
import { chanceWarnings, ciMethod, deltaMethod, deltaVerdict, reportKeys } from "../render/shared.js";
import { setupText } from "../render/table.js";
import { answerSideNote } from "../report-parts.js";
import { measuresNotComputedLine } from "../render/shared.js";
import type { Report } from "../types.js";
import { stagePageData, type StagePageData } from "../stages.js";
import { pipelineView, type PipelineView } from "./funnel.js";
import { renderPage } from "./page.js";

/** What the page script receives for one run. */
export interface RunPageData {
  name: string;
  report: Report;
  view: PipelineView;
  /** key → display label (`hit@5`, `recall@5 (lower bound)`, ...). */
  labels: Record<string, string>;
  /** Summary rows in the order every rendering lists them: the metric registry, then the other evaluators, then any other key. */
  keys: string[];
  /** key → "not measured (no store)" / "not run: no judge configured". */
  vacuousText: Record<string, string>;
  /** Turns of the run (the compare page embeds only some of its turns); the gold-bearing and missed turns are the report's `turnOutcomes`. */
  turnCount: number;
  /**
   * A `--graph` run's facts, worded as the table and markdown word them
   * (../graph-report.ts): `header`, the graph, its captured retrievers, id key
   * and retrieval-call mode, multi-call and unknown-id counts; `notes`, the
   * errored and retrieval-less turns listed and counted, and the warnings;
   * `notRead`, what retrace does not read for a `--graph` run (the turn view
   * says it where retrace's own graph shows the citations).
   */
  graph?: { header: string[]; notes: string[]; notRead: string };
  /**
   * The conversation view's words, as the table and markdown word them
   * (../render/conversation.ts): `attributionOff`, why the run has no query
   * attribution (null when it has one, or when an older report simply has no
   * section); `note`, the unit line under the funnel and attribution tables.
   */
  conversation: { attributionOff: string | null; note: string; cost: string | null };
  /**
   * The report's statistics worded as the terminal table words them
   * (../render/shared.ts), so the page says nothing of its own about a test:
   * `deltaMethod`, how the split deltas were tested and adjusted
   * (`report.bootstrap.test` and `.correction`); `deltaVerdicts[i]`, the
   * verdict of `report.deltas[i]` from its Holm-adjusted p; `ciMethod`, how
   * the intervals were resampled (docs/statistics.md).
   */
  stats: { deltaMethod: string; deltaVerdicts: string[]; ciMethod: string };
  /**
   * The report's other sections in words, as the table words them:
   * `answerSide`, where the answer-side figures come from (null: no answer-side key);
   * `chanceWarnings`, the small-KB warnings; `setup`, the embedder's and store's
   * wall-clock setup (`timings.setup`; null without it).
   */
  notes: { answerSide: string | null; chanceWarnings: string[]; setup: string | null; notComputed: string | null };
  /** Which nDCG the run used, judged@k and the turns with unjudged cards, worded as the table words them (render/shared.ts `judgmentLines`); absent when no turn carries judgments. */
  judgments?: string[];
}

function keysOf(report: Report): string[] {
  const keys = new Set<string>([...Object.keys(report.aggregates), ...report.vacuous, GROUNDEDNESS_KEY]);
  for (const t of report.turns) for (const r of t.results) keys.add(r.key);
  for (const split of Object.values(report.splits))
    for (const group of Object.values(split ?? {})) for (const k of Object.keys(group)) keys.add(k);
  return [...keys];
}

/** The registries the page script reads, so that it names no metric key or stage itself: every page's data carries them as `registry`. */
export interface RegistryPageData {
  /** The metric registry (src/eval/measures/metrics.ts): each metric's key by name, and the triad's keys. */
  metrics: { key: Record<MetricName, string>; triad: string[] };
  stages: StagePageData;
  /** The query attribution (../query-attribution.ts): its labels in report order, and the three queries' names in order. */
  attribution: { order: string[]; label: Record<string, string> };
  /** `order`: report order (the means table); `sideBySide`: the turn view's columns, raw message, oracle, then the graph's query. */
  queries: {
    order: string[];
    sideBySide: string[];
    label: Record<string, string>;
    unattributed: Record<string, string>;
  };
}

/** The turn view's order of the three queries: what the user typed, what a perfect rewrite would be, what the graph retrieved with. */
const QUERY_SIDE_BY_SIDE: readonly QueryVariant[] = ["raw", "standalone", "graph"];

export function registryPageData(): RegistryPageData {
  const key = Object.fromEntries(METRICS.map((m) => [m.name, m.key])) as Record<MetricName, string>;
  return {
    metrics: { key, triad: [...TRIAD_KEYS] },
    stages: stagePageData(),
    attribution: { order: [...ATTRIBUTIONS], label: { ...ATTRIBUTION_LABELS } },
    queries: {
      order: [...QUERY_VARIANTS],
      sideBySide: [...QUERY_SIDE_BY_SIDE],
      label: { ...QUERY_VARIANT_LABELS },
      unattributed: { ...UNATTRIBUTED_LABELS },
    },
  };
}

export function runPageData(report: Report, name: string): RunPageData {
  const labels = Object.fromEntries(keysOf(report).map((k) => [k, metricLabel(k, report.run.k)]));
  return {
    name,
    report,
    view: pipelineView(report),
    keys: reportKeys(report),
    labels,
    vacuousText: Object.fromEntries(
      report.vacuous.map((k) => [k, vacuousText(report.vacuousReasons[k] ?? "not measured")]),
    ),
    turnCount: report.turns.length,
    ...(report.run.graph !== undefined
      ? { graph: { header: graphHeaderLines(report), notes: graphTurnNotes(report), notRead: notReadText(report) } }
      : {}),
    conversation: {
      attributionOff: attributionOffText(report),
      note: conversationNote(report),
      cost: attributionCostText(report),
    },
    stats: {
      deltaMethod: deltaMethod(report),
      deltaVerdicts: (report.deltas ?? []).map(deltaVerdict),
      ciMethod: ciMethod(report),
    },
    notes: {
      answerSide: answerSideNote(report),
      chanceWarnings: chanceWarnings(report),
      setup: setupText(report),
      notComputed: measuresNotComputedLine(report),
    },
    ...judgmentsOfPage(report),
  };
}

/** What a `--graph` run does not read (docs/evaluate-your-graph.md, "What is scored and reported"): citations and the answer-side checks, labelled as the summary labels them. */
function notReadText(report: Report): string {
  const keys = [CITATION_COVERAGE_KEY, CITATION_CORRECTNESS_KEY, REFUSAL_CORRECTNESS_KEY].map((k) =>
    metricLabel(k, report.run.k),
  );
  const judge =
    report.judge !== undefined
      ? ""
      : `, ${metricLabel(GROUNDEDNESS_KEY, report.run.k)} without a judge (run.judge of --config)`;
  return `Not read for a --graph run: citations and the answer-side checks (${keys.join(", ")}${judge}); your graph's citations are not retrace's to interpret.`;
}

function judgmentsOfPage(report: Report): { judgments?: string[] } {
  const { summary, holes } = judgmentLines(report);
  return summary.length === 0 ? {} : { judgments: [...summary, ...holes.map((h) => `  ${h}`)] };
}

/** The report page's data, as its script (./browser/report.ts) reads it (./page-data.ts has the compare page's). */
export interface ReportPageData {
  kind: "report";
  registry: RegistryPageData;
  run: RunPageData;
}

/** The HTML report of one run. `name` is shown as its title (e.g. the report file). */
export function renderHtmlReport(report: Report, opts: { name?: string } = {}): string {
  const base = opts.name ?? `retrace report ${report.run.datasetHash.slice(0, 12)}`;
  // A shard's page says it is partial wherever its name shows (docs/reliability.md, "Sharded sweeps").
  const name =
    report.shard !== undefined
      ? `${base} (PARTIAL REPORT: shard ${report.shard.index}/${report.shard.count}, ${report.shard.caseIds.length} of ${report.shard.dataset.caseIds.length} cases)`
      : base;
  const data: ReportPageData = { kind: "report", registry: registryPageData(), run: runPageData(report, name) };
  return renderPage(`retrace: ${name}`, data);
}
