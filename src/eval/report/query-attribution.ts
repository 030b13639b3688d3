/**
 * Query attribution (docs/query-attribution.md): did the turn's gold get lost
 * by the query the graph built (the rewrite) or by the retriever? Computed
 * from three ranked card-id lists per gold-bearing turn — the graph's own
 * query, the raw user message, and the case's `standalone` oracle when it
 * has one — so any path that can retrieve with an alternative query (retrace's
 * graph, a captured retriever of `--graph`) can be attributed the same way.
 * Pure and synchronous; inputs are never mutated.
 *
 * Precedence (first rule that applies; G, R, O = hit@k of the graph's query,
 * the raw message and the oracle):
 *   1. `rewrite_lost_it`    — G misses, and O hits (or, without an oracle, R hits);
 *   2. `retriever_lost_it`  — G misses (and neither rule 1 condition holds);
 *   3. `ok`                 — G hits with the raw message as its query (nothing was rewritten);
 *   4. `rewrite_rescued_it` — G hits, R misses;
 *   5. `rewrite_not_needed` — G hits, R hits.
 */
import { METRICS, HIT_KEY, dedupeFirst, gradedGold } from "../measures/metrics.js";
import {
  clusterMean,
  DEFAULT_RESAMPLE,
  DEFAULT_SAMPLES,
  DEFAULT_SEED,
  type ClusteredValue,
  type ResampleUnit,
} from "../stats/bootstrap.js";
import { hasLongPositions, turnSplits } from "./funnel-stats.js";
import { ATTRIBUTIONS, UNATTRIBUTED_REASONS } from "./schemas.js";
import type { Aggregate, QueryAttributionReport, TurnReport } from "./types.js";

/** The attributions and the reasons a turn has none, defined once with the report schema. */
export { ATTRIBUTIONS, UNATTRIBUTED_REASONS };

export type Attribution = (typeof ATTRIBUTIONS)[number];

/** How renderings name each attribution. */
export const ATTRIBUTION_LABELS: Readonly<Record<Attribution, string>> = Object.freeze({
  ok: "ok",
  rewrite_rescued_it: "rewrite rescued it",
  rewrite_not_needed: "rewrite not needed",
  rewrite_lost_it: "rewrite lost it",
  retriever_lost_it: "retriever lost it",
});

export type UnattributedReason = (typeof UNATTRIBUTED_REASONS)[number];

export const UNATTRIBUTED_LABELS: Readonly<Record<UnattributedReason, string>> = Object.freeze({
  turn_error: "turn error",
  no_retrieval: "no retrieval",
  not_reinvocable: "retriever not re-invocable",
  retriever_error: "re-invoking threw",
  given_up: "deadline or stall",
});

/** The three queries of a turn. */
export const QUERY_VARIANTS = ["graph", "raw", "standalone"] as const;
export type QueryVariant = (typeof QUERY_VARIANTS)[number];

export const QUERY_VARIANT_LABELS: Readonly<Record<QueryVariant, string>> = Object.freeze({
  graph: "graph's query",
  raw: "raw message",
  standalone: "standalone (oracle)",
});

/** One query and what retrieval gave for it: the card ids in rank order (the full list when known, at least the top k). */
export interface QueryRun {
  query: string;
  ranked: readonly string[];
}

/** One query's outcome as the report keeps it. */
export interface QueryOutcome {
  query: string;
  /** 1-based rank of the best-ranked gold card in the list (beyond k when the list is longer), null when absent. */
  rank: number | null;
  /** Every registry metric at k (`retrieval_hit_at_k`, ...). */
  scores: Record<string, number>;
}

export interface TurnQueries {
  attribution: Attribution;
  graph: QueryOutcome;
  raw: QueryOutcome;
  /** Absent when the turn has no `standalone` question. */
  standalone?: QueryOutcome;
}

/**
 * The outcome of one query against `gold` at cutoff `k`. Gold must be
 * non-empty. With the turn's graded `relevant`, the graded metric (nDCG@k)
 * uses its gains, as the turn's own score does (docs/metrics.md).
 */
export function queryOutcome(
  run: QueryRun,
  gold: readonly string[],
  k: number,
  relevant?: Readonly<Record<string, number>>,
): QueryOutcome {
  const ranked = dedupeFirst(run.ranked);
  const goldSet = new Set(gold);
  const at = ranked.findIndex((id) => goldSet.has(id));
  const scores: Record<string, number> = {};
  const graded = relevant !== undefined ? gradedGold(relevant) : undefined;
  for (const m of METRICS) {
    const s = m.fn(ranked, m.trec.graded && graded !== undefined ? graded : gold, k);
    if (s !== null) scores[m.key] = s;
  }
  return { query: run.query, rank: at < 0 ? null : at + 1, scores };
}

const hits = (o: QueryOutcome | undefined) => o !== undefined && (o.scores[HIT_KEY] ?? 0) > 0;

/** The attribution of a turn from its outcomes (precedence in the module comment). */
export function attributionOf(graph: QueryOutcome, raw: QueryOutcome, standalone?: QueryOutcome): Attribution {
  const G = hits(graph);
  const R = hits(raw);
  if (!G) {
    const oracleWouldHit = standalone !== undefined ? hits(standalone) : R;
    return oracleWouldHit ? "rewrite_lost_it" : "retriever_lost_it";
  }
  if (graph.query === raw.query) return "ok";
  return R ? "rewrite_not_needed" : "rewrite_rescued_it";
}

/** The query attribution of one gold-bearing turn from its three ranked lists (nDCG@k graded with the turn's `relevant`, when given); null for a turn without gold. */
export function attributeTurn(
  runs: { graph: QueryRun; raw: QueryRun; standalone?: QueryRun },
  gold: readonly string[],
  k: number,
  relevant?: Readonly<Record<string, number>>,
): TurnQueries | null {
  if (gold.length === 0) return null;
  const graph = queryOutcome(runs.graph, gold, k, relevant);
  const raw = queryOutcome(runs.raw, gold, k, relevant);
  const standalone = runs.standalone === undefined ? undefined : queryOutcome(runs.standalone, gold, k, relevant);
  return {
    attribution: attributionOf(graph, raw, standalone),
    graph,
    raw,
    ...(standalone !== undefined ? { standalone } : {}),
  };
}

/** Zero counts of every attribution, in order. */
export function emptyCounts(): Record<Attribution, number> {
  return Object.fromEntries(ATTRIBUTIONS.map((a) => [a, 0])) as Record<Attribution, number>;
}

/** Counts of the attributions of `turns` (turns without one are skipped). */
export function attributionCounts(
  turns: readonly { queries?: { attribution: string } | undefined }[],
): Record<Attribution, number> {
  const counts = emptyCounts();
  for (const t of turns)
    if (t.queries !== undefined && t.queries.attribution in counts) counts[t.queries.attribution as Attribution] += 1;
  return counts;
}

/** What the report's section is made of besides the turns. */
export interface AttributionSectionOptions {
  enabled: boolean;
  /** Why counterfactual retrieval was off. */
  reason?: string;
  seed?: number;
  samples?: number;
  resample?: ResampleUnit;
}

/**
 * The report's `queryAttribution` section: counts overall and per split
 * (turn position, kind, locale, part) with each group's total turns
 * (`splitTurns`, the renderings' "n" column), and each query's metric means with
 * their intervals over the attributed turns that have that query.
 */
export function queryAttributionOf(
  turns: readonly TurnReport[],
  opts: AttributionSectionOptions,
): QueryAttributionReport {
  const attributed = turns.filter((t) => t.queries !== undefined);
  const splits: QueryAttributionReport["splits"] = {};
  const splitTurns: NonNullable<QueryAttributionReport["splitTurns"]> = {};
  // Position groups as the report's (its turns decide whether the long buckets are used).
  for (const [split, groups] of Object.entries(turnSplits(attributed, hasLongPositions(turns)))) {
    splits[split] = Object.fromEntries([...groups].map(([g, ts]) => [g, attributionCounts(ts)]));
    splitTurns[split] = Object.fromEntries([...groups].map(([g, ts]) => [g, ts.length]));
  }
  const means: QueryAttributionReport["means"] = {};
  for (const variant of QUERY_VARIANTS) {
    const byKey = new Map<string, ClusteredValue[]>();
    for (const t of attributed) {
      const o = t.queries?.[variant];
      if (o === undefined) continue;
      for (const m of METRICS) {
        const s = o.scores[m.key];
        if (s === undefined) continue;
        let arr = byKey.get(m.key);
        if (arr === undefined) byKey.set(m.key, (arr = []));
        arr.push({ cluster: t.caseId, value: s });
      }
    }
    const out: Record<string, Aggregate> = {};
    for (const [key, values] of byKey) {
      const m = clusterMean(values, {
        seed: opts.seed ?? DEFAULT_SEED,
        samples: opts.samples ?? DEFAULT_SAMPLES,
        unit: opts.resample ?? DEFAULT_RESAMPLE,
      });
      if (m === null) continue;
      const agg: Aggregate = { mean: m.mean, n: m.n, nCases: m.nCases };
      if (m.ci95 !== null) agg.ci95 = m.ci95;
      out[key] = agg;
    }
    if (Object.keys(out).length > 0) means[variant] = out;
  }
  // --graph --counterfactual: the turns left unattributed by reason, and the extra retriever calls (from the turns, so a merge recomputes them).
  const unattributed: Record<string, number> = {};
  for (const r of UNATTRIBUTED_REASONS) {
    const n = turns.filter((t) => t.queriesOff?.reason === r).length;
    if (n > 0) unattributed[r] = n;
  }
  const withCalls = turns.filter((t) => t.counterfactualCalls !== undefined);
  return {
    enabled: opts.enabled,
    ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
    turns: attributed.length,
    withStandalone: attributed.filter((t) => t.queries?.standalone !== undefined).length,
    counts: attributionCounts(attributed),
    splits,
    splitTurns,
    means,
    ...(Object.keys(unattributed).length > 0 ? { unattributed } : {}),
    ...(withCalls.length > 0
      ? { retrieverCalls: withCalls.reduce((s, t) => s + (t.counterfactualCalls ?? 0), 0) }
      : {}),
  };
}
