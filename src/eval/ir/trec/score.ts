/**
 * A run scored against qrels the way trec_eval scores them: without `-m` the
 * measures retrace reports (`success.k`, `recall.k`, `ndcg_cut.k`, `P.k`,
 * `recip_rank`; docs/decisions/0001-metric-contract.md), with `-m` any of
 * trec_eval's that retrace implements (./measures.ts computes them over each
 * query's ranked relevance list, as trec_eval's m_*.c do).
 * What it does as trec_eval does, and where it deliberately differs, is in
 * the module comment of src/eval/ir/trec.ts. Pure functions: no I/O.
 */
import { DataValidationError, InvalidArgumentError } from "../../../errors.js";
import { dedupeFirst, METRICS, type MetricSpec } from "../../measures/metrics.js";
import {
  ALL_TREC_NOT_IMPLEMENTED,
  defaultSelection,
  evaluateQuery,
  MIN_GEO_MEAN,
  NONPOOL,
  queryJudgments,
  rowNames,
  selectMeasures,
  UNJUDGED,
  type Aggregate,
  type EvalSettings,
  type SelectedMeasure,
} from "./measures.js";
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
  /**
   * Cutoffs for success, recall, ndcg_cut and P (sorted and deduplicated, as
   * trec_eval does) of the default selection; not used with `measures`.
   */
  ks?: readonly number[];
  /**
   * trec_eval's `-m` arguments (`map`, `P.5,10`, `unj.5,10`, `all_trec`,
   * `official`): the measures printed, in trec_eval's order. Without it:
   * recip_rank, P, recall, ndcg_cut and success at `ks`.
   */
  measures?: readonly string[];
  /** trec_eval -c: judged queries without results are scored over an empty ranking and count in `all`. */
  complete?: boolean;
  /** The ADR's empty-gold rule: judged queries with no relevant document get no score and are not counted. */
  skipEmpty?: boolean;
  /** ndcg_cut and rbp use the qrels rel values as gains (trec_eval's); otherwise binary gains. */
  graded?: boolean;
  /** trec_eval -J: rank only the judged documents (the condensed, judged-only ranking). */
  judgedOnly?: boolean;
  /** trec_eval -M: only the first `depth` documents of each query's ranking count. */
  depth?: number;
  /** trec_eval -l: a document is relevant when its rel ≥ this (default 1). */
  relevanceLevel?: number;
}

export interface TrecCounts {
  /** Queries in the qrels. */
  judged: number;
  /** Queries evaluated (the denominator of `all`). */
  evaluated: number;
  /** Judged queries with no results in the run (scored over an empty ranking with `complete`, else left out); not counting those skipped by `skipEmpty`. */
  withoutResults: number;
  /** Judged queries with no relevant document: all of them skipped with `skipEmpty`; else those with results (scored, and counted). */
  withoutRelevant: number;
  /** Queries in the run that have no judgments (ignored). */
  unjudged: number;
  /** Duplicate documents dropped, and in how many queries. */
  duplicates: number;
  queriesWithDuplicates: number;
}

export interface TrecScores {
  /**
   * Row names in trec_eval's print order (`runid` aside): without `-m`
   * recip_rank, P_k..., recall_k..., ndcg_cut_k..., success_k...; with it,
   * the selected measures (`num_ret`, `map`, `map_cut_10`, `unj_5`...).
   */
  measures: string[];
  /** Rows printed as integers (`%ld`: num_q, num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret). */
  integerMeasures: string[];
  /** Rows printed only in `all` (num_q, gm_map, gm_bpref): absent from `perQuery`. */
  allOnlyMeasures: string[];
  /** trec_eval's `runid all TAG` row comes first (`-m` with runid, official or all_trec). */
  printRunId: boolean;
  /** Evaluated queries in trec_eval's order (strcmp of qid), each with a value per per-query measure. */
  perQuery: Array<{ qid: string; values: Record<string, number> }>;
  /** The `all` value of each measure: the mean over the evaluated queries; a sum for counts; a geometric mean for gm_*. */
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

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What scoring needs besides the inputs: the selection, its rows, and the settings. */
export interface ScorePlan {
  selected: SelectedMeasure[];
  /** Row names in print order, allOnly rows included (runid excluded). */
  rows: string[];
  /** Per row: index into the query's value vector. */
  aggregate: Aggregate[];
  integer: boolean[];
  allOnly: boolean[];
  printRunId: boolean;
  settings: EvalSettings;
  complete: boolean;
  skipEmpty: boolean;
  judgedOnly: boolean;
  depth: number;
  /** The warning `-m all_trec` gives about trec_eval measures not implemented, if any. */
  notImplemented: string | null;
}

/** Validate the options and turn them into a plan (throws InvalidArgumentError on bad cutoffs, measures, depth or level). */
export function scorePlan(options: TrecOptions): ScorePlan {
  let selected: SelectedMeasure[];
  if (options.measures !== undefined && options.measures.length > 0) selected = selectMeasures(options.measures);
  else selected = defaultSelection(normalizeCutoffs(options.ks ?? []));
  const depth = options.depth ?? Number.POSITIVE_INFINITY;
  if (options.depth !== undefined && (!Number.isInteger(depth) || depth <= 0))
    throw new InvalidArgumentError("-M", "a positive integer (documents per query)", options.depth);
  const relevanceLevel = options.relevanceLevel ?? RELEVANCE_LEVEL;
  if (!Number.isInteger(relevanceLevel) || relevanceLevel < 1)
    throw new InvalidArgumentError("-l", "a positive integer (the lowest relevant rel value)", relevanceLevel);
  const printRunId = selected.some((m) => m.spec.name === "runid");
  const scored = selected.filter((m) => m.spec.name !== "runid");
  const rows = rowNames(scored);
  const aggregate: Aggregate[] = [];
  const integer: boolean[] = [];
  const allOnly: boolean[] = [];
  for (const m of scored) {
    const n = m.spec.defaultCutoffs === undefined ? 1 : m.cutoffs.length;
    for (let i = 0; i < n; i++) {
      aggregate.push(m.spec.aggregate);
      integer.push(m.spec.integer);
      allOnly.push(m.spec.allOnly);
    }
  }
  const allTrec = options.measures?.includes("all_trec") ?? false;
  return {
    selected: scored,
    rows,
    aggregate,
    integer,
    allOnly,
    printRunId,
    settings: { relevanceLevel, graded: options.graded ?? false },
    complete: options.complete ?? false,
    skipEmpty: options.skipEmpty ?? false,
    judgedOnly: options.judgedOnly ?? false,
    depth,
    notImplemented: allTrec
      ? `-m all_trec: trec_eval's ${ALL_TREC_NOT_IMPLEMENTED.join(", ")} are not implemented by retrace score and not printed`
      : null,
  };
}

/**
 * The ranked relevance list of one query's ranked documents: each document's
 * qrels value, NONPOOL when not judged, UNJUDGED for a negative qrels value;
 * cut at `depth`; with `judgedOnly`, only the judged documents, in order.
 */
export function rankedRels(
  ranked: readonly string[],
  judged: ReadonlyMap<string, number>,
  depth: number,
  judgedOnly: boolean,
): number[] {
  const rels: number[] = [];
  const n = Math.min(ranked.length, depth);
  for (let i = 0; i < n; i++) {
    const r = judged.get(ranked[i] as string);
    const v = r === undefined ? NONPOOL : r < 0 ? UNJUDGED : r;
    if (judgedOnly && v < 0) continue;
    rels.push(v);
  }
  return rels;
}

/** Per-query values and `all` from each query's value vector, in qid order. */
export class ScoreAccumulator {
  readonly perQuery: TrecScores["perQuery"] = [];
  private readonly sums: Float64Array;
  constructor(private readonly plan: ScorePlan) {
    this.sums = new Float64Array(plan.rows.length);
  }

  add(qid: string, v: ArrayLike<number>): void {
    const { rows, aggregate, allOnly } = this.plan;
    const values: Record<string, number> = {};
    for (let i = 0; i < rows.length; i++) {
      const x = v[i] as number;
      this.sums[i] = (this.sums[i] as number) + (aggregate[i] === "gm" ? Math.log(Math.max(x, MIN_GEO_MEAN)) : x);
      if (!allOnly[i]) values[rows[i] as string] = x;
    }
    this.perQuery.push({ qid, values });
  }

  all(): Record<string, number> {
    const n = this.perQuery.length;
    const all: Record<string, number> = {};
    const { rows, aggregate } = this.plan;
    for (let i = 0; i < rows.length; i++) {
      const s = this.sums[i] as number;
      all[rows[i] as string] = aggregate[i] === "sum" ? s : aggregate[i] === "gm" ? Math.exp(s / n) : s / n;
    }
    return all;
  }
}

/**
 * Score a run against qrels as trec_eval does (see the module comment of
 * src/eval/ir/trec.ts for the documented departures). Pure: no I/O;
 * inputs are not mutated. Throws DataValidationError when no query can be
 * evaluated (trec_eval: "No queries with both results and relevance info").
 */
export function scoreTrec(
  qrels: Qrels,
  run: Run,
  options: TrecOptions,
  files: { qrels?: string; run?: string } = {},
): TrecScores {
  const plan = scorePlan(options);
  const L = plan.settings.relevanceLevel;

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

  const acc = new ScoreAccumulator(plan);
  const qids = [...qrels.keys()].sort(strcmp);
  const values = new Float64Array(plan.rows.length);

  for (const qid of qids) {
    const judged = qrels.get(qid) as Map<string, number>;
    const qj = queryJudgments(judged.values(), L);
    const results = run.queries.get(qid);
    const hasResults = results !== undefined && results.docnos.length > 0;
    if (qj.numRel === 0 && plan.skipEmpty) {
      counts.withoutRelevant++;
      continue;
    }
    let rels: number[] = [];
    if (!hasResults) {
      counts.withoutResults++;
      if (!plan.complete) continue; // trec_eval -c: scored over an empty ranking
    } else {
      if (qj.numRel === 0) counts.withoutRelevant++;
      const { ranked, duplicates } = trecRanking(results);
      if (duplicates > 0) {
        counts.duplicates += duplicates;
        counts.queriesWithDuplicates++;
      }
      rels = rankedRels(ranked, judged, plan.depth, plan.judgedOnly);
    }
    evaluateQuery(rels, rels.length, qj, plan.selected, plan.settings, values);
    acc.add(qid, values);
  }
  return finishScores(plan, acc, counts, run.runId, files);
}

/** The `all` rows, the counts and the warnings; throws when no query was evaluated. */
export function finishScores(
  plan: ScorePlan,
  acc: ScoreAccumulator,
  counts: TrecCounts,
  runId: string | null,
  files: { qrels?: string; run?: string },
): TrecScores {
  const numQueries = acc.perQuery.length;
  const warnings = buildWarnings(counts, plan);
  if (plan.notImplemented !== null) warnings.push(plan.notImplemented);
  if (numQueries === 0) {
    const why =
      plan.skipEmpty && counts.withoutRelevant > 0
        ? " (with --skip-empty, queries without relevant documents do not count)"
        : "";
    throw new DataValidationError([
      {
        file: files.run ?? "<run>",
        message: `No query has both results and judgments in ${files.qrels ?? "the qrels"}${why}`,
      },
    ]);
  }
  counts.evaluated = numQueries;
  return {
    measures: plan.rows,
    integerMeasures: plan.rows.filter((_, i) => plan.integer[i]),
    allOnlyMeasures: plan.rows.filter((_, i) => plan.allOnly[i]),
    printRunId: plan.printRunId,
    perQuery: acc.perQuery,
    all: acc.all(),
    numQueries,
    counts,
    warnings,
    runId,
  };
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
