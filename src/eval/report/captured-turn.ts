/**
 * `retrace trace` of a captured turn (a `--graph` turn's retriever runs, or a
 * recorded trace's retriever spans): every retriever call of the turn by
 * retrieval step, scored or not, the calls numbered #1..#n within their step,
 * and where each gold card stood, in words that name each call as the listing
 * does. Pure.
 */
import { queriesLines } from "./render/conversation.js";
import { traceMetricsText, traceJudgmentLines } from "./render/shared.js";
import { CUT_AT_K, lostAtText, NOT_RETRIEVED, ordinal } from "./attribution.js";
import { capturedCut } from "./lost-at.js";
import { mb, NO_RETRIEVAL, turnErrorText } from "./graph-report.js";
import type { TurnReport } from "./types.js";
import { oneLineText } from "../../control-chars.js";

/** A captured stage as rendered: nested child run or scored run, and the retrieval step of its scored call (1-based). */
export interface StageView {
  key: string;
  role: "child" | "final";
  ids: string[];
  error: string | null;
  /** The 1-based retrieval step of the call the list belongs to; absent in reports written before steps were recorded per list. */
  step?: number;
}

/** A captured turn's lists: the scored calls' (`stages`) and the others' (`unscored`). */
export interface CapturedLists {
  stages: readonly StageView[];
  unscored?: readonly StageView[];
}

/** Every list of the turn, scored first, each with its step (0: a report written before steps were recorded per list). */
function allLists(c: CapturedLists): { s: StageView; scored: boolean; step: number }[] {
  return [
    ...c.stages.map((s) => ({ s, scored: true, step: s.step ?? 0 })),
    ...(c.unscored ?? []).map((s) => ({ s, scored: false, step: s.step ?? 0 })),
  ];
}

/**
 * The name of each list of a turn (by stage key) as `trace` prints it: its
 * call's number within its step and the retriever's name, `#2 Merge` for a
 * call, `#2 child KeywordRetriever` for a child run of it. A stage key's own
 * `#N` suffix counts calls over the whole turn (it keeps keys unique), so it is
 * never shown: the listing and the gold explanation use these names alike.
 */
export function callLabels(c: CapturedLists): Map<string, string> {
  const labels = new Map<string, string>();
  const lists = allLists(c);
  for (const step of [...new Set(lists.map((x) => x.step))]) {
    let call = 1;
    // A child list comes before its call: both carry the call's number within the step.
    for (const { s } of lists.filter((x) => x.step === step)) {
      const name = oneLineText(s.key.replace(/#\d+$/u, ""));
      labels.set(s.key, `#${call} ${s.role === "child" ? `child ${name}` : name}`);
      if (s.role === "final") call++;
    }
  }
  return labels;
}

/**
 * The stages grouped by retrieval step, in order; stages without a step
 * (reports written before steps were recorded) are one group per scored run,
 * as then written.
 */
function stepGroups(stages: readonly StageView[]): { step: number | null; stages: StageView[] }[] {
  const groups: { step: number | null; stages: StageView[] }[] = [];
  let open: StageView[] = [];
  for (const s of stages) {
    if (s.step !== undefined) {
      const last = groups[groups.length - 1];
      if (last !== undefined && last.step === s.step) last.stages.push(s);
      else groups.push({ step: s.step, stages: [s] });
      continue;
    }
    open.push(s);
    if (s.role === "final") {
      groups.push({ step: null, stages: open });
      open = [];
    }
  }
  if (open.length > 0) groups.push({ step: null, stages: open });
  return groups;
}

/** Scored calls of each step (its `final` stages), by step. */
function callsPerStep(stages: readonly StageView[]): Map<number, number> {
  const n = new Map<number, number>();
  for (const s of stages) if (s.role === "final" && s.step !== undefined) n.set(s.step, (n.get(s.step) ?? 0) + 1);
  return n;
}

/**
 * Every retriever call of a turn, scored or not, by retrieval step (a
 * fallback search of another step shows too, with where the gold stood in
 * it): a header per step (scored or not, its calls), then each call's lists
 * (its child runs, then the call), named by `callLabels`. A stage without a
 * step (reports written before steps) is listed under "scored calls".
 */
function stepLines(c: CapturedLists, gold: ReadonlySet<string>, top: number, steps: number): string[] {
  const all = allLists(c);
  const labels = callLabels(c);
  const order = [...new Set(all.map((x) => x.step))].sort((a, b) => a - b);
  const lines: string[] = [];
  for (const n of order) {
    const inStep = all.filter((x) => x.step === n);
    const scored = inStep.some((x) => x.scored);
    const calls = inStep.filter((x) => x.s.role === "final").length;
    const what = `${calls} call${calls === 1 ? "" : "s"}${calls > 1 ? " overlapping in time" : ""}`;
    lines.push(
      n === 0 ? `  scored calls (${what}):` : `  step ${n} of ${steps}, ${scored ? "scored" : "not scored"} (${what}):`,
    );
    for (const { s } of inStep) {
      const shown = s.ids.slice(0, top);
      lines.push(
        `    ${labels.get(s.key)!} (${s.ids.length} cards${s.ids.length > shown.length ? `, top ${shown.length} shown` : ""})${s.error !== null ? ` failed: ${s.error}` : ""}:`,
      );
      s.ids.forEach((id, i) => {
        if (i < top || gold.has(id))
          lines.push(
            `      ${String(i + 1).padStart(3)}  ${oneLineText(id)}${gold.has(id) ? `   <- gold${i >= top ? ` (below the shown top ${top})` : ""}` : ""}`,
          );
      });
    }
  }
  return lines;
}

/**
 * Where one gold card stood at each scored list, in words, each list named as
 * the listing names it (`callLabels`): "gold: 2nd in #1 child BM25Retriever,
 * absent from #1 child VectorStoreRetriever (4 listed), 7th after #1
 * EnsembleRetriever, cut at k=5". `noChildRuns` names (by stage key) scored
 * runs whose children emitted no runs ("no child runs"). Calls that ran in
 * parallel (one retrieval step) are worded as the calls of one step, not as a
 * sequence: "step 1, 3 parallel calls: 1st from #1 KeywordRetriever, absent
 * from #2 KeywordRetriever (1 listed), …"; with several steps each is named
 * ("step 2: …"). `unscored`: the turn's other lists, which number the calls
 * of a step that has both. `cut`: where the card was lost, as the turn's
 * `goldLostAt` records it (null: it reached the top-k); when not given, the
 * one rule of ./lost-at.ts on `stages`.
 */
export function explainCapturedGold(
  stages: readonly StageView[],
  noChildRuns: readonly string[],
  retrievedIds: readonly string[],
  gold: string,
  k: number,
  unscored: readonly StageView[] = [],
  cut?: string | null,
): string {
  const labels = callLabels({ stages, unscored });
  const name = (key: string) => labels.get(key) ?? oneLineText(key);
  const groups = stepGroups(stages);
  const steps = groups.filter((g) => g.step !== null).length;
  const child = (s: StageView) => {
    const rank = s.ids.indexOf(gold);
    if (s.error !== null) return `${name(s.key)} failed (${s.error})`;
    return rank < 0 ? `absent from ${name(s.key)} (${s.ids.length} listed)` : `${ordinal(rank + 1)} in ${name(s.key)}`;
  };
  const parts = groups.map(({ step, stages: group }) => {
    const finals = group.filter((s) => s.role === "final");
    if (step !== null && finals.length > 1) {
      // Parallel calls of one step: each call's list, none "after" another.
      const allBare = finals.every((s) => noChildRuns.includes(s.key));
      const words = group.map((s) => {
        if (s.role === "child") return child(s);
        if (s.error !== null) return `${name(s.key)} failed (${s.error})`;
        const rank = s.ids.indexOf(gold);
        const bare = !allBare && noChildRuns.includes(s.key) ? " (no child runs)" : "";
        return rank < 0
          ? `absent from ${name(s.key)}${bare} (${s.ids.length} listed)`
          : `${ordinal(rank + 1)} from ${name(s.key)}${bare}`;
      });
      return `step ${step}, ${finals.length} parallel calls${allBare ? " (no child runs)" : ""}: ${words.join(", ")};`;
    }
    const words = group.map((s) => {
      if (s.role === "child") return child(s);
      if (s.error !== null) return `${name(s.key)} failed (${s.error})`;
      const rank = s.ids.indexOf(gold);
      const children = noChildRuns.includes(s.key) ? " (no child runs)" : "";
      return rank < 0
        ? `absent after ${name(s.key)}${children} (${s.ids.length} listed)`
        : `${ordinal(rank + 1)} after ${name(s.key)}${children}`;
    });
    return `${step !== null && steps > 1 ? `step ${step}: ` : ""}${words.join(", ")}${step !== null && steps > 1 ? ";" : ","}`;
  });
  const pos = retrievedIds.slice(0, k).indexOf(gold);
  const lost = cut === undefined ? capturedCut(stages, gold, pos >= 0) : cut;
  const tail =
    lost === null
      ? `retrieved at rank ${pos + 1} of the top-${k}`
      : lost === CUT_AT_K
        ? `cut at k=${k}`
        : lost === NOT_RETRIEVED
          ? "not retrieved"
          : lostAtText(name(lost), true);
  return `${gold}: ${[...parts, tail].join(" ")}`;
}

/** `retrace trace --graph` rendering of one turn captured from retriever callbacks; `recorded`: `trace --traces`, the retriever calls a recording holds. */
export function renderCapturedTurn(
  t: TurnReport,
  total: number,
  k: number,
  top: number,
  maxStateBytes?: number,
  { recorded = false }: { recorded?: boolean } = {},
): string {
  const from = recorded ? "recorded retriever calls" : "captured from retriever callbacks";
  const lines: string[] = [];
  lines.push(`=== ${t.caseId} turn ${t.turn} of ${total} (0-based; ${t.locale}, ${t.kind}, expect ${t.expect})`);
  lines.push(`user:  ${JSON.stringify(t.user)}`);
  const c = t.captured;
  // A recorded turn's error says itself what failed (its root, or the scored call naming its span or run): nothing was run here.
  if (t.error !== undefined) lines.push(`error: ${recorded ? t.error : turnErrorText(t)}`);
  else if (c === undefined)
    lines.push(
      `retrieval: ${NO_RETRIEVAL} (the turn ${recorded ? "recorded" : "made"} no retriever run)${t.noRetrieval !== true ? "" : t.gold.length > 0 ? "; a gold-bearing turn: scored as a miss" : "; empty gold: none needed"}`,
    );
  if (c === undefined) lines.push(...queriesLines(t, k));
  else {
    const steps = c.steps ?? c.topLevelRuns;
    const perStep = callsPerStep(c.stages);
    const labels = callLabels(c);
    const name = (key: string) => labels.get(key) ?? oneLineText(key);
    const finals = c.stages.filter((s) => s.role === "final");
    if (c.steps !== undefined && c.topLevelRuns > 1 && finals.length > 0 && finals.every((s) => s.step !== undefined)) {
      // The scored calls by step, named as listed below: the calls of one step ran in parallel, not one after another.
      const byStep = [...perStep.keys()].map((step) => {
        const keys = finals.filter((s) => s.step === step).map((s) => name(s.key));
        return `step ${step}: ${keys.join(", ")}${keys.length > 1 ? ` (${keys.length} calls in parallel)` : ""}`;
      });
      lines.push(
        `retrieval: ${from}: ${c.topLevelRuns} top-level calls in the turn, in ${steps} step${steps === 1 ? "" : "s"} (calls overlapping in time are one step); scored: ${byStep.join("; ")}`,
      );
    } else {
      const calls = `${c.topLevelRuns} top-level call${c.topLevelRuns === 1 ? "" : "s"} in the turn${c.steps !== undefined && c.topLevelRuns > 1 ? `, in ${steps} step${steps === 1 ? "" : "s"} (calls overlapping in time are one step); ${c.retrievers.length} scored` : ""}`;
      lines.push(`retrieval: ${from}: ${c.retrievers.join(", ")} (${calls})`);
    }
    if ((c.unknownIds ?? []).length > 0)
      lines.push(`  unknown ids (no card of the KB or catalog; misses): ${c.unknownIds!.map(oneLineText).join(", ")}`);
    if (c.noChildRuns.length > 0)
      lines.push(
        `  no child runs: ${c.noChildRuns.map(name).join(", ")} (${c.noChildRuns.length === 1 ? "its" : "their"} inner searches emit no retriever runs; no stages to show)`,
      );
    lines.push(`query: ${JSON.stringify(t.trace?.query ?? "")}`);
    lines.push(...queriesLines(t, k)); // --counterfactual: the three queries side by side, or why not
    lines.push(...traceJudgmentLines(t));
    const retrieved = t.retrievedIds ?? [];
    // Where each missed card was lost is the turn's `goldLostAt` (./lost-at.ts, set when the turn was scored): a card without an entry reached the top-k.
    for (const g of t.gold)
      lines.push(
        `  ${retrieved.slice(0, k).includes(g) ? "HIT " : "MISS"} ${explainCapturedGold(c.stages, c.noChildRuns, retrieved, g, k, c.unscored, t.goldLostAt?.[g]?.at ?? null)}`,
      );
    lines.push(...stepLines(c, new Set(t.gold), top, steps));
    lines.push(`final top-${k}: [${retrieved.slice(0, k).map(oneLineText).join(", ")}]`);
  }
  lines.push(`metrics: ${traceMetricsText(t)}`); // each metric once
  lines.push(`answer: ${JSON.stringify(t.answer)}`);
  if (maxStateBytes !== undefined && (t.stateBytes ?? 0) > maxStateBytes)
    lines.push(`state: ${mb(t.stateBytes!)}, above the ${mb(maxStateBytes)} limit (run.maxStateMb)`);
  return lines.join("\n");
}
