/**
 * TREC qrels and run files, scored the way trec_eval scores them, for the
 * measures retrace reports: `success.k`, `recall.k`, `ndcg_cut.k`, `P.k`,
 * `recip_rank` (docs/decisions/0001-metric-contract.md; the values come from src/eval/metrics.ts).
 *
 * What trec_eval does, and what this module does the same way
 * (trec_eval 9.x/10.x: get_qrels.c, get_trec_results.c, form_res_rels.c,
 * trec_eval.c, m_*.c, meas_print_*.c):
 * - qrels lines are `qid iter docno rel`; run lines `qid Q0 docno rank score tag`
 *   (fields after the tag are ignored); `#` lines are comments;
 * - documents are ranked by score descending, ties broken by docno descending
 *   in strcmp (byte) order; the rank column is ignored;
 * - a document is relevant when rel ≥ 1 (relevance_level 1); ndcg_cut with
 *   `graded` uses the rel values as gains, as trec_eval does;
 * - queries are evaluated in strcmp order of qid, over the judged queries;
 *   results for unjudged queries are ignored; a judged query without relevant
 *   documents scores 0 and counts in `all`; with `complete` (trec_eval -c) a
 *   judged query without results scores 0 and counts too;
 * - `all` is the arithmetic mean over the queries evaluated; values print as
 *   `%-22s\t%s\t%6.4f`.
 *
 * Where it deliberately differs (the first three are reported as warnings):
 * - a judged query without results, without `complete`, is left out of `all`
 *   (trec_eval without -c has no clean behaviour here: the 9.x trec_eval.c
 *   reuses the previous query's results for it);
 * - a document listed twice for a query is kept once, at its first position in
 *   trec order (trec_eval stops with "duplicate docs");
 * - `skipEmpty` applies the ADR's empty-gold rule: a judged query with no
 *   relevant document gets no score and is not counted;
 * - without `graded`, ndcg_cut uses binary gains (the ADR's nDCG); trec_eval
 *   always uses the rel values, which is the same on binary qrels.
 *
 * Parsing is incremental and pure (`QrelsParser`, `RunParser`: one line at a
 * time); `readQrels` / `readRun` stream a file through them (the parsed run is
 * held in memory, as trec_eval holds it: about 75 bytes a line). Scoring and
 * formatting are pure functions.
 */
import { createReadStream } from "node:fs";
import type { Readable } from "node:stream";
import { DataValidationError, InvalidArgumentError, type DataIssue } from "../errors.js";
import { dedupeFirst, hitAtK, ndcgAtK, precisionAtK, recallAtK, reciprocalRankAtK } from "./metrics.js";

export const TREC_JSON_VERSION = 1 as const;

/** trec_eval's relevance_level default: rel ≥ 1 is relevant. */
export const RELEVANCE_LEVEL = 1;

/** How many data issues are collected before parsing gives up. */
const MAX_ISSUES = 50;

/** Judgments: qid → docno → rel. */
export type Qrels = Map<string, Map<string, number>>;

/** One query's results as they appear in the run file (file order, duplicates kept). */
export interface RunQuery {
  docnos: string[];
  scores: number[];
}

export interface Run {
  queries: Map<string, RunQuery>;
  /** The tag (run_id) of the last line, as trec_eval keeps it; null for an empty run. */
  runId: string | null;
}

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

/** C's isspace in the "C" locale: space, \t, \n, \v, \f, \r (what trec_eval splits fields on). */
function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

/** Whitespace-separated fields of a line (a hand-rolled scanner: the hot loop of reading a 10 M-line run). */
function tokens(line: string): string[] {
  const out: string[] = [];
  const n = line.length;
  let i = 0;
  while (i < n) {
    while (i < n && isSpace(line.charCodeAt(i))) i++;
    if (i >= n) break;
    const start = i;
    while (i < n && !isSpace(line.charCodeAt(i))) i++;
    out.push(line.slice(start, i));
  }
  return out;
}

function isComment(line: string): boolean {
  let i = 0;
  while (i < line.length && isSpace(line.charCodeAt(i))) i++;
  return line.charCodeAt(i) === 35; // '#'
}

abstract class LineParser {
  protected lineNo = 0;
  protected readonly issues: DataIssue[] = [];
  constructor(readonly file: string) {}

  protected issue(field: string | undefined, message: string): void {
    if (this.issues.length >= MAX_ISSUES) return;
    this.issues.push(field === undefined ? { file: this.file, line: this.lineNo, message } : { file: this.file, line: this.lineNo, field, message });
  }

  /** True once enough issues were found that reading on is pointless. */
  get saturated(): boolean {
    return this.issues.length >= MAX_ISSUES;
  }

  protected throwIfIssues(): void {
    if (this.issues.length > 0) throw new DataValidationError(this.issues);
  }
}

/** Parses qrels one line at a time: `qid iter docno rel`, rel an integer. */
export class QrelsParser extends LineParser {
  private readonly qrels: Qrels = new Map();
  private readonly firstLine = new Map<string, number>();

  push(line: string): void {
    this.lineNo++;
    if (isComment(line)) return;
    const f = tokens(line);
    if (f.length === 0) return;
    if (f.length !== 4) {
      this.issue(undefined, `Expected 4 whitespace-separated fields (qid iter docno rel), got ${f.length}`);
      return;
    }
    const [qid, , docno, relRaw] = f as [string, string, string, string];
    if (!/^[+-]?\d+$/.test(relRaw)) {
      this.issue("rel", `Expected an integer relevance, got ${JSON.stringify(relRaw)}`);
      return;
    }
    const rel = Number(relRaw);
    let judged = this.qrels.get(qid);
    if (judged === undefined) {
      judged = new Map();
      this.qrels.set(qid, judged);
    }
    if (judged.has(docno)) {
      const first = this.firstLine.get(`${qid}\u0000${docno}`);
      this.issue("docno", `Duplicate judgment of document ${JSON.stringify(docno)} for query ${JSON.stringify(qid)} (first at line ${first})`);
      return;
    }
    judged.set(docno, rel);
    this.firstLine.set(`${qid}\u0000${docno}`, this.lineNo);
  }

  finish(): Qrels {
    this.throwIfIssues();
    if (this.qrels.size === 0) throw new DataValidationError([{ file: this.file, message: "Expected at least one judgment, got none" }]);
    return this.qrels;
  }
}

/** Parses a run one line at a time: `qid Q0 docno rank score tag [ignored...]`, score a finite number. */
export class RunParser extends LineParser {
  private readonly queries = new Map<string, RunQuery>();
  private runId: string | null = null;

  push(line: string): void {
    this.lineNo++;
    if (isComment(line)) return;
    const f = tokens(line);
    if (f.length === 0) return;
    if (f.length < 6) {
      this.issue(undefined, `Expected 6 whitespace-separated fields (qid Q0 docno rank score tag), got ${f.length}`);
      return;
    }
    const qid = f[0] as string;
    const docno = f[2] as string;
    const scoreRaw = f[4] as string;
    const score = Number(scoreRaw);
    if (!Number.isFinite(score)) {
      this.issue("score", `Expected a finite number, got ${JSON.stringify(scoreRaw)}`);
      return;
    }
    let q = this.queries.get(qid);
    if (q === undefined) {
      q = { docnos: [], scores: [] };
      this.queries.set(qid, q);
    }
    q.docnos.push(docno);
    q.scores.push(score);
    this.runId = f[5] as string;
  }

  finish(): Run {
    this.throwIfIssues();
    return { queries: this.queries, runId: this.runId };
  }
}

/** Parse qrels text (tests, small inputs). */
export function parseQrels(text: string, file = "<qrels>"): Qrels {
  const p = new QrelsParser(file);
  for (const line of splitLines(text)) p.push(line);
  return p.finish();
}

/** Parse run text (tests, small inputs). */
export function parseRun(text: string, file = "<run>"): Run {
  const p = new RunParser(file);
  for (const line of splitLines(text)) p.push(line);
  return p.finish();
}

function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/**
 * Stream `file` (or stdin for `-`) line by line into `onLine`, in large chunks,
 * without holding the file in memory. Stops early when `stop()` says so.
 * A file that cannot be read becomes a DataValidationError naming it.
 */
export async function forEachLine(file: string, onLine: (line: string) => void, stop: () => boolean = () => false): Promise<void> {
  const stream: Readable = file === "-" ? process.stdin : createReadStream(file, { highWaterMark: 1 << 20 });
  stream.setEncoding("utf8");
  let rest = "";
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      const text = rest + chunk;
      let start = 0;
      let nl = text.indexOf("\n", start);
      while (nl !== -1) {
        onLine(text.slice(start, nl));
        start = nl + 1;
        nl = text.indexOf("\n", start);
      }
      rest = text.slice(start);
      if (stop()) {
        if (file !== "-") stream.destroy();
        return;
      }
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : e instanceof Error ? e.message : String(e);
    throw new DataValidationError([{ file, message: `Cannot read the file: ${why}` }]);
  }
  if (rest !== "") onLine(rest);
}

/** Read and validate a qrels file, streaming. */
export async function readQrels(file: string): Promise<Qrels> {
  const p = new QrelsParser(file);
  await forEachLine(file, (l) => p.push(l), () => p.saturated);
  return p.finish();
}

/** Read and validate a run file, streaming. */
export async function readRun(file: string): Promise<Run> {
  const p = new RunParser(file);
  await forEachLine(file, (l) => p.push(l), () => p.saturated);
  return p.finish();
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

/** Measure names for the cutoffs, in trec_eval's print order (measures.c). */
export function trecMeasureNames(ks: readonly number[]): string[] {
  return ["recip_rank", ...ks.map((k) => `P_${k}`), ...ks.map((k) => `recall_${k}`), ...ks.map((k) => `ndcg_cut_${k}`), ...ks.map((k) => `success_${k}`)];
}

function zeros(measures: readonly string[]): Record<string, number> {
  const v: Record<string, number> = {};
  for (const m of measures) v[m] = 0;
  return v;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * Score a run against qrels as trec_eval does (see the module comment for the
 * three documented departures). Pure: no I/O; inputs are not mutated.
 * Throws DataValidationError when no query can be evaluated (trec_eval: "No
 * queries with both results and relevance info").
 */
export function scoreTrec(qrels: Qrels, run: Run, options: TrecOptions, files: { qrels?: string; run?: string } = {}): TrecScores {
  const ks = normalizeCutoffs(options.ks);
  const measures = trecMeasureNames(ks);
  const complete = options.complete ?? false;
  const skipEmpty = options.skipEmpty ?? false;
  const graded = options.graded ?? false;

  const counts: TrecCounts = { judged: qrels.size, evaluated: 0, withoutResults: 0, withoutRelevant: 0, unjudged: 0, duplicates: 0, queriesWithDuplicates: 0 };
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
      // trec's recip_rank is not cut: reciprocal rank over the whole (deduplicated) ranking. Only the prefix
      // up to the first relevant document matters, so the metric gets just that.
      const first = ranked.findIndex((d) => relevant.has(d));
      values.recip_rank = first === -1 ? 0 : (reciprocalRankAtK(ranked.slice(0, first + 1), relevant, first + 1) as number);
      const head = ranked.slice(0, ks[ks.length - 1]); // every cut measure only looks at the top max(k)
      for (const k of ks) values[`P_${k}`] = precisionAtK(head, relevant, k) as number;
      for (const k of ks) values[`recall_${k}`] = recallAtK(head, relevant, k) as number;
      for (const k of ks) values[`ndcg_cut_${k}`] = ndcgAtK(head, graded ? gains : relevant, k) as number;
      for (const k of ks) values[`success_${k}`] = hitAtK(head, relevant, k) as number;
    }
    for (const m of measures) sums[m] = (sums[m] as number) + (values[m] as number);
    perQuery.push({ qid, values });
  }

  const numQueries = perQuery.length;
  const warnings = buildWarnings(counts, { complete, skipEmpty });
  if (numQueries === 0) {
    const why = skipEmpty && counts.withoutRelevant > 0 ? " (with --skip-empty, queries without relevant documents do not count)" : "";
    throw new DataValidationError([{ file: files.run ?? "<run>", message: `No query has both results and judgments in ${files.qrels ?? "the qrels"}${why}` }]);
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

/**
 * `%6.4f` exactly as C's printf renders a double: correctly rounded, and an
 * exact tie (a value of the form odd/32, e.g. 0.40625) rounded half to even,
 * where JS `toFixed` would round it up.
 */
export function formatTrecValue(x: number): string {
  let s: string;
  const scaled = x * 32; // exact: a power of two
  if (Number.isInteger(scaled) && Math.abs(scaled) % 2 === 1 && Math.abs(x) < 2 ** 40) {
    const t = Math.abs(x) * 10000; // exact for odd/32 values
    const lo = Math.floor(t);
    const n = lo % 2 === 0 ? lo : lo + 1;
    s = `${x < 0 ? "-" : ""}${(n / 10000).toFixed(4)}`;
  } else {
    s = x.toFixed(4);
  }
  return s.padStart(6);
}

/** One trec_eval output row: `%-22s\t%s\t%6.4f`. */
export function formatTrecRow(measure: string, qid: string, value: number): string {
  return `${measure.padEnd(22)}\t${qid}\t${formatTrecValue(value)}`;
}

/** trec_eval's text layout: per-query rows (query by query) when `perQuery`, then the `all` rows. */
export function formatTrecText(s: TrecScores, opts: { perQuery?: boolean } = {}): string {
  const rows: string[] = [];
  if (opts.perQuery ?? false) {
    for (const q of s.perQuery) for (const m of s.measures) rows.push(formatTrecRow(m, q.qid, q.values[m] as number));
  }
  for (const m of s.measures) rows.push(formatTrecRow(m, "all", s.all[m] as number));
  return `${rows.join("\n")}\n`;
}

export interface TrecJson {
  version: typeof TREC_JSON_VERSION;
  measures: string[];
  perQuery: Record<string, Record<string, number>>;
  all: Record<string, number>;
  numQueries: number;
  warnings: string[];
}

/** The same numbers as the text output, unrounded, for machines. */
export function toTrecJson(s: TrecScores): TrecJson {
  const perQuery: Record<string, Record<string, number>> = {};
  for (const q of s.perQuery) perQuery[q.qid] = q.values;
  return { version: TREC_JSON_VERSION, measures: s.measures, perQuery, all: s.all, numQueries: s.numQueries, warnings: s.warnings };
}
