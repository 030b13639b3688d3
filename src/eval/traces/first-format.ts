/**
 * The format of a recording, read from its first record only: what `eval
 * --traces REC --out langsmith:` (and `phoenix:` / `langfuse:`) checks
 * before the recording is read and scored (docs/recorded-traces.md,
 * "Writing the scores back"). The record is read as the reader reads it
 * (./records.ts: gzip by content, JSON Lines or one document; a folder's
 * first file by name, ./read.ts `traceFiles`) and its format detected as the
 * reader detects it (./formats/registry.ts `detectFormat`). Standard input
 * (`-`) cannot be peeked without consuming it: undefined, and the check
 * after the run is the one that refuses.
 */
import { traceFiles } from "./read.js";
import { forEachRecord } from "./records.js";
import { detectFormat, type TraceFormat } from "./formats/registry.js";

/**
 * The format of the first record of `--traces PATH`, or undefined when it
 * cannot be told before the run: standard input, a path that does not exist,
 * an empty or unreadable file, a first record no format claims. In each of
 * those the reader names the problem (or the check after the run refuses),
 * so nothing is lost by not knowing here.
 */
export async function firstRecordFormat(p: string): Promise<TraceFormat | undefined> {
  if (p === "-") return undefined;
  let file: string;
  try {
    file = traceFiles(p)[0]!;
  } catch {
    return undefined;
  }
  if (file === "-") return undefined;
  // The read is stopped by throwing from the callback at the first record (the reader wraps what it throws, so the record is kept aside).
  let first: { value: unknown } | undefined;
  try {
    await forEachRecord(file, (r) => {
      first = { value: r.value };
      throw new Error("the first record is read");
    });
  } catch {
    // the stop above, or an input the reader will name when the run reads it
  }
  return first === undefined ? undefined : (detectFormat(first.value) ?? undefined);
}
