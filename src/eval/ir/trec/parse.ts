/**
 * TREC qrels and run files read as trec_eval reads them (the line formats and
 * rules are in the module comment of src/eval/ir/trec.ts).
 *
 * Parsing is incremental and pure (`QrelsParser`, `RunParser`: one line at a
 * time); `readQrels` / `readRun` stream a file through them (the parsed run is
 * held in memory, as trec_eval holds it: about 75 bytes a line). Scoring
 * (score.ts) and formatting (format.ts) are pure functions.
 */
import { DataValidationError, type DataIssue } from "../../../errors.js";
import { forEachTextLine } from "../../../kb/text.js";

/** How many data issues are collected before parsing gives up. */
export const MAX_ISSUES = 50;

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
    this.issues.push(
      field === undefined
        ? { file: this.file, line: this.lineNo, message }
        : { file: this.file, line: this.lineNo, field, message },
    );
  }

  /** The issues found so far (at most MAX_ISSUES). */
  get collected(): readonly DataIssue[] {
    return this.issues;
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
      this.issue(
        "docno",
        `Duplicate judgment of document ${JSON.stringify(docno)} for query ${JSON.stringify(qid)} (first at line ${first})`,
      );
      return;
    }
    judged.set(docno, rel);
    this.firstLine.set(`${qid}\u0000${docno}`, this.lineNo);
  }

  finish(): Qrels {
    this.throwIfIssues();
    if (this.qrels.size === 0)
      throw new DataValidationError([{ file: this.file, message: "Expected at least one judgment, got none" }]);
    return this.qrels;
  }
}

/** Parses a run one line at a time: `qid Q0 docno rank score tag [ignored...]`, score a finite number. */
export class RunParser extends LineParser {
  private readonly queries = new Map<string, RunQuery>();
  private runId: string | null = null;

  push(line: string): void {
    const f = this.check(line);
    if (f === null) return;
    const [qid, , docno] = f.fields as [string, string, string];
    let q = this.queries.get(qid);
    if (q === undefined) {
      q = { docnos: [], scores: [] };
      this.queries.set(qid, q);
    }
    q.docnos.push(docno);
    q.scores.push(f.score);
    this.runId = f.fields[5] as string;
  }

  /** Counts a line read elsewhere (src/eval/ir/trec/compact.ts's fast path) that needed no check here. */
  skipLine(): void {
    this.lineNo++;
  }

  /**
   * Checks one line as `push` does without keeping it: its score when it is a
   * data line, null when it is a comment, blank, or wrong (the issue recorded).
   */
  fields(line: string): number | null {
    return this.check(line)?.score ?? null;
  }

  private check(line: string): { fields: string[]; score: number } | null {
    this.lineNo++;
    if (isComment(line)) return null;
    const f = tokens(line);
    if (f.length === 0) return null;
    if (f.length < 6) {
      this.issue(undefined, `Expected 6 whitespace-separated fields (qid Q0 docno rank score tag), got ${f.length}`);
      return null;
    }
    const scoreRaw = f[4] as string;
    const score = Number(scoreRaw);
    if (!Number.isFinite(score)) {
      this.issue("score", `Expected a finite number, got ${JSON.stringify(scoreRaw)}`);
      return null;
    }
    return { fields: f, score };
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
 * Stream `file` (or stdin for `-`) line by line into `onLine`, through the one
 * text loader's rules (src/kb/text.ts forEachTextLine: regular file, strict
 * UTF-8 with offset and line, BOM removed). Stops early when `stop()` says so.
 */
export async function forEachLine(
  file: string,
  onLine: (line: string) => void,
  stop: () => boolean = () => false,
): Promise<void> {
  await forEachTextLine(file, onLine, stop);
}

/** Read and validate a qrels file, streaming. */
export async function readQrels(file: string): Promise<Qrels> {
  const p = new QrelsParser(file);
  await forEachLine(
    file,
    (l) => p.push(l),
    () => p.saturated,
  );
  return p.finish();
}

/** Read and validate a run file, streaming. */
export async function readRun(file: string): Promise<Run> {
  const p = new RunParser(file);
  await forEachLine(
    file,
    (l) => p.push(l),
    () => p.saturated,
  );
  return p.finish();
}
