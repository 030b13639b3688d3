/**
 * The second thread of a large OTLP/JSON export's reading (./read.ts
 * `readOtlpInTwo`; docs/recorded-traces.md, "Scale"): reads the bytes
 * [start, end) of the file — whole lines — and posts each record's spans as
 * `SpanFacts`, lines numbered from 1 at `start`, in batches as it goes (it
 * never holds its whole part), then the lines it read. Anything but plain OTLP
 * lines (a line that is not JSON, another format, an array, invalid UTF-8,
 * a malformed span) ends it with `ok: false`: the caller then reads the
 * whole recording on one thread, which names the problem exactly as it
 * always has.
 */
import { parentPort, workerData } from "node:worker_threads";
import { forEachTextLine } from "../../kb/text.js";
import { recordFacts } from "./otlp-span.js";
import { otlpLineValue, type PartMessage, type PartRecords } from "./read.js";

const { file, start, end, batch } = workerData as { file: string; start: number; end: number; batch: number };
const post = (m: PartMessage) => parentPort!.postMessage(m);
let records: PartRecords = [];
// Traces whose conversation this part has named already (a hint: see recordFacts).
const named = new Set<string>();
let lines = 0;
let result: PartMessage;
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
      if (records.length >= batch) {
        post({ batch: records });
        records = [];
      }
    },
    undefined,
    { start, end },
  );
  if (records.length > 0) post({ batch: records });
  result = { ok: true, lines };
} catch (e) {
  result = { ok: false, why: e instanceof Error ? e.message : String(e) };
}
post(result);
