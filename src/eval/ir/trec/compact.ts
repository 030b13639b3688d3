/**
 * `retrace score`'s fast path for large runs (docs/metrics.md, "Speed"): the
 * run is read byte by byte into typed arrays (no string per line: docnos are
 * bytes in one arena with a hash, qids are interned once per change), then
 * each query is ranked, deduplicated and looked up in the qrels on those
 * bytes. Same rules and same results as parse.ts + score.ts (RunParser,
 * trecRanking, scoreTrec), which stay the reference and the public API: a
 * line the fast scanner does not take as is (fewer fields, a score that is
 * not a plain decimal) goes through RunParser's own checks and messages.
 */
import { statSync } from "node:fs";
import { DataValidationError, type DataIssue } from "../../../errors.js";
import { forEachTextBlock, lineStartFrom } from "../../../kb/text.js";
import { moduleWorker, siblingModule } from "../../../module-worker.js";
import { evaluateQuery, NONPOOL, queryJudgments, UNJUDGED } from "./measures.js";
import { MAX_ISSUES, RunParser, type Qrels } from "./parse.js";
import {
  finishScores,
  ScoreAccumulator,
  scorePlan,
  strcmp,
  type TrecCounts,
  type TrecOptions,
  type TrecScores,
} from "./score.js";

/** C's isspace in the "C" locale. */
function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

/** 10^0 … 10^22: the powers of ten a double holds exactly. */
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

/**
 * A plain decimal `[+-]?digits[.digits]` parsed exactly as Number() parses
 * it (the mantissa below 2^53 and at most 22 decimals: one correctly rounded
 * division of two exact doubles); NaN for anything else.
 */
function plainDecimal(b: Uint8Array, s: number, e: number): number {
  let i = s;
  let neg = false;
  const c0 = b[i] as number;
  if (c0 === 45 || c0 === 43) {
    neg = c0 === 45;
    i++;
  }
  let m = 0;
  let digits = 0;
  let frac = -1;
  for (; i < e; i++) {
    const c = b[i] as number;
    if (c >= 48 && c <= 57) {
      m = m * 10 + (c - 48);
      digits++;
      if (frac >= 0) frac++;
    } else if (c === 46 && frac < 0) frac = 0;
    else return Number.NaN;
  }
  if (digits === 0 || digits > 15 || frac > 22) return Number.NaN;
  const v = frac > 0 ? m / (POW10[frac] as number) : m;
  return neg ? -v : v;
}

/** FNV-1a over bytes[s, e). */
function hashBytes(b: Uint8Array, s: number, e: number): number {
  let h = 0x811c9dc5;
  for (let i = s; i < e; i++) h = Math.imul(h ^ (b[i] as number), 0x01000193);
  return h | 0;
}

/** A run in typed arrays: line i of the run's data lines has qid qids[qidOf[i]], score, docno arena[docStart[i], docStart[i+1]). */
export interface CompactRun {
  qids: string[];
  qidOf: Int32Array;
  score: Float64Array;
  hash: Int32Array;
  /** lines + 1 offsets into `arena`. */
  docStart: Int32Array;
  arena: Uint8Array;
  lines: number;
  runId: string | null;
}

function grown<T extends Int32Array | Float64Array | Uint8Array>(a: T, used: number, need: number, exact = false): T {
  if (need <= a.length) return a;
  let cap = exact ? need : a.length * 2;
  while (cap < need) cap *= 2;
  const next = new (a.constructor as new (n: number) => T)(cap);
  next.set(a.subarray(0, used) as never);
  return next;
}

/** Reads a run from blocks of whole lines of bytes; the fast twin of RunParser (whose checks and messages it uses for odd lines). */
export class CompactRunParser {
  private readonly slow: RunParser;
  private readonly qidIndex = new Map<string, number>();
  private readonly qids: string[] = [];
  private n = 0;
  private cap = 1 << 16;
  private qidOf = new Int32Array(this.cap);
  private score = new Float64Array(this.cap);
  private hash = new Int32Array(this.cap);
  private docEnd = new Int32Array(this.cap);
  private arena = new Uint8Array(1 << 20);
  private arenaLength = 0;
  private lastQid = new Uint8Array(64);
  private lastQidLen = -1;
  private lastQidIndex = -1;
  private tag = new Uint8Array(64);
  private tagLen = -1;
  private readonly starts = new Int32Array(6);
  private readonly ends = new Int32Array(6);

  /**
   * `expectBytes`: how many bytes the parser will be given, if known: after
   * the first block its arrays are sized for that many bytes of such lines
   * (5% spare), so they are not regrown (and hold no doubling slack).
   */
  constructor(
    readonly file: string,
    private expectBytes = 0,
  ) {
    this.slow = new RunParser(file);
  }

  /** Size the arrays for `bytes` bytes of lines like the ones read so far. */
  private presize(bytesSeen: number): void {
    if (this.expectBytes <= 0 || this.n === 0 || bytesSeen <= 0) return;
    const scale = (this.expectBytes / bytesSeen) * 1.05;
    this.expectBytes = 0;
    const cap = Math.ceil(this.n * scale) + 1024;
    if (cap > this.cap) {
      this.cap = cap;
      this.qidOf = grown(this.qidOf, this.n, cap, true);
      this.score = grown(this.score, this.n, cap, true);
      this.hash = grown(this.hash, this.n, cap, true);
      this.docEnd = grown(this.docEnd, this.n, cap, true);
    }
    this.arena = grown(this.arena, this.arenaLength, Math.ceil(this.arenaLength * scale) + 4096, true);
  }

  get saturated(): boolean {
    return this.slow.saturated;
  }

  /** Lines read so far (data, comments and blank). */
  linesRead = 0;

  /** The issues found so far (RunParser's). */
  get issues(): readonly DataIssue[] {
    return this.slow.collected;
  }

  /** Every line of `b[s, e)` (lines end with LF; the last may not); returns how many. */
  pushBlock(b: Buffer, s: number, e: number): number {
    let lines = 0;
    let i = s;
    while (i < e) {
      let nl = i;
      while (nl < e && b[nl] !== 10) nl++;
      this.push(b, i, nl);
      lines++;
      i = nl + 1;
    }
    this.linesRead += lines;
    this.presize(e - s);
    return lines;
  }

  /** One line, `b[s, e)` without its LF. */
  push(b: Buffer, s: number, e: number): void {
    let i = s;
    while (i < e && isSpace(b[i] as number)) i++;
    if (i >= e || b[i] === 35) {
      this.slow.skipLine();
      return;
    }
    // Six fields: qid Q0 docno rank score tag (more are ignored).
    const starts = this.starts;
    const ends = this.ends;
    let f = 0;
    while (f < 6 && i < e) {
      starts[f] = i;
      while (i < e && !isSpace(b[i] as number)) i++;
      ends[f] = i;
      f++;
      while (i < e && isSpace(b[i] as number)) i++;
    }
    const score = f === 6 ? plainDecimal(b, starts[4] as number, ends[4] as number) : Number.NaN;
    if (Number.isNaN(score)) {
      // Not the common shape: RunParser decides (an error, or a score such as 1e-3 it accepts).
      const slowScore = this.slow.fields(b.toString("utf8", s, e));
      if (slowScore !== null) this.add(b, slowScore);
      return;
    }
    this.slow.skipLine();
    this.add(b, score);
  }

  private add(b: Buffer, score: number): void {
    const starts = this.starts;
    const ends = this.ends;
    const n = this.n;
    if (n === this.cap) {
      this.cap *= 2;
      this.qidOf = grown(this.qidOf, n, this.cap);
      this.score = grown(this.score, n, this.cap);
      this.hash = grown(this.hash, n, this.cap);
      this.docEnd = grown(this.docEnd, n, this.cap);
    }
    // qid: interned, compared with the previous line's bytes first (runs come query by query).
    const qs = starts[0] as number;
    const qe = ends[0] as number;
    const ql = qe - qs;
    let same = ql === this.lastQidLen;
    for (let j = 0; same && j < ql; j++) if (this.lastQid[j] !== b[qs + j]) same = false;
    if (!same) {
      const qid = b.toString("utf8", qs, qe);
      let idx = this.qidIndex.get(qid);
      if (idx === undefined) {
        idx = this.qids.length;
        this.qids.push(qid);
        this.qidIndex.set(qid, idx);
      }
      if (this.lastQid.length < ql) this.lastQid = new Uint8Array(ql * 2);
      for (let j = 0; j < ql; j++) this.lastQid[j] = b[qs + j] as number;
      this.lastQidLen = ql;
      this.lastQidIndex = idx;
    }
    this.qidOf[n] = this.lastQidIndex;
    this.score[n] = score;
    // docno: its bytes into the arena, hashed on the way (FNV-1a, as hashBytes).
    const ds = starts[2] as number;
    const de = ends[2] as number;
    this.arena = grown(this.arena, this.arenaLength, this.arenaLength + de - ds);
    const arena = this.arena;
    let at = this.arenaLength;
    let h = 0x811c9dc5;
    for (let j = ds; j < de; j++) {
      const c = b[j] as number;
      arena[at++] = c;
      h = Math.imul(h ^ c, 0x01000193);
    }
    this.arenaLength = at;
    this.hash[n] = h | 0;
    this.docEnd[n] = at;
    this.n = n + 1;
    // The tag of the last line is the run id, as trec_eval keeps it.
    const ts = starts[5] as number;
    const te = ends[5] as number;
    const tl = te - ts;
    let sameTag = tl === this.tagLen;
    for (let j = 0; sameTag && j < tl; j++) if (this.tag[j] !== b[ts + j]) sameTag = false;
    if (!sameTag) {
      if (this.tag.length < tl) this.tag = new Uint8Array(tl * 2);
      for (let j = 0; j < tl; j++) this.tag[j] = b[ts + j] as number;
      this.tagLen = tl;
    }
  }

  finish(): CompactRun {
    this.slow.finish(); // throws the collected issues
    return this.collect();
  }

  /** The run read so far, issues or not. */
  collect(): CompactRun {
    const lines = this.n;
    const docStart = new Int32Array(lines + 1);
    docStart.set(this.docEnd.subarray(0, lines), 1);
    const runId = this.tagLen < 0 ? null : Buffer.from(this.tag.subarray(0, this.tagLen)).toString("utf8");
    return {
      qids: this.qids,
      qidOf: this.qidOf.subarray(0, lines),
      score: this.score.subarray(0, lines),
      hash: this.hash.subarray(0, lines),
      docStart,
      arena: this.arena.subarray(0, this.arenaLength),
      lines,
      runId,
    };
  }
}

/** What the second thread posts (./compact-worker.ts): its part of the run, its line count and issues (lines numbered from its start). */
export type CompactPart =
  { ok: true; run: CompactRun; lines: number; issues: DataIssue[] } | { ok: false; why: string };

/** A run at least this large is read by two threads (docs/metrics.md, "Speed"). */
export const TWO_THREADS_MIN_BYTES = 16 << 20;

/** Read the bytes [start, end) of a run (all of it without a range): its run, line count and issues. */
export async function readRunPart(
  file: string,
  range?: { start: number; end: number },
  expectBytes = range === undefined ? 0 : range.end - range.start,
): Promise<CompactPart> {
  const p = new CompactRunParser(file, expectBytes);
  try {
    await forEachTextBlock(
      file,
      (b, s, e) => p.pushBlock(b, s, e),
      () => p.saturated,
      range,
    );
  } catch (e) {
    if (!(e instanceof DataValidationError)) throw e;
    // An unreadable part (invalid UTF-8): its issue after those found before it.
    return { ok: true, run: p.collect(), lines: p.linesRead, issues: [...p.issues, ...e.issues] };
  }
  return { ok: true, run: p.collect(), lines: p.linesRead, issues: [...p.issues] };
}

/** The two parts of a run as one, in file order (the second's queries, lines and docnos after the first's). */
function joinParts(a: CompactRun, b: CompactRun): CompactRun {
  const qids = [...a.qids];
  const index = new Map(qids.map((q, i) => [q, i]));
  const remap = new Int32Array(b.qids.length);
  for (const [i, q] of b.qids.entries()) {
    let at = index.get(q);
    if (at === undefined) {
      at = qids.length;
      qids.push(q);
      index.set(q, at);
    }
    remap[i] = at;
  }
  const lines = a.lines + b.lines;
  const qidOf = new Int32Array(lines);
  qidOf.set(a.qidOf);
  for (let i = 0; i < b.lines; i++) qidOf[a.lines + i] = remap[b.qidOf[i] as number] as number;
  const score = new Float64Array(lines);
  score.set(a.score);
  score.set(b.score, a.lines);
  const hash = new Int32Array(lines);
  hash.set(a.hash);
  hash.set(b.hash, a.lines);
  const docStart = new Int32Array(lines + 1);
  docStart.set(a.docStart);
  const shift = a.arena.length;
  for (let i = 1; i <= b.lines; i++) docStart[a.lines + i] = (b.docStart[i] as number) + shift;
  const arena = new Uint8Array(a.arena.length + b.arena.length);
  arena.set(a.arena);
  arena.set(b.arena, shift);
  return { qids, qidOf, score, hash, docStart, arena, lines, runId: b.runId ?? a.runId };
}

/**
 * Read and validate a run file into typed arrays, streaming (RunParser's
 * rules and messages). A file of at least `minBytes` is read by two threads:
 * a worker (./compact-worker.ts) reads the second half (from a line start)
 * while this one reads the first; the parts are joined in file order and
 * their issues numbered as one file's. If the worker fails, this thread reads
 * the whole file.
 */
export async function readRunCompact(file: string, minBytes = TWO_THREADS_MIN_BYTES): Promise<CompactRun> {
  const size = file === "-" ? -1 : statSize(file);
  const cut = size >= minBytes ? lineStartFrom(file, Math.floor(size / 2)) : null;
  if (cut === null || cut >= size) return finishPart(file, await readRunPart(file, undefined, Math.max(size, 0)));
  const worker = moduleWorker(siblingModule(import.meta.url, "compact-worker"), { file, start: cut, end: size });
  const second = new Promise<CompactPart>((resolve) => {
    worker.once("message", (m: CompactPart) => resolve(m));
    worker.once("error", (e) => resolve({ ok: false, why: e.message }));
    worker.once("exit", (code) => resolve({ ok: false, why: `the reading thread exited (${code})` }));
  });
  try {
    const first = await readRunPart(file, { start: 0, end: cut });
    const part = await second;
    if (!part.ok) return finishPart(file, await readRunPart(file));
    if (!first.ok) return finishPart(file, await readRunPart(file));
    const issues = [
      ...first.issues,
      ...part.issues.map((i) => (i.line === undefined ? i : { ...i, line: i.line + first.lines })),
    ].slice(0, MAX_ISSUES);
    if (issues.length > 0) throw new DataValidationError(issues);
    return joinParts(first.run, part.run);
  } finally {
    void worker.terminate();
  }
}

function statSize(file: string): number {
  try {
    const st = statSync(file);
    return st.isFile() ? st.size : -1;
  } catch {
    return -1; // the reader names the problem
  }
}

function finishPart(file: string, part: CompactPart): CompactRun {
  if (!part.ok) throw new Error(`reading ${file}: ${part.why}`);
  if (part.issues.length > 0) throw new DataValidationError(part.issues.slice(0, MAX_ISSUES));
  return part.run;
}

/** strcmp of two docnos in the arena. */
function compareDocs(arena: Uint8Array, start: Int32Array, a: number, b: number): number {
  const as = start[a] as number;
  const bs = start[b] as number;
  const al = (start[a + 1] as number) - as;
  const bl = (start[b + 1] as number) - bs;
  const n = al < bl ? al : bl;
  for (let i = 0; i < n; i++) {
    const d = (arena[as + i] as number) - (arena[bs + i] as number);
    if (d !== 0) return d;
  }
  return al - bl;
}

function sameDoc(arena: Uint8Array, start: Int32Array, a: number, bytes: Uint8Array): boolean {
  const as = start[a] as number;
  const l = (start[a + 1] as number) - as;
  if (l !== bytes.length) return false;
  for (let i = 0; i < l; i++) if (arena[as + i] !== bytes[i]) return false;
  return true;
}

/**
 * Score a compact run against qrels: scoreTrec's rules and results (the same
 * plan, ranking, first-occurrence dedup, counts and warnings), on bytes.
 */
export function scoreCompact(
  qrels: Qrels,
  run: CompactRun,
  options: TrecOptions,
  files: { qrels?: string; run?: string } = {},
): TrecScores {
  const plan = scorePlan(options);
  const L = plan.settings.relevanceLevel;
  const { qidOf, score, hash, docStart, arena, lines } = run;

  // The lines of each query in file order (a counting sort on the query index).
  const nq = run.qids.length;
  const first = new Int32Array(nq + 1);
  for (let i = 0; i < lines; i++) {
    const q = (qidOf[i] as number) + 1;
    first[q] = (first[q] as number) + 1;
  }
  for (let q = 0; q < nq; q++) first[q + 1] = (first[q + 1] as number) + (first[q] as number);
  const order = new Int32Array(lines);
  const fill = first.slice(0, nq);
  for (let i = 0; i < lines; i++) {
    const q = qidOf[i] as number;
    order[fill[q] as number] = i;
    fill[q] = (fill[q] as number) + 1;
  }
  const qidIndex = new Map(run.qids.map((q, i) => [q, i]));

  const counts: TrecCounts = {
    judged: qrels.size,
    evaluated: 0,
    withoutResults: 0,
    withoutRelevant: 0,
    unjudged: 0,
    duplicates: 0,
    queriesWithDuplicates: 0,
  };
  for (const qid of run.qids) if (!qrels.has(qid)) counts.unjudged++;

  const acc = new ScoreAccumulator(plan);
  const values = new Float64Array(plan.rows.length);
  let rels = new Int32Array(1024);
  let table = new Int32Array(4096); // open addressing: line index + 1, 0 = empty
  let judgedTable = new Int32Array(64); // judgment index + 1
  const before = (i: number, j: number): number => {
    const si = score[i] as number;
    const sj = score[j] as number;
    if (si !== sj) return si > sj ? -1 : 1;
    return compareDocs(arena, docStart, j, i);
  };

  for (const qid of [...qrels.keys()].sort(strcmp)) {
    const judged = qrels.get(qid) as Map<string, number>;
    const qj = queryJudgments(judged.values(), L);
    const qi = qidIndex.get(qid);
    const from = qi === undefined ? 0 : (first[qi] as number);
    const to = qi === undefined ? 0 : (first[qi + 1] as number);
    if (qj.numRel === 0 && plan.skipEmpty) {
      counts.withoutRelevant++;
      continue;
    }
    let n = 0;
    if (to === from) {
      counts.withoutResults++;
      if (!plan.complete) continue;
    } else {
      if (qj.numRel === 0) counts.withoutRelevant++;
      // trec order: score descending, ties by docno descending; usually already so.
      let idx = order.subarray(from, to);
      let sorted = true;
      for (let k = 1; k < idx.length && sorted; k++)
        if (before(idx[k - 1] as number, idx[k] as number) > 0) sorted = false;
      if (!sorted) idx = idx.slice().sort(before);
      // The judgments of this query by docno bytes.
      const docs: Uint8Array[] = [];
      const docRels: number[] = [];
      for (const [docno, rel] of judged) {
        docs.push(Buffer.from(docno, "utf8"));
        docRels.push(rel);
      }
      let jsize = 16;
      while (jsize < docs.length * 2) jsize *= 2;
      if (judgedTable.length < jsize) judgedTable = new Int32Array(jsize);
      judgedTable.fill(0, 0, jsize);
      const jmask = jsize - 1;
      for (let d = 0; d < docs.length; d++) {
        const bytes = docs[d] as Uint8Array;
        let h = hashBytes(bytes, 0, bytes.length) & jmask;
        while (judgedTable[h] !== 0) h = (h + 1) & jmask;
        judgedTable[h] = d + 1;
      }
      // First occurrence of each docno, cut at depth, each with its qrels value.
      let size = 16;
      while (size < idx.length * 2) size *= 2;
      if (table.length < size) table = new Int32Array(size);
      table.fill(0, 0, size);
      const mask = size - 1;
      if (rels.length < idx.length) rels = new Int32Array(idx.length * 2);
      let kept = 0;
      let dups = 0;
      for (let k = 0; k < idx.length; k++) {
        const line = idx[k] as number;
        const hv = hash[line] as number;
        let h = hv & mask;
        let dup = false;
        for (let t = table[h] as number; t !== 0; h = (h + 1) & mask, t = table[h] as number) {
          const other = t - 1;
          if (hash[other] === hv && compareDocs(arena, docStart, other, line) === 0) {
            dup = true;
            break;
          }
        }
        if (dup) {
          dups++;
          continue;
        }
        table[h] = line + 1;
        if (kept >= plan.depth) continue; // still counted for duplicates, as the Map path does
        kept++;
        let r = NONPOOL;
        let jh = hv & jmask;
        for (let t = judgedTable[jh] as number; t !== 0; jh = (jh + 1) & jmask, t = judgedTable[jh] as number) {
          if (sameDoc(arena, docStart, line, docs[t - 1] as Uint8Array)) {
            const v = docRels[t - 1] as number;
            r = v < 0 ? UNJUDGED : v;
            break;
          }
        }
        if (plan.judgedOnly && r < 0) continue;
        rels[n++] = r;
      }
      if (dups > 0) {
        counts.duplicates += dups;
        counts.queriesWithDuplicates++;
      }
    }
    evaluateQuery(rels, n, qj, plan.selected, plan.settings, values);
    acc.add(qid, values);
  }
  return finishScores(plan, acc, counts, run.runId, files);
}
