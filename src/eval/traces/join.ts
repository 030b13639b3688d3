/**
 * Recorded conversations joined to eval cases (docs/recorded-traces.md,
 * "Gold joins by conversation"): a conversation joins the case whose id is
 * `caseIdOf(conversation id)` — the id `retrace cases import` gives it — and
 * its turns join the case's turns by position, checked against the user text
 * (whitespace-normalized). A turn whose text differs is listed and not
 * scored; recorded turns beyond the case's, case turns beyond the
 * recording's, conversations with no case and cases with no conversation are
 * counted and listed, never dropped silently. Pure.
 */
import { threadCaseId } from "../../kb/conversations.js";
import type { EvalCase } from "../../kb/types.js";
import type { RecordedConversation, RecordedTurn } from "./types.js";

/** The case id of a conversation: the one rule `cases import` uses too (src/kb/conversations.ts `threadCaseId`). */
export const caseIdOf = threadCaseId;

const normalize = (s: string) => s.trim().replace(/\s+/g, " ");
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Mismatches in the order the join lists them: by case id, then turn. */
export function sortMismatches<T extends { case: string; turn: number }>(list: readonly T[]): T[] {
  return [...list].sort((a, b) => cmp(a.case, b.case) || a.turn - b.turn);
}

/** One case turn with its recorded turn. */
export interface JoinedTurn {
  caseIndex: number;
  turnIndex: number;
  recorded: RecordedTurn;
}

/** The most entries a listing of the join keeps (its count is exact). */
export const JOIN_LIST_MAX = 20;

export interface TraceJoin {
  joined: JoinedTurn[];
  /** Case turns whose recorded user text differs: not scored. */
  mismatches: { case: string; turn: number; recorded: string; expected: string; where: string }[];
  mismatchCount: number;
  /** Conversations with no case of their id. */
  conversationsWithoutCase: string[];
  conversationsWithoutCaseCount: number;
  /** Recorded turns past the end of their case. */
  turnsWithoutCaseTurn: number;
  /** Case turns past the end of their recording. */
  caseTurnsWithoutTrace: number;
  /** Selected cases no conversation joined. */
  casesWithoutTrace: string[];
  casesWithoutTraceCount: number;
  /** Conversations that named no conversation id (one-turn conversations named by their root). */
  anonymous: string[];
  anonymousCount: number;
}

/**
 * Joins `conversations` to `cases` (both in their own order; the result in
 * case order). The lists are sorted (mismatches by case id and turn, cases by
 * id) before they are cut, so the shards of a run (`elsewhere`) list what the
 * unsharded run lists.
 *
 * `elsewhere`: with `--shard i/n`, the ids of the selected cases another shard
 * scores; their conversations are left out here, not counted as having no
 * case. What does not depend on the shard (conversations with no case in
 * the whole selection, anonymous conversations) is counted in every shard
 * alike, what does (scored turns, mismatches, turns and cases left over) is
 * counted by the shard that has the case, so the counts of the shards add up
 * to the unsharded run's (src/app/traces-eval.ts `mergeTracesSections`).
 */
export function joinTraces(
  conversations: readonly RecordedConversation[],
  cases: readonly EvalCase[],
  opts: { elsewhere?: ReadonlySet<string> } = {},
): TraceJoin {
  const byId = new Map<string, number>();
  cases.forEach((c, i) => byId.set(c.id, i));
  const out: TraceJoin = {
    joined: [],
    mismatches: [],
    mismatchCount: 0,
    conversationsWithoutCase: [],
    conversationsWithoutCaseCount: 0,
    turnsWithoutCaseTurn: 0,
    caseTurnsWithoutTrace: 0,
    casesWithoutTrace: [],
    casesWithoutTraceCount: 0,
    anonymous: [],
    anonymousCount: 0,
  };
  const seen = new Set<number>();
  for (const conv of conversations) {
    if (conv.anonymous) {
      out.anonymousCount++;
      if (out.anonymous.length < JOIN_LIST_MAX) out.anonymous.push(conv.id);
    }
    const caseId = caseIdOf(conv.id);
    const ci = byId.get(caseId);
    if (ci === undefined && opts.elsewhere?.has(caseId) === true) continue; // another shard's case
    if (ci === undefined) {
      out.conversationsWithoutCaseCount++;
      if (out.conversationsWithoutCase.length < JOIN_LIST_MAX) out.conversationsWithoutCase.push(conv.id);
      continue;
    }
    seen.add(ci);
    const c = cases[ci]!;
    conv.turns.forEach((rec, ti) => {
      const turn = c.turns[ti];
      if (turn === undefined) {
        out.turnsWithoutCaseTurn++;
        return;
      }
      // Its retriever calls cannot all be attached (a parent link missing from the export): listed by the reader (ReadTraces.unattached), never scored as a miss.
      if ((rec.unattachedCalls ?? 0) > 0) return;
      if (normalize(turn.user) !== normalize(rec.user)) {
        out.mismatchCount++;
        out.mismatches.push({ case: c.id, turn: ti, recorded: rec.user, expected: turn.user, where: rec.where });
        return;
      }
      out.joined.push({ caseIndex: ci, turnIndex: ti, recorded: rec });
    });
    out.caseTurnsWithoutTrace += Math.max(0, c.turns.length - conv.turns.length);
  }
  cases.forEach((c, i) => {
    if (seen.has(i)) return;
    out.casesWithoutTraceCount++;
    out.casesWithoutTrace.push(c.id);
  });
  out.joined.sort((a, b) => a.caseIndex - b.caseIndex || a.turnIndex - b.turnIndex);
  out.mismatches = sortMismatches(out.mismatches).slice(0, JOIN_LIST_MAX);
  out.casesWithoutTrace = out.casesWithoutTrace.sort(cmp).slice(0, JOIN_LIST_MAX);
  return out;
}
