/**
 * trec_eval's output layout (`%-22s\t%s\t%6.4f` rows: per-query rows, then
 * `all`) and the same numbers as JSON. Pure functions.
 */
import type { TrecScores } from "./score.js";

export const TREC_JSON_VERSION = 1 as const;

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
  const integer = new Set(s.integerMeasures);
  const allOnly = new Set(s.allOnlyMeasures);
  const row = (m: string, qid: string, v: number) =>
    integer.has(m) ? `${m.padEnd(22)}\t${qid}\t${v}` : formatTrecRow(m, qid, v);
  if (opts.perQuery ?? false) {
    for (const q of s.perQuery)
      for (const m of s.measures) if (!allOnly.has(m)) rows.push(row(m, q.qid, q.values[m] as number));
  }
  if (s.printRunId) rows.push(`${"runid".padEnd(22)}\tall\t${s.runId ?? ""}`);
  for (const m of s.measures) rows.push(row(m, "all", s.all[m] as number));
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
  return {
    version: TREC_JSON_VERSION,
    measures: s.measures,
    perQuery,
    all: s.all,
    numQueries: s.numQueries,
    warnings: s.warnings,
  };
}
