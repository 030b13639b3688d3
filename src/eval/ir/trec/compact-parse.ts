/**
 * The byte scanner behind `retrace score`'s fast path (./compact.ts;
 * docs/metrics.md, "Speed"): a run read byte by byte into typed arrays (no
 * string per line: docnos are bytes in one arena with a hash, qids interned
 * once per change); a line the fast scanner does not take as is goes through
 * RunParser's own checks and messages (./parse.ts). `readRunPart` reads one
 * byte range of a file (the whole file, or one thread's half:
 * ./compact-worker.ts).
 */
import { DataValidationError, type DataIssue } from "../../../errors.js";
import { forEachTextBlock } from "../../../kb/text.js";
import { RunParser } from "./parse.js";

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
export function hashBytes(b: Uint8Array, s: number, e: number): number {
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
