/**
 * BEIR-layout datasets (`corpus.jsonl`, `queries.jsonl`, `qrels/test.tsv`)
 * for `retrace beir` (docs/fusion-and-tuning.md): a validating loader (every
 * problem named by file, line and field; exit 2), the documents as chunks for
 * the real ingest, and the scoring of a run with the trec_eval-exact scorer
 * (src/eval/ir/trec.ts) with graded qrels as nDCG gains.
 *
 * Measures, each per judged query with at least one positive judgment:
 * nDCG@10 (`ndcg_cut_10`, graded gains), R@100 (`recall_100`), success@10
 * (`success_10`) and MRR@10 (trec's `recip_rank` of the run cut at 10).
 * A judged query without results scores 0 (trec_eval -c).
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readTextFileOrThrow } from "../kb/text.js";
import path from "node:path";
import { DataValidationError, InvalidArgumentError, type DataIssue } from "../errors.js";
import type { Chunk } from "../kb/types.js";
import { bootstrapCI, pairedComparison, type PairedComparison } from "../eval/stats/bootstrap.js";
import { scoreTrec, type Qrels, type Run } from "../eval/ir/trec.js";
import { parseJsonOrIssue } from "../kb/json.js";

export interface BeirDocument {
  id: string;
  title: string;
  text: string;
}

export interface BeirQuery {
  id: string;
  text: string;
}

export interface BeirDataset {
  dir: string;
  corpus: BeirDocument[];
  /** Queries that have at least one judgment, in file order. */
  queries: BeirQuery[];
  qrels: Qrels;
  /** sha256 of the corpus (ids, titles, texts in file order): names the Chroma collection. */
  corpusHash: string;
}

export const BEIR_FILES = {
  corpus: "corpus.jsonl",
  queries: "queries.jsonl",
  qrels: path.join("qrels", "test.tsv"),
} as const;
/** A collection's own training part, where it has one (BEIR's SciFact: `queries_train.jsonl` + `qrels/train.tsv`; `retrace beir --tune --split`). */
export const BEIR_TRAIN_FILES = { queries: "queries_train.jsonl", qrels: path.join("qrels", "train.tsv") } as const;
const MAX_ISSUES = 50;

function jsonlRows(
  text: string,
  file: string,
  issues: DataIssue[],
): Array<{ line: number; row: Record<string, unknown> }> {
  const rows: Array<{ line: number; row: Record<string, unknown> }> = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = i === 0 ? raw.replace(/^\uFEFF/, "") : raw;
    if (line.trim() === "" || issues.length >= MAX_ISSUES) return;
    const json = parseJsonOrIssue(line, { file, line: i + 1, expected: "one JSON object a line" }); // line and column (src/kb/json.ts)
    if ("issue" in json) {
      issues.push(json.issue);
      return;
    }
    const row = json.value;
    if (typeof row !== "object" || row === null || Array.isArray(row)) {
      issues.push({ file, line: i + 1, message: "expected a JSON object" });
      return;
    }
    rows.push({ line: i + 1, row: row as Record<string, unknown> });
  });
  return rows;
}

function stringField(
  row: Record<string, unknown>,
  key: string,
  where: { file: string; line: number },
  issues: DataIssue[],
  optional = false,
): string | undefined {
  const v = row[key];
  if (typeof v === "string" && (key !== "_id" || v !== "")) return v;
  if (typeof v === "number" && Number.isFinite(v) && key === "_id") return String(v);
  if (v === undefined && optional) return "";
  issues.push({
    ...where,
    field: key,
    message: `expected ${key === "_id" ? "a non-empty string id" : "a string"}, got ${JSON.stringify(v) ?? "nothing"}`,
  });
  return undefined;
}

/** The documents of a corpus.jsonl (issues collected: not JSON, `_id`/`text` missing or not strings, duplicate ids). */
async function readCorpus(file: string, issues: DataIssue[]): Promise<BeirDocument[]> {
  const corpus: BeirDocument[] = [];
  const docIds = new Set<string>();
  for (const { line, row } of jsonlRows(await readTextFileOrThrow(file), file, issues)) {
    const where = { file, line };
    const id = stringField(row, "_id", where, issues);
    const title = stringField(row, "title", where, issues, true);
    const text = stringField(row, "text", where, issues);
    if (id === undefined || title === undefined || text === undefined) continue;
    if (docIds.has(id)) issues.push({ ...where, field: "_id", message: `duplicate document id ${JSON.stringify(id)}` });
    docIds.add(id);
    corpus.push({ id, title, text });
  }
  return corpus;
}

/** Whether a BEIR folder has its queries and qrels (without them only the corpus can be used: `retrace beir --synthetic`, `retrace cases synth --beir`). */
export function hasJudgments(dir: string): boolean {
  return existsSync(path.join(dir, BEIR_FILES.queries)) && existsSync(path.join(dir, BEIR_FILES.qrels));
}

/** A BEIR folder's corpus alone (corpus.jsonl validated as by loadBeirDataset; no queries or qrels needed). `qrels` is empty, `queries` too. */
export async function loadBeirCorpus(dir: string): Promise<BeirDataset> {
  const file = path.join(dir, BEIR_FILES.corpus);
  if (!existsSync(file)) throw new DataValidationError([{ file, message: "missing (a BEIR folder has corpus.jsonl)" }]);
  const issues: DataIssue[] = [];
  const corpus = await readCorpus(file, issues);
  if (issues.length > 0) throw new DataValidationError(issues);
  return { dir, corpus, queries: [], qrels: new Map(), corpusHash: corpusHashOf(corpus) };
}

function corpusHashOf(corpus: readonly BeirDocument[]): string {
  const h = createHash("sha256");
  for (const d of corpus) h.update(JSON.stringify([d.id, d.title, d.text])).update("\u0000");
  return h.digest("hex");
}

/**
 * Reads and validates a BEIR folder. Errors (all collected, up to 50, then one
 * DataValidationError, exit 2): a missing file; a line that is not a JSON
 * object; `_id` or `text` missing or not a string (`title` may be absent);
 * a duplicate `_id`; a qrels line without three tab-separated fields, a
 * `score` that is not an integer, or a `query-id` / `corpus-id` that names no
 * query / document. The header line `query-id corpus-id score` is skipped.
 * `part` names another queries + qrels pair over the same corpus (BEIR_TRAIN_FILES).
 */
export async function loadBeirDataset(
  dir: string,
  part: { queries: string; qrels: string } = BEIR_FILES,
): Promise<BeirDataset> {
  const files = {
    corpus: path.join(dir, BEIR_FILES.corpus),
    queries: path.join(dir, part.queries),
    qrels: path.join(dir, part.qrels),
  };
  const missing = Object.values(files).filter((f) => !existsSync(f));
  if (missing.length > 0)
    throw new DataValidationError(
      missing.map((file) => ({
        file,
        message: "missing (a BEIR folder has corpus.jsonl, queries.jsonl and qrels/test.tsv)",
      })),
    );
  const issues: DataIssue[] = [];

  const corpus = await readCorpus(files.corpus, issues);
  const docIds = new Set(corpus.map((d) => d.id));

  const allQueries: Array<BeirQuery & { line: number }> = [];
  const queryIds = new Set<string>();
  for (const { line, row } of jsonlRows(await readTextFileOrThrow(files.queries), files.queries, issues)) {
    const where = { file: files.queries, line };
    const id = stringField(row, "_id", where, issues);
    const text = stringField(row, "text", where, issues);
    if (id === undefined || text === undefined) continue;
    if (queryIds.has(id)) issues.push({ ...where, field: "_id", message: `duplicate query id ${JSON.stringify(id)}` });
    queryIds.add(id);
    allQueries.push({ id, text, line });
  }

  const qrels: Qrels = new Map();
  (await readTextFileOrThrow(files.qrels)).split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === "" || issues.length >= MAX_ISSUES) return;
    const cells = line.split("\t");
    if (i === 0 && cells[0] === "query-id") return;
    const where = { file: files.qrels, line: i + 1 };
    if (cells.length !== 3) {
      issues.push({
        ...where,
        message: `expected 3 tab-separated fields (query-id, corpus-id, score), got ${cells.length}`,
      });
      return;
    }
    const [qid, did, score] = cells as [string, string, string];
    if (!queryIds.has(qid))
      issues.push({
        ...where,
        field: "query-id",
        message: `no query with id ${JSON.stringify(qid)} in ${part.queries}`,
      });
    if (!docIds.has(did))
      issues.push({
        ...where,
        field: "corpus-id",
        message: `no document with id ${JSON.stringify(did)} in ${BEIR_FILES.corpus}`,
      });
    if (!/^-?\d+$/.test(score.trim()))
      issues.push({ ...where, field: "score", message: `expected an integer grade, got ${JSON.stringify(score)}` });
    else {
      let m = qrels.get(qid);
      if (m === undefined) {
        m = new Map();
        qrels.set(qid, m);
      }
      m.set(did, Number(score.trim()));
    }
  });
  if (issues.length > 0) throw new DataValidationError(issues);
  if (qrels.size === 0) throw new DataValidationError([{ file: files.qrels, message: "no judgments" }]);

  return {
    dir,
    corpus,
    queries: allQueries.filter((q) => qrels.has(q.id)).map(({ id, text }) => ({ id, text })),
    qrels,
    corpusHash: corpusHashOf(corpus),
  };
}

/** The documents as chunks of the retrieval stack: one chunk a document, its own parent, English, text = title + " " + text. */
export function beirChunks(corpus: readonly BeirDocument[]): Chunk[] {
  return corpus.map((d) => ({
    id: d.id,
    parentId: d.id,
    locale: "en",
    title: d.title,
    section: "",
    text: d.title === "" ? d.text : `${d.title} ${d.text}`,
  }));
}

export const BEIR_MEASURES = ["ndcg@10", "recall@100", "mrr@10", "success@10"] as const;
export type BeirMeasure = (typeof BEIR_MEASURES)[number];

export interface BeirScores {
  /** Queries scored (judged, with at least one positive judgment). */
  n: number;
  mean: Record<BeirMeasure, number>;
  ci95: Record<BeirMeasure, [number, number] | null>;
  perQuery: Record<BeirMeasure, Map<string, number>>;
}

/** Keeps each query's first `depth` documents (file order). */
export function cutRun(run: Run, depth: number): Run {
  const queries = new Map<string, { docnos: string[]; scores: number[] }>();
  for (const [qid, q] of run.queries)
    queries.set(qid, { docnos: q.docnos.slice(0, depth), scores: q.scores.slice(0, depth) });
  return { queries, runId: run.runId };
}

/**
 * Scores a run on the four BEIR measures with the trec_eval-exact scorer
 * (graded gains, -c, queries without a positive judgment skipped), plus a
 * percentile bootstrap interval over queries (seeded) for each mean.
 * The run must list each query's documents in rank order with strictly
 * decreasing scores (as `toTrecRun` writes them), so trec order = our order.
 */
export function scoreBeirRun(qrels: Qrels, run: Run, opts: { seed: number; samples?: number }): BeirScores {
  const full = scoreTrec(qrels, run, { ks: [10, 100], complete: true, skipEmpty: true, graded: true });
  const at10 = scoreTrec(qrels, cutRun(run, 10), { ks: [10], complete: true, skipEmpty: true, graded: true });
  const perQuery: BeirScores["perQuery"] = {
    "ndcg@10": new Map(),
    "recall@100": new Map(),
    "mrr@10": new Map(),
    "success@10": new Map(),
  };
  for (const q of full.perQuery) {
    perQuery["ndcg@10"].set(q.qid, q.values.ndcg_cut_10 as number);
    perQuery["recall@100"].set(q.qid, q.values.recall_100 as number);
    perQuery["success@10"].set(q.qid, q.values.success_10 as number);
  }
  for (const q of at10.perQuery) perQuery["mrr@10"].set(q.qid, q.values.recip_rank as number);
  const mean = {} as Record<BeirMeasure, number>;
  const ci95 = {} as Record<BeirMeasure, [number, number] | null>;
  for (const m of BEIR_MEASURES) {
    const values = [...perQuery[m].entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map((e) => e[1]);
    mean[m] = values.length === 0 ? 0 : values.reduce((s, v) => s + v, 0) / values.length;
    ci95[m] = bootstrapCI(values, {
      seed: opts.seed,
      ...(opts.samples !== undefined ? { samples: opts.samples } : {}),
    });
  }
  return { n: full.numQueries, mean, ci95, perQuery };
}

/** Paired comparison (B − A) of two modes on one measure: sign-flip randomization test and bootstrap CI over queries. */
export function compareModes(
  a: BeirScores,
  b: BeirScores,
  measure: BeirMeasure,
  seed: number,
): PairedComparison | null {
  return pairedComparison(a.perQuery[measure], b.perQuery[measure], { seed });
}

/**
 * A run from ranked id lists: each query's ids in rank order, score
 * `depth − rank + 1` (strictly decreasing, so trec_eval ranks them exactly in
 * retrace's order, ties already broken by id), tag `runId`.
 */
export function toRun(ranked: ReadonlyMap<string, readonly string[]>, runId: string): Run {
  const queries = new Map<string, { docnos: string[]; scores: number[] }>();
  for (const [qid, ids] of ranked) queries.set(qid, { docnos: [...ids], scores: ids.map((_, i) => ids.length - i) });
  return { queries, runId };
}

/** The TREC run file text (`qid Q0 docno rank score tag`), queries in the order given. @throws InvalidArgumentError (exit 2) for an id with white space, which a whitespace-separated file cannot hold. */
export function formatTrecRun(run: Run): string {
  const token = (what: string, s: string) => {
    if (s === "" || /\s/.test(s))
      throw new InvalidArgumentError(
        what,
        "a non-empty id without whitespace (TREC fields are whitespace-separated)",
        s,
      );
    return s;
  };
  const lines: string[] = [];
  const tag = token("run tag", run.runId ?? "retrace");
  for (const [qid, q] of run.queries)
    q.docnos.forEach((d, i) =>
      lines.push(
        `${token("query id", qid)} Q0 ${token(`document id retrieved for ${qid}`, d)} ${i + 1} ${q.scores[i]} ${tag}`,
      ),
    );
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

/** The measures the margin over the best stage is reported on (the issue's targets: nDCG@10, and R@100 for a first stage). */
export const MARGIN_MEASURES = ["ndcg@10", "recall@100"] as const;
export type MarginMeasure = (typeof MARGIN_MEASURES)[number];

/** A fused mode against the better of its two stages on one measure. */
export interface StageMargin {
  /** The stage with the higher mean on this measure (bm25 on a tie: the cheaper one). */
  bestStage: "bm25" | "dense";
  /** fused − bestStage, paired over queries: diff, bootstrap interval, sign-flip p. */
  comparison: PairedComparison;
}

/**
 * The margin of a fused mode over its best stage, per measure: the stage
 * (bm25 or dense) with the higher mean on that measure, and the paired
 * comparison fused − that stage over queries (sign-flip randomization test,
 * bootstrap interval; seeded). The best stage is chosen per measure (dense
 * can be the better stage on R@100 and BM25 on nDCG@10). Null for a measure
 * when either stage or the fused mode is missing or nothing is paired.
 *
 * The interval does not account for choosing the better stage on the same
 * queries (that choice favours the stage, so the margin is, if anything,
 * understated).
 */
export function marginOverBestStage(
  stages: { bm25?: BeirScores; dense?: BeirScores },
  fused: BeirScores,
  seed: number,
): Record<MarginMeasure, StageMargin | null> {
  const out = {} as Record<MarginMeasure, StageMargin | null>;
  for (const m of MARGIN_MEASURES) {
    const { bm25, dense } = stages;
    if (bm25 === undefined || dense === undefined) {
      out[m] = null;
      continue;
    }
    const bestStage = dense.mean[m] > bm25.mean[m] ? "dense" : "bm25";
    const comparison = compareModes(bestStage === "dense" ? dense : bm25, fused, m, seed);
    out[m] = comparison === null ? null : { bestStage, comparison };
  }
  return out;
}
