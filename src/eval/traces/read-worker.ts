/**
 * The second thread of a large OTLP/JSON export's reading (./read.ts
 * `readOtlpInTwo`; docs/recorded-traces.md, "Scale"): reads the bytes
 * [start, end) of the file — whole lines — and posts each record's spans as
 * `SpanFacts`, lines numbered from 1 at `start`. Anything but plain OTLP
 * lines (a line that is not JSON, another format, an array, invalid UTF-8,
 * a malformed span) ends it with `ok: false`: the caller then reads the
 * whole recording on one thread, which names the problem exactly as it
 * always has.
 */
import { parentPort, workerData } from "node:worker_threads";
import { forEachTextLine } from "../../kb/text.js";
import { recordFacts, type SpanFacts } from "./otlp.js";
import { otlpLineValue, type PartRead } from "./read.js";

const { file, start, end } = workerData as { file: string; start: number; end: number };
const records: { line: number; facts: SpanFacts[] }[] = [];
// Traces whose conversation this part has named already (a hint: see recordFacts).
const named = new Set<string>();
let lines = 0;
let result: PartRead;
try {
  await forEachTextLine(
    file,
    (text) => {
      lines++;
      const value = otlpLineValue(text);
      if (value === undefined) return;
      const facts = recordFacts({ value, file, line: lines }, (traceId) => named.has(traceId));
      for (const f of facts) if (f.conversation !== undefined) named.add(f.traceId);
      records.push({ line: lines, facts });
    },
    undefined,
    { start, end },
  );
  result = { ok: true, lines, records };
} catch (e) {
  result = { ok: false, why: e instanceof Error ? e.message : String(e) };
}
parentPort!.postMessage(result);
