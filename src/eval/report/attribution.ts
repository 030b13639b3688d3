/**
 * Miss attribution: where a gold card stood at each stage of a retrieval
 * trace, in words — "3rd in dense, 40th in BM25, 7th after fusion, 4th card
 * after parent dedup: in the top-5" or "... cut at k=5" — and the one rule
 * that says where a missed gold card was lost (`lostAt`), applied by
 * `retrace trace`'s explanation of retrace's own trace (`explainGold`) and by
 * ./lost-at.ts, which records it in each turn's `goldLostAt` for the HTML
 * turn view and the captured-turn text to read. Pure.
 */
import type { RetrievalTrace } from "../../contract/trace.js";
import { BRANCH_STAGES, LOST_IN_RETRIEVAL, stageSpec, TRACE_STAGES } from "./stages.js";
import { goldPositions } from "./trace-summary.js";

/** "in dense", "after fusion" (the stage registry's `position`), or the stage's own name. */
const position = (stage: string) => stageSpec(stage)?.position ?? stage;

/** 1 → "1st", 2 → "2nd", 11 → "11th", 23 → "23rd". */
export function ordinal(n: number): string {
  const mod100 = n % 100;
  if (mod100 >= 11 && mod100 <= 13) return `${n}th`;
  const suffix = { 1: "st", 2: "nd", 3: "rd" }[n % 10] ?? "th";
  return `${n}${suffix}`;
}

export type Verdict = "retrieved" | "cut_at_k" | "not_retrieved";

/** `lostAt` of a gold card that no list of the turn held: not retrieved. */
export const NOT_RETRIEVED = "retrieval";
/** `lostAt` of a gold card that a scored list held below k: cut at k. */
export const CUT_AT_K = "final";

/** One list of a turn's retrieval and a gold card's 1-based rank in it (null: absent). */
export interface ListRank {
  stage: string;
  rank: number | null;
}

/**
 * One path from a query to the scored list: groups of lists in order, the
 * lists of a group made side by side (retrace's dense and BM25 branches; the
 * child runs of a captured retriever call), each group fed by the one before;
 * the last group is the scored candidates the top-k is cut from (retrace's
 * parent-deduplicated cards; the captured call's own list). A `--graph` turn
 * that scored several calls has one chain per call.
 */
export type RetrievalChain = readonly (readonly ListRank[])[];

/**
 * The one "lost at" rule (docs/html-report.md, "Turn view"), the same for
 * retrace's graph and yours:
 * - `null` when the card is in the scored top-k (`inTopK`);
 * - `CUT_AT_K` ("cut at k") when the last group of some chain lists it: a
 *   scored candidate ranked below k;
 * - `NOT_RETRIEVED` ("not retrieved") when no list of any chain holds it
 *   (also when there are no lists at all: a turn with no retrieval);
 * - otherwise the stage of the first list of the group that dropped it: in
 *   the first chain that listed it, the first group after one that held it
 *   whose lists all lack it (retrace's `fused` when fusion lost a branch's
 *   card; a captured call's own key when only its child runs listed it).
 * Edge cases: empty groups are skipped; ranks are only tested for null.
 */
export function lostAt(chains: readonly RetrievalChain[], inTopK: boolean): string | null {
  if (inTopK) return null;
  const holds = (group: readonly ListRank[]) => group.some((l) => l.rank !== null);
  const nonEmpty = chains.map((c) => c.filter((g) => g.length > 0));
  if (nonEmpty.some((c) => c.length > 0 && holds(c[c.length - 1]!))) return CUT_AT_K;
  for (const chain of nonEmpty) {
    let held = false;
    for (const group of chain) {
      if (holds(group)) held = true;
      else if (held) return group[0]!.stage;
    }
  }
  return NOT_RETRIEVED;
}

/** The verdict of a `lostAt` result: in the top-k, a candidate cut at k, or not among the scored candidates. */
export function verdictOf(cut: string | null): Verdict {
  return cut === null ? "retrieved" : cut === CUT_AT_K ? "cut_at_k" : "not_retrieved";
}

/**
 * The chain of retrace's pipeline from a gold card's ranks by stage (the
 * report's `goldPositions[gold]`): the branches present as one group, then
 * each later stage present as its own, in the stage registry's order. Keys
 * that are no stage of the registry are ignored.
 */
export function pipelineChain(positions: Readonly<Record<string, number | null>>): RetrievalChain {
  const present = TRACE_STAGES.filter((s) => s in positions);
  const rank = (s: string): ListRank => ({ stage: s, rank: positions[s] ?? null });
  const branches = present.filter((s) => BRANCH_STAGES.has(s)).map(rank);
  const sequential = present.filter((s) => !BRANCH_STAGES.has(s)).map((s) => [rank(s)]);
  return [branches, ...sequential];
}

/** A captured stage as the report keeps it (src/eval/report/schemas.ts `captured.stages`). */
export interface CapturedList {
  key: string;
  role: "child" | "final";
  ids: readonly string[];
}

/**
 * The chains of a turn captured from retriever runs (`--graph`): one per
 * scored call, its child runs (listed before it) as one group, then the
 * call's own list.
 */
export function capturedChains(stages: readonly CapturedList[], gold: string): RetrievalChain[] {
  const chains: RetrievalChain[] = [];
  let children: ListRank[] = [];
  const rank = (s: CapturedList): ListRank => ({
    stage: s.key,
    rank: s.ids.includes(gold) ? s.ids.indexOf(gold) + 1 : null,
  });
  for (const s of stages) {
    if (s.role === "child") children.push(rank(s));
    else {
      chains.push([children, [rank(s)]]);
      children = [];
    }
  }
  return chains;
}

/**
 * The "lost at" words of a `lostAt` result other than null, shared by the
 * trace and the HTML turn view: "cut at k", "not retrieved …", the stage that
 * dropped the card. `captured`: the turn was captured from retriever runs
 * (`--graph`), so its lists are retriever calls, not retrace's branches.
 */
export function lostAtText(cut: string, captured: boolean): string {
  if (cut === CUT_AT_K) return stageSpec(CUT_AT_K)?.lostAt ?? "cut at k";
  if (cut === NOT_RETRIEVED) return captured ? "not retrieved (no retriever call listed it)" : LOST_IN_RETRIEVAL;
  return captured
    ? `not retrieved: dropped by ${cut} (only its child runs listed it)`
    : `not retrieved: lost at ${stageSpec(cut)?.lostAt ?? cut}`;
}

export interface GoldExplanation {
  gold: string;
  /** stage → 1-based rank (card's best chunk for chunk stages), null when absent. */
  positions: Record<string, number | null>;
  verdict: Verdict;
  text: string;
}

/** Explains where one gold card went through the pipeline of `trace`. */
export function explainGold(trace: RetrievalTrace, gold: string): GoldExplanation {
  const positions = goldPositions(trace, [gold])[gold] ?? {};
  const stageLen = (stage: string) =>
    (trace.stages as unknown as Record<string, unknown[] | undefined>)[stage]?.length ?? 0;
  const parts = Object.entries(positions).map(([stage, rank]) =>
    rank === null ? `absent ${position(stage)} (${stageLen(stage)} listed)` : `${ordinal(rank)} ${position(stage)}`,
  );
  const finalRank = trace.retrievedIds.indexOf(gold);
  const cut = lostAt([pipelineChain(positions)], finalRank >= 0);
  let tail: string;
  if (cut === null) tail = `retrieved at rank ${finalRank + 1} of the top-${trace.k}`;
  else if (cut === CUT_AT_K) tail = `cut at k=${trace.k}`;
  else if (cut === NOT_RETRIEVED) {
    const branches = [
      trace.stages.dense !== undefined ? `dense top-${trace.config.denseK}` : null,
      trace.stages.bm25 !== undefined ? `BM25 top-${trace.config.bm25K}` : null,
    ].filter((x) => x !== null);
    tail = `not retrieved by any branch (${branches.join(", ")})`;
  } else tail = lostAtText(cut, false);
  return { gold, positions, verdict: verdictOf(cut), text: `${gold}: ${[...parts, tail].join(", ")}` };
}
