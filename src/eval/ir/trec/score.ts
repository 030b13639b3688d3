/**
 * A run scored against qrels the way trec_eval scores them, for the measures
 * retrace reports: `success.k`, `recall.k`, `ndcg_cut.k`, `P.k`, `recip_rank`
 * (docs/decisions/0001-metric-contract.md). Which measures, their names, print
 * order and gains, and their values all come from the metric registry
 * (`METRICS[i].trec` and `.fn`, src/eval/measures/metrics.ts).
 * What it does as trec_eval does, and where it deliberately differs, is in
 * the module comment of src/eval/ir/trec.ts. Pure functions: no I/O.
 */
import { DataValidationError, InvalidArgumentError } from "../../../errors.js";
import { dedupeFirst, METRICS, type MetricSpec } from "../../measures/metrics.js";
import type { Qrels, Run, RunQuery } from "./parse.js";

/** trec_eval's relevance_level default: rel ≥ 1 is relevant. */
export const RELEVANCE_LEVEL = 1;

/**
 * strcmp order of two strings, i.e. the byte order of their UTF-8 encodings
 * (which is code-point order). Differs from JS `<` only between astral
 * characters and U+E000..U+FFFF.
 */
export function strcmp(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      const xs = x >= 0xd800 && x <= 0xdfff;
      const ys = y >= 0xd800 && y <= 0xdfff;
      if (xs && !ys && y >= 0xe000) return 1;
      if (ys && !xs && x >= 0xe000) return -1;
      return x - y;
    }
  }
  return a.length - b.length;
}

/**
 * Order one query's results as trec_eval does (score descending, ties by docno
 * descending in strcmp order) and keep the first occurrence of each docno.
 * Returns the ranked docnos and how many duplicates were dropped.
 */
export function trecRanking(q: RunQuery): { ranked: string[]; duplicates: number } {
  const { docnos, scores } = q;
  const before = (i: number, j: number): number => {
    const si = scores[i] as number;
    const sj = scores[j] as number;
    if (si !== sj) return si > sj ? -1 : 1;
    return strcmp(docnos[j] as string, docnos[i] as string);
  };
  // Runs usually come in trec order already: check in one pass before sorting.
  let sorted = true;
  for (let i = 1; i < docnos.length && sorted; i++) if (before(i - 1, i) > 0) sorted = false;
  let ordered: readonly string[] = docnos;
  if (!sorted) {
    const idx = Array.from({ length: docnos.length }, (_, i) => i);
    idx.sort(before);
    ordered = idx.map((i) => docnos[i] as string);
  }
  const ranked = dedupeFirst(ordered);
  return { ranked, duplicates: ordered.length - ranked.length };
}

export interface TrecOptions {
  /** Cutoffs for success, recall, ndcg_cut and P (sorted and deduplicated, as trec_eval does). */
  ks: readonly number[];
  /** trec_eval -c: judged queries without results score 0 and count in `all`. */
  complete?: boolean;
  /** The ADR's empty-gold rule: judged queries with no relevant document get no score and are not counted. */
  skipEmpty?: boolean;
  /** ndcg_cut uses the qrels rel values as gains (trec_eval's ndcg_cut); otherwise binary gains. */
  graded?: boolean;
}

export interface TrecCounts {
  /** Queries in the qrels. */
  judged: number;
  /** Queries evaluated (the denominator of `all`). */
  evaluated: number;
  /** Judged queries with no results in the run (scored 0 with `complete`, else left out); not counting those skipped by `skipEmpty`. */
  withoutResults: number;
  /** Judged queries with no relevant document: all of them skipped with `skipEmpty`; else those with results (scored 0). */
  withoutRelevant: number;
  /** Queries in the run that have no judgments (ignored). */
  unjudged: number;
  /** Duplicate documents dropped, and in how many queries. */
  duplicates: number;
  queriesWithDuplicates: number;
}

export interface TrecScores {
  /** Measure names in trec_eval's print order: recip_rank, P_k..., recall_k..., ndcg_cut_k..., success_k.... */
  measures: string[];
  /** Evaluated queries in trec_eval's order (strcmp of qid), each with a value per measure. */
  perQuery: Array<{ qid: string; values: Record<string, number> }>;
  /** Mean of each measure over the evaluated queries. */
  all: Record<string, number>;
  numQueries: number;
  counts: TrecCounts;
  /** Human-readable notes about what was left out, deduplicated or skipped. */
  warnings: string[];
  runId: string | null;
}

/** Validated cutoffs: positive integers, sorted ascending, deduplicated. */
export function normalizeCutoffs(ks: readonly number[]): number[] {
  if (ks.length === 0) throw new InvalidArgumentError("k", "at least one cutoff", []);
  for (const k of ks) if (!Number.isInteger(k) || k <= 0) throw new InvalidArgumentError("k", "a positive integer", k);
  return [...new Set(ks)].sort((a, b) => a - b);
}

/** The registry's metrics in trec_eval's print order (measures.c). */
const BY_PRINT_ORDER: readonly MetricSpec[] = [...METRICS].sort((a, b) => a.trec.printOrder - b.trec.printOrder);

/** Measure names for the cutoffs, in trec_eval's print order (measures.c): recip_rank, P_k..., recall_k..., ndcg_cut_k..., success_k.... */
export function trecMeasureNames(ks: readonly number[]): string[] {
  return BY_PRINT_ORDER.flatMap((m) => (m.trec.cut ? ks.map((k) => m.trecName(k)) : [m.trec.name]));
}

function zeros(measures: readonly string[]): Record<string, number> {
  const v: Record<string, number> = {};
  for (const m of measures) v[m] = 0;
  return v;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * Score a run against qrels as trec_eval does (see the module comment of
 * src/eval/ir/trec.ts for the three documented departures). Pure: no I/O;
 * inputs are not mutated. Throws DataValidationError when no query can be
 * evaluated (trec_eval: "No queries with both results and relevance info").
 */
export function scoreTrec(
  qrels: Qrels,
  run: Run,
  options: TrecOptions,
  files: { qrels?: string; run?: string } = {},
): TrecScores {
  const ks = normalizeCutoffs(options.ks);
  const measures = trecMeasureNames(ks);
  const complete = options.complete ?? false;
  const skipEmpty = options.skipEmpty ?? false;
  const graded = options.graded ?? false;

  const counts: TrecCounts = {
    judged: qrels.size,
    evaluated: 0,
    withoutResults: 0,
    withoutRelevant: 0,
    unjudged: 0,
    duplicates: 0,
    queriesWithDuplicates: 0,
  };
  for (const qid of run.queries.keys()) if (!qrels.has(qid)) counts.unjudged++;

  const perQuery: TrecScores["perQuery"] = [];
  const sums = zeros(measures);
  const qids = [...qrels.keys()].sort(strcmp);

  for (const qid of qids) {
    const judged = qrels.get(qid) as Map<string, number>;
    const relevant = new Set<string>();
    const gains = new Map<string, number>();
    for (const [docno, rel] of judged) {
      if (rel >= RELEVANCE_LEVEL) relevant.add(docno);
      if (rel > 0) gains.set(docno, rel);
    }
    const results = run.queries.get(qid);
    const hasResults = results !== undefined && results.docnos.length > 0;
    if (relevant.size === 0 && skipEmpty) {
      counts.withoutRelevant++;
      continue;
    }
    let values: Record<string, number>;
    if (!hasResults) {
      counts.withoutResults++;
      if (!complete) continue;
      values = zeros(measures); // trec_eval -c: a bogus non-relevant document stands in
    } else if (relevant.size === 0) {
      counts.withoutRelevant++;
      values = zeros(measures); // trec_eval: recall returns 0 when num_rel = 0; every other measure finds no relevant doc
      countDuplicates(results, counts);
    } else {
      const { ranked, duplicates } = trecRanking(results);
      if (duplicates > 0) {
        counts.duplicates += duplicates;
        counts.queriesWithDuplicates++;
      }
      values = {};
      const head = ranked.slice(0, ks[ks.length - 1]); // every cut measure only looks at the top max(k)
      for (const m of BY_PRINT_ORDER) {
        const gold = graded && m.trec.graded ? gains : relevant;
        // An uncut measure (recip_rank) is the metric over the whole (deduplicated) ranking: k = its length.
        if (!m.trec.cut) values[m.trec.name] = m.fn(ranked, gold, ranked.length) as number;
        else for (const k of ks) values[m.trecName(k)] = m.fn(head, gold, k) as number;
      }
    }
    for (const m of measures) sums[m] = (sums[m] as number) + (values[m] as number);
    perQuery.push({ qid, values });
  }

  const numQueries = perQuery.length;
  const warnings = buildWarnings(counts, { complete, skipEmpty });
  if (numQueries === 0) {
    const why =
      skipEmpty && counts.withoutRelevant > 0
        ? " (with --skip-empty, queries without relevant documents do not count)"
        : "";
    throw new DataValidationError([
      {
        file: files.run ?? "<run>",
        message: `No query has both results and judgments in ${files.qrels ?? "the qrels"}${why}`,
      },
    ]);
  }
  const all: Record<string, number> = {};
  for (const m of measures) all[m] = (sums[m] as number) / numQueries;
  counts.evaluated = numQueries;
  return { measures, perQuery, all, numQueries, counts, warnings, runId: run.runId };
}

function countDuplicates(results: RunQuery, counts: TrecCounts): void {
  const distinct = new Set(results.docnos).size;
  const d = results.docnos.length - distinct;
  if (d > 0) {
    counts.duplicates += d;
    counts.queriesWithDuplicates++;
  }
}

function buildWarnings(c: TrecCounts, o: { complete: boolean; skipEmpty: boolean }): string[] {
  const w: string[] = [];
  const judged = (n: number) => (n === 1 ? "1 judged query" : `${n} judged queries`);
  const was = (n: number) => (n === 1 ? "was" : "were");
  if (c.withoutResults > 0) {
    const n = c.withoutResults;
    w.push(
      o.complete
        ? `${judged(n)} with no results in the run scored 0 and counted in "all" (-c)`
        : `${judged(n)} with no results in the run ${was(n)} left out of "all" (use -c to score ${n === 1 ? "it" : "them"} as 0, as trec_eval -c does)`,
    );
  }
  if (c.duplicates > 0) {
    const d = c.duplicates;
    w.push(
      `${plural(d, "duplicate document")} in ${plural(c.queriesWithDuplicates, "query", "queries")} of the run ${was(d)} ignored (the first in trec order was kept)`,
    );
  }
  if (c.withoutRelevant > 0) {
    const n = c.withoutRelevant;
    w.push(
      o.skipEmpty
        ? `${judged(n)} with no relevant document ${was(n)} skipped (--skip-empty): no score, not counted`
        : `${judged(n)} with no relevant document scored 0 and counted in "all", as trec_eval does (--skip-empty leaves ${n === 1 ? "it" : "them"} out)`,
    );
  }
  if (c.unjudged > 0) {
    const n = c.unjudged;
    w.push(`${plural(n, "query", "queries")} of the run with no judgments ${was(n)} ignored`);
  }
  return w;
}
