/**
 * Helpers shared by the renderings of a Report (docs/architecture.md §7):
 * key order, labels, number formats, the cell of a key in a group, turn ids,
 * missed turns, and the run, interval and delta texts. Each renderer lives
 * in its own file next to this one; src/eval/report/render.ts re-exports the renderers.
 */
import { CANONICAL_KEYS, NOT_RUN_PREFIX } from "../../measures/evaluators.js";
import { HIT_KEY, JUDGED, METRICS } from "../../measures/metrics.js";
import { gradedNdcgText } from "../judgments.js";
import type { Aggregate, GroupDelta, Report, RetrievalRunConfig, TurnReport } from "../types.js";
import { syntheticVerdict } from "../../measures/synthetic-reference.js";
import { allSynthetic } from "../parts.js";
import { goldPositionsWords } from "../stages.js";
import { oneLineText } from "../../../control-chars.js";

export { HIT_KEY };
/** Adjusted p-value below which a delta is called significant (docs/statistics.md). */
export { SIGNIFICANCE_LEVEL } from "../../stats/bootstrap.js";
export { metricLabel } from "../../measures/label.js";
export { fmtP } from "../verdict.js";
export { differingPaths, fusionText, paramPairs, retrievalConfigText } from "../run-config-text.js";
import { metricLabel } from "../../measures/label.js";
import { fusionText, paramPairs, retrievalConfigText } from "../run-config-text.js";
import { SIGNIFICANCE_LEVEL } from "../../stats/bootstrap.js";

export const RECALL_NOTE =
  "recall@k is a conservative lower bound: gold is disjunctive (citing any one gold card meets the turn), so 1 of 2 acceptable cards scores 0.5; hit@k is the primary signal.";

/** The keys of a report in the order every rendering lists them: CANONICAL_KEYS first, then any other key in the order the report lists it. */
export function reportKeys(report: Report): string[] {
  const present = [...Object.keys(report.aggregates), ...report.vacuous];
  const ordered = CANONICAL_KEYS.filter((k) => present.includes(k));
  for (const k of present) if (!ordered.includes(k)) ordered.push(k);
  return ordered;
}

/** "not measured (no store)", or the reason itself when it says "not run: ...". */
export function vacuousText(reason: string): string {
  return reason.startsWith(NOT_RUN_PREFIX) ? reason : `not measured (${reason})`;
}

export function f3(x: number): string {
  return x.toFixed(3);
}

export function fmtSigned(x: number): string {
  return `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(3)}`;
}

export function fmtCI(ci: [number, number] | undefined): string {
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
export function cell(
  report: Report,
  group: Record<string, Aggregate> | undefined,
  key: string,
  partGroup = false,
): string {
  const agg = cellAggregate(report, group, key, partGroup);
  if (agg !== undefined) return fmtAgg(agg);
  if (report.vacuous.includes(key)) return vacuousText(report.vacuousReasons[key] ?? "not measured");
  return "— n=0";
}

/** The aggregate `cell` shows for `key` in a group, or undefined when it shows a text (not measured, "— n=0"). */
export function cellAggregate(
  report: Report,
  group: Record<string, Aggregate> | undefined,
  key: string,
  partGroup = false,
): Aggregate | undefined {
  if (partGroup && group?.[key] !== undefined) return group[key];
  if (report.vacuous.includes(key)) return undefined;
  return group?.[key];
}

export function turnId(t: Pick<TurnReport, "caseId" | "turn">): string {
  return `${t.caseId}#${t.turn}`;
}

/**
 * The missed turns the report lists (`turnOutcomes.missedTurns`: hit@k 0, no gold card in the top-k; built by
 * src/eval/report/turn-outcomes.ts), in dataset order. A report without the section (one made by hand, never
 * one retrace built or read) lists none.
 */
export function missedTurns(report: Report): TurnReport[] {
  return (report.turnOutcomes?.missedTurns ?? []).map((i) => report.turns[i]!);
}

/** How many turns missed (the report's `turnOutcomes.missed`). */
export function missedCount(report: Report): number {
  return report.turnOutcomes?.missed ?? 0;
}

export function ids(xs: readonly string[]): string {
  return `[${xs.map(oneLineText).join(", ")}]`; // an id with a line break stays one id on one line (src/control-chars.ts)
}

/** `duplicate-charges: dense 7, bm25 —, fused 9` per gold card, from the trace summary. */
export function goldPositionsText(t: TurnReport): string {
  const pos = t.trace?.goldPositions;
  return pos === undefined ? "" : goldPositionsWords(pos);
}

export function kindCounts(report: Report): string {
  const counts = new Map<string, number>();
  for (const t of report.turns) counts.set(t.kind, (counts.get(t.kind) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${k} ${n}`).join(", ");
}

/** The gold-bearing turns of the run (the report's `turnOutcomes.goldBearing`). */
export function goldBearing(report: Report): number {
  return report.turnOutcomes?.goldBearing ?? 0;
}

/** What retrieved, in a few words (the pull-request comment's footer): the embedder id, `graph FILE#EXPORT`, `recorded traces`, or `no retrieval`. */
export function retrieverText(report: Report): string {
  const { embedder, source, graph } = report.run;
  if (embedder !== null) return embedder;
  if (source === "graph" && graph !== undefined) return `graph ${graph.file}#${graph.exportName}`;
  return source === "traces" ? "recorded traces" : "no retrieval";
}

/** The embedder line: its id and description; a `--graph` or `--traces` run ran none of retrace's, and shows what retrieved instead (its description). */
export function embedderText(report: Report): string {
  const { embedder, embedderDescription } = report.run;
  if (embedder === null)
    return report.run.source !== "own"
      ? (embedderDescription ?? "the graph's own retrievers")
      : "none (no retrieval ran)";
  return embedderDescription !== undefined ? `${embedder} — ${embedderDescription}` : embedder;
}

/**
 * The run's retrieval settings (docs/fusion-and-tuning.md): one `[label, text]`
 * row when every locale ran with the same settings, else one row per locale.
 */
export function retrievalRows(report: Report, { compact = false }: { compact?: boolean } = {}): [string, string][] {
  const byLocale = Object.entries(report.run.retrieval ?? {});
  if (byLocale.length === 0) return [];
  const text = compact ? compactRetrievalText : retrievalConfigText;
  const texts = byLocale.map(([locale, c]) => [locale, text(c)] as [string, string]);
  if (new Set(texts.map(([, t]) => t)).size === 1) return [["retrieval", texts[0]![1]]];
  return texts.map(([locale, t]) => [`retrieval ${locale}`, t]);
}

/**
 * `retrievalConfigText` for the first screen: the opaque settings' dotted
 * pairs grouped by their first segment, `a(x=1 y=2)` for `a.x=1 a.y=2`;
 * the same values, in the same order.
 */
export function compactRetrievalText(c: RetrievalRunConfig): string {
  const groups = new Map<string, string[]>();
  for (const pair of c.settings === undefined ? [] : paramPairs(c.settings)) {
    const eq = pair.indexOf("=");
    const dot = pair.slice(0, eq).indexOf(".");
    const head = dot < 0 ? pair : pair.slice(0, dot);
    const rest = dot < 0 ? null : pair.slice(dot + 1);
    const g = groups.get(head) ?? [];
    if (rest !== null) g.push(rest);
    groups.set(head, g);
  }
  const rest = [...groups].map(([head, g]) => (g.length === 0 ? head : `${head}(${g.join(" ")})`));
  return [`fusion=${fusionText(c)}`, `denseK=${c.denseK}`, `bm25K=${c.bm25K}`, ...rest].join(" ");
}

export function ciMethod(report: Report): string {
  const b = report.bootstrap;
  if (b === undefined) return "intervals: 95% percentile bootstrap of the mean (seeded); (no CI) when n < 2.";
  const unit = b.unit ?? "turn";
  const what =
    unit === "case"
      ? "resampling whole cases (all turns of a case together)"
      : "resampling single turns (ignores the correlation of a case's turns)";
  return `intervals: 95% percentile bootstrap of the turn-weighted mean, ${what}, ${b.samples} resamples, seed ${b.seed}; n counts turns; (no CI) when fewer than 2 ${unit}s; chance = expected value of a uniformly random ranking of the locale's cards.`;
}

export function deltaMethod(report: Report): string {
  const b = report.bootstrap;
  if (b?.test === undefined) return `significant when p < ${SIGNIFICANCE_LEVEL}`;
  return `${b.test}; unit: ${b.unit ?? "turn"}; ${b.correction ?? ""}; significant when the adjusted p < ${SIGNIFICANCE_LEVEL}; intervals are unadjusted 95%`;
}

/** Significant when the Holm-adjusted p is < 0.05; says why when the unadjusted interval excludes 0 but the adjusted p does not pass. */
/** A split delta's verdict: the one the report recorded at build time (`deltas[].verdict`; a report written before it gets it when read, ../derived-on-read.ts). */
export function deltaVerdict(d: GroupDelta): string {
  return d.verdict ?? "—";
}

/** A delta's interval with explicit signs: `[−0.141, +0.006]`. */
export function fmtSignedCI(ci: [number, number] | undefined): string {
  return ci === undefined ? "(no CI)" : `[${fmtSigned(ci[0])}, ${fmtSigned(ci[1])}]`;
}

/** Splits other than kind and locale (e.g. tune / holdout), in the report's order. */
export function extraSplits(report: Report): [string, Record<string, Record<string, Aggregate>>][] {
  return Object.entries(report.splits).filter(
    (e): e is [string, Record<string, Record<string, Aggregate>>] =>
      e[0] !== "kind" && e[0] !== "locale" && e[1] !== undefined,
  );
}

export function chanceWarnings(report: Report): string[] {
  return report.chance?.warnings ?? [];
}

/** The warning line of a partial report (`retrace eval --shard i/n`; docs/reliability.md, "Sharded sweeps"). */
export function partialText(s: {
  index: number;
  count: number;
  caseIds: readonly string[];
  turns: number;
  dataset: { caseIds: readonly string[]; turns: number };
}): string {
  return `PARTIAL REPORT: shard ${s.index}/${s.count} (${s.caseIds.length} of ${s.dataset.caseIds.length} cases, ${s.turns} of ${s.dataset.turns} turns); figures cover this shard only. Merge all ${s.count} shards with retrace merge.`;
}

/** The gate's quarantine line: how many turns it left out and from which file; null without `--quarantine`. */
export function quarantineText(report: Report): string | null {
  const q = report.gate?.quarantine;
  if (q === undefined) return null;
  const of = q.listed === q.count ? "" : ` (${q.listed} listed, ${q.listed - q.count} not in this run)`;
  return `quarantined: ${q.count} turn${q.count === 1 ? "" : "s"} left out of the gate${of}, from ${q.file}; they stay in the report`;
}

/** Turns to label (imported, no `must_cite_one_of`): they ran and scored nothing (docs/synthetic-cases.md#importing-conversations). */
export function toLabelTurns(report: Report): TurnReport[] {
  return report.turns.filter((t) => t.toLabel === true);
}

/**
 * The guard rail of a run whose cases are all synthetic: per generator, what
 * its τ on the reference collection says these figures can judge; null when
 * a real case is present (synthetic turns are then only a split of their own).
 */
export function syntheticNotes(report: Report): string[] {
  if (!allSynthetic(report.turns)) return [];
  const seen = new Map<string, { generator: string; version: string }>();
  for (const t of report.turns) {
    const o = t.origin ?? { generator: "unknown", version: "unknown" };
    seen.set(`${o.generator}@${o.version}`, o);
  }
  return [...seen.keys()].sort().map((k) => {
    const o = seen.get(k) as { generator: string; version: string };
    return syntheticVerdict(o.generator, o.version);
  });
}

/** How many flaky turns the text and markdown list before pointing at the JSON report. */
export const FLAKY_SHOWN = 20;

/** One line on a `--repeat N` run: identical repeats, or the flaky-turn count; null without repeats. */
export function repeatsNote(s: NonNullable<Report["repeats"]>): string {
  if (s.identical)
    return `repeats: the ${s.n} repeats were identical (every turn scored the same in each); the figures are a single run's`;
  const errors =
    s.errorTurns > 0
      ? `; ${s.errorTurns} turn${s.errorTurns === 1 ? "" : "s"} errored in at least one repeat (error turns)`
      : "";
  return `repeats: ${s.n} per case, each on fresh threads; per-turn scores are means over the repeats; ${s.flaky.length} flaky turn${s.flaky.length === 1 ? "" : "s"} (hit in some repeats, missed in others)${errors}`;
}

/**
 * The repeats block of the text and markdown reports: the note, each key's
 * mean with its two-stage interval and the variance shares, and the flaky
 * turns with their hit rate (the first FLAKY_SHOWN). Empty without repeats.
 */
export function repeatsLines(
  report: Report,
): { note: string; metrics: [string, string, string, string][]; flaky: string[] } | null {
  const s = report.repeats;
  if (s === undefined) return null;
  const metrics: [string, string, string, string][] = reportKeys(report)
    .filter((key) => s.metrics[key] !== undefined)
    .map((key) => {
      const m = s.metrics[key]!;
      return [
        metricLabel(key, report.run.k),
        f3(m.mean),
        fmtCI(m.ci95),
        `${(m.withinShare * 100).toFixed(0)}% / ${(m.betweenShare * 100).toFixed(0)}%`,
      ];
    });
  const flaky = s.flaky
    .slice(0, FLAKY_SHOWN)
    .map((f) => `${f.caseId}#${f.turn} hit in ${f.hits}/${f.n} repeats (rate ${f.rate.toFixed(2)})`);
  if (s.flaky.length > FLAKY_SHOWN)
    flaky.push(`… and ${s.flaky.length - FLAKY_SHOWN} more (every flaky turn is in the JSON report's repeats.flaky)`);
  return { note: repeatsNote(s), metrics, flaky };
}

/**
 * What the report says about graded relevance and judged@k (docs/metrics.md),
 * as plain lines: which nDCG the run used, judged@k with its n and the
 * warning level, then one line per turn with unjudged cards in its top-k.
 * Empty when no turn carries `relevant` or `judged`.
 */
export function judgmentLines(report: Report): { summary: string[]; holes: string[] } {
  const j = report.judgments;
  if (j === undefined) return { summary: [], holes: [] };
  const summary: string[] = [];
  const graded = gradedNdcgText(report);
  if (graded !== null) summary.push(graded);
  const label = metricLabel(JUDGED.key, report.run.k);
  const agg = report.aggregates[JUDGED.key];
  const level = `warning level ${j.warnBelow}`;
  summary.push(
    agg === undefined
      ? `${label}: not measured on the ${j.judgedTurns} turn${j.judgedTurns === 1 ? "" : "s"} with judgments (nothing retrieved)`
      : `${label}: ${f3(agg.mean)} n=${agg.n} of ${j.judgedTurns} turn${j.judgedTurns === 1 ? "" : "s"} with judgments (${level}${agg.mean < j.warnBelow ? ", BELOW" : ""}); ${j.holes.length} turn${j.holes.length === 1 ? "" : "s"} with unjudged cards in the top-${report.run.k}`,
  );
  const holes = j.holes.map((h) => `${turnId(h)} judged ${f3(h.judged)} unjudged ${ids(h.unjudged)}`);
  return { summary, holes };
}

/**
 * The report's `measuresNotComputed` as one line (the table with --verbose,
 * the markdown always), e.g. "not computed: judged@5, unjudged@5, condensed
 * nDCG@5, bpref (no case carries …)"; null when the report has none.
 */
export function measuresNotComputedLine(report: Report): string | null {
  const entries = report.measuresNotComputed ?? [];
  if (entries.length === 0) return null;
  return `not computed: ${entries.map((e) => `${e.keys.map((key) => metricLabel(key, report.run.k)).join(", ")} (${e.reason})`).join("; ")}`;
}

/**
 * A traced turn's judgments as `retrace trace` prints them: the gold line
 * (the citation contract), then the graded `relevant` (nDCG's gains) and
 * `judged` lines when the turn has them.
 */
export function traceJudgmentLines(t: Pick<TurnReport, "gold" | "relevant" | "judged" | "relevanceOnly">): string[] {
  const none =
    t.relevanceOnly === true ? "none (relevance-only turn: scored for nDCG only)" : "none (no-match turn: not scored)";
  const lines = [`gold:  ${t.gold.length === 0 ? none : t.gold.join(", ")}`];
  if (t.relevant !== undefined)
    lines.push(
      `relevant (graded: nDCG's gains): ${Object.entries(t.relevant)
        .map(([id, g]) => `${id}=${g}`)
        .join(", ")}`,
    );
  if (t.judged !== undefined) lines.push(`judged: ${t.judged.join(", ")}`);
  return lines;
}

/** The comment of a turn's retrieval metrics (the hit@k result's; a relevance-only turn's nDCG@k's), or undefined when none was scored. */
export function retrievalComment(t: Pick<TurnReport, "results">): string | undefined {
  const keys = new Set(METRICS.map((m) => m.key));
  return (t.results.find((x) => x.key === HIT_KEY) ?? t.results.find((x) => keys.has(x.key)))?.comment;
}

/**
 * A traced turn's metrics, each once (`retrace trace`): the retrieval
 * evaluator's comment (every registry metric with its gold and top-k, e.g.
 * `hit=1 recall=0.50 ndcg=0.63 mrr=0.50 precision=0.33 gold=[a,b] top3=[c,a,d]`),
 * then the turn's other results (answer-side) as `key=score`; "none" without any.
 */
export function traceMetricsText(t: Pick<TurnReport, "results">): string {
  const registry = new Set(METRICS.map((m) => m.key));
  const comment = retrievalComment(t);
  const others = t.results
    .filter((x) => comment === undefined || !registry.has(x.key))
    .map((x) => `${x.key}=${Number.isInteger(x.score) ? x.score : x.score.toFixed(3)}`);
  const parts = [...(comment !== undefined ? [comment] : []), ...others];
  return parts.length === 0 ? "none" : parts.join("  ");
}
