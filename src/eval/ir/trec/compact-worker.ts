/**
 * The second thread of a large run's reading (./compact.ts readRunCompact, ./compact-parse.ts readRunPart;
 * docs/metrics.md, "Speed"): reads the bytes [start, end) of the run — whole
 * lines — into typed arrays and posts them back (the buffers transferred, not
 * copied) with its line count and issues, lines numbered from 1 at `start`.
 */
import { parentPort, workerData } from "node:worker_threads";
import { readRunPart, type CompactPart } from "./compact-parse.js";

const { file, start, end } = workerData as { file: string; start: number; end: number };
let part: CompactPart;
try {
  part = await readRunPart(file, { start, end });
} catch (e) {
  part = { ok: false, why: (e as Error).message };
}
if (part.ok) {
  // Own buffers (subarrays of larger ones): transferable, and only what is used.
  const r = part.run;
  const run = {
    ...r,
    qidOf: r.qidOf.slice(),
    score: r.score.slice(),
    hash: r.hash.slice(),
    docStart: r.docStart,
    arena: r.arena.slice(),
  };
  part = { ...part, run };
  const buffers = [run.qidOf, run.score, run.hash, run.docStart, run.arena].map((a) => a.buffer as ArrayBuffer);
  parentPort!.postMessage(part, buffers);
} else parentPort!.postMessage(part);
