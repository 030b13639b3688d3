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
import { DataValidationError } from "../../../errors.js";
import { lineStartFrom } from "../../../kb/text.js";
import { moduleWorker, siblingModule } from "../../../module-worker.js";
import { evaluateQuery, NONPOOL, queryJudgments, UNJUDGED } from "./measures.js";
import { MAX_ISSUES, type Qrels } from "./parse.js";
import { hashBytes, readRunPart, type CompactPart, type CompactRun } from "./compact-parse.js";
import {
  finishScores,
  ScoreAccumulator,
  scorePlan,
  strcmp,
  type TrecCounts,
  type TrecOptions,
  type TrecScores,
} from "./score.js";

export { CompactRunParser, readRunPart, type CompactPart, type CompactRun } from "./compact-parse.js";

/** A run at least this large is read by two threads (docs/metrics.md, "Speed"). */
export const TWO_THREADS_MIN_BYTES = 16 << 20;

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
