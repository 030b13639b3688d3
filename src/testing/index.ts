/**
 * Test matchers for retrace (docs/langchain-integration.md), for Vitest (or
 * any Jest-compatible `expect.extend`):
 *
 * ```ts
 * import { expect } from "vitest";
 * import { retraceMatchers } from "retrace-eval/testing";
 * expect.extend(retraceMatchers);
 * expect(trace).toRetrieve(["card-freeze"], { k: 5 });
 * expect(await retriever.invoke("lock my card")).toRetrieve(["card-freeze"], { k: 5 }); // LangChain Documents
 * expect(report).toMeetFloors({ retrieval_hit_at_k: 0.9 }, { split: "locale" });
 * ```
 *
 * Failure messages say where the gold went: its rank at every stage of the
 * trace, and whether it was never listed or cut at k. The checks are pure
 * functions (`checkRetrieve`, `checkFloors`) usable without a test runner.
 * LangChain Documents map to card ids by the same rule as `retrace eval
 * --graph` and the LangSmith evaluators (src/eval/measures/doc-id.ts;
 * `idKey` / `idMap` in the options).
 */
import { cardIdsOf, type DocumentLike, type DocumentIdOptions } from "../eval/measures/doc-id.js";
import { HIT_KEY } from "../eval/measures/metrics.js";
import { explainGold } from "../eval/report/attribution.js";
import { metricLabel, vacuousText } from "../eval/report/render.js";
import type { Aggregate, Report, TraceSummary, TurnReport } from "../eval/report/types.js";
import type { RetrievalTrace } from "../retrieval/types.js";

/**
 * A retrieval result to check: a full trace, a report's trace summary, a
 * report turn, plain ranked ids, or ranked documents (LangChain Documents,
 * mapped to card ids by the document-id rule).
 */
export type Retrieved = RetrievalTrace | TraceSummary | TurnReport | readonly string[] | readonly DocumentLike[];

export interface RetrieveOptions extends DocumentIdOptions {
  /** Cut (default: the trace's own k, else the list's length). */
  k?: number;
  /** Pass when ANY listed card is in the top-k (disjunctive gold, as hit@k); default: every card must be. */
  any?: boolean;
}

export interface CheckResult {
  pass: boolean;
  message: string;
}

function isTrace(x: unknown): x is RetrievalTrace {
  return (
    typeof x === "object" &&
    x !== null &&
    "stages" in x &&
    "config" in x &&
    Array.isArray((x as RetrievalTrace).retrievedIds)
  );
}

function rankedIds(x: Retrieved, ids: DocumentIdOptions = {}): string[] {
  if (Array.isArray(x)) {
    const xs = x as readonly unknown[];
    return xs.every((e) => typeof e === "string")
      ? [...(xs as string[])]
      : cardIdsOf(xs as DocumentLike[], ids, "toRetrieve");
  }
  const r = x as Partial<TurnReport & TraceSummary>;
  if (Array.isArray(r.retrievedIds)) return r.retrievedIds;
  if (r.trace !== undefined) return r.trace.retrievedIds;
  return [];
}

function traceK(x: Retrieved): number | undefined {
  if (Array.isArray(x)) return undefined;
  const r = x as Partial<TurnReport & TraceSummary>;
  return r.k ?? r.trace?.k;
}

/** Where one card stood at each stage, in words, from whatever the value carries. */
function whereWent(x: Retrieved, id: string, k: number, ranked: readonly string[]): string {
  if (isTrace(x)) return explainGold(x, id).text;
  const final = ranked.indexOf(id);
  const summary = Array.isArray(x)
    ? undefined
    : "goldPositions" in (x as object)
      ? (x as TraceSummary)
      : (x as TurnReport).trace;
  const stages = summary?.goldPositions[id];
  const parts = stages === undefined ? [] : Object.entries(stages).map(([s, r]) => `${s} ${r ?? "—"}`);
  const tail =
    final < 0
      ? "not in the final list"
      : final < k
        ? `retrieved at rank ${final + 1}`
        : `rank ${final + 1}, cut at k=${k}`;
  return `${id}: ${[...parts, tail].join(", ")}`;
}

/** Are the cards `ids` in the top-k of `x`? The message explains each card's path through the stages. */
export function checkRetrieve(x: Retrieved, ids: readonly string[], opts: RetrieveOptions = {}): CheckResult {
  const listed = rankedIds(x, opts);
  const ranked = [...new Set(listed)];
  const k = opts.k ?? traceK(x) ?? ranked.length;
  const top = ranked.slice(0, k);
  const inTop = ids.filter((id) => top.includes(id));
  const pass = opts.any ? inTop.length > 0 : inTop.length === ids.length;
  const want = opts.any ? `any of [${ids.join(", ")}]` : `[${ids.join(", ")}]`;
  const lines = [`expected the top-${k} [${top.join(", ")}] ${pass ? "not " : ""}to contain ${want}`];
  for (const id of ids) lines.push(`  ${whereWent(x, id, k, listed)}`);
  return { pass, message: lines.join("\n") };
}

/** Floors per metric key (`retrieval_hit_at_k`, ...), each in [0, 1]. */
export type Floors = Record<string, number>;

export interface FloorOptions {
  /** Also hold every group of this split (e.g. "locale") to the floors, each with its n. */
  split?: string;
  /** How many missed turns the message lists (default 5). */
  showMissed?: number;
}

function turnWhere(t: TurnReport): string {
  const pos = t.trace?.goldPositions ?? {};
  const parts = t.gold.map(
    (g) =>
      `${g}: ${Object.entries(pos[g] ?? {})
        .map(([s, r]) => `${s} ${r ?? "—"}`)
        .join(", ")}`,
  );
  return `${t.caseId}#${t.turn} ${JSON.stringify(t.user)} gold by stage: ${parts.join("; ")}; top-${t.trace?.k ?? "?"} [${(t.retrievedIds ?? []).join(", ")}]`;
}

/**
 * Does the report meet every floor (overall, and per group of `split`)? A
 * floor on a key the report did not measure fails (never a silent pass).
 * The message names each failing key and group with mean, n and floor, and
 * lists missed turns with where their gold went.
 */
export function checkFloors(report: Report, floors: Floors, opts: FloorOptions = {}): CheckResult {
  const failures: string[] = [];
  const ok: string[] = [];
  const groups: [string, Record<string, Aggregate>][] = [["all", report.aggregates]];
  if (opts.split !== undefined) {
    const split = (report.splits as Record<string, Record<string, Record<string, Aggregate>> | undefined>)[opts.split];
    if (split === undefined)
      failures.push(`the report has no split "${opts.split}" (has: ${Object.keys(report.splits).join(", ")})`);
    else for (const [g, aggs] of Object.entries(split)) groups.push([`${opts.split}=${g}`, aggs]);
  }
  for (const [key, floor] of Object.entries(floors)) {
    const label = metricLabel(key, report.run.k);
    if (report.vacuous.includes(key)) {
      failures.push(
        `${label}: ${vacuousText(report.vacuousReasons[key] ?? "not measured")}, so the floor ${floor} cannot be met`,
      );
      continue;
    }
    for (const [group, aggs] of groups) {
      const a = aggs[key];
      if (a === undefined) failures.push(`${label} [${group}]: no value (n=0), floor ${floor}`);
      else if (a.mean < floor)
        failures.push(`${label} [${group}]: ${a.mean.toFixed(3)} (n=${a.n}) is below the floor ${floor}`);
      else ok.push(`${label} [${group}]: ${a.mean.toFixed(3)} (n=${a.n}) >= ${floor}`);
    }
  }
  const pass = failures.length === 0;
  if (pass) return { pass, message: `expected the report not to meet the floors, but:\n  ${ok.join("\n  ")}` };
  const missed = report.turns.filter((t) => t.results.some((r) => r.key === HIT_KEY && r.score === 0));
  const show = opts.showMissed ?? 5;
  const lines = ["expected the report to meet the floors:", ...failures.map((f) => `  ${f}`)];
  if (missed.length > 0) {
    lines.push(`missed turns (${missed.length}, first ${Math.min(show, missed.length)}):`);
    for (const t of missed.slice(0, show)) lines.push(`  ${turnWhere(t)}`);
  }
  return { pass, message: lines.join("\n") };
}

interface MatcherContext {
  isNot?: boolean;
}

export type { DocumentIdOptions, DocumentLike } from "../eval/measures/doc-id.js";

/** Pass to `expect.extend(...)`. */
export const retraceMatchers = {
  toRetrieve(this: MatcherContext, received: Retrieved, ids: readonly string[], opts?: RetrieveOptions) {
    const r = checkRetrieve(received, ids, opts);
    return { pass: r.pass, message: () => r.message };
  },
  toMeetFloors(this: MatcherContext, received: Report, floors: Floors, opts?: FloorOptions) {
    const r = checkFloors(received, floors, opts);
    return { pass: r.pass, message: () => r.message };
  },
};

/** The matchers' types, for `declare module "vitest" { interface Assertion<T> extends RetraceMatchers<T> {} }`. */
export interface RetraceMatchers<R = unknown> {
  toRetrieve(ids: readonly string[], opts?: RetrieveOptions): R;
  toMeetFloors(floors: Floors, opts?: FloorOptions): R;
}
