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

/** Joins `conversations` to `cases` (both in their own order; the result in case order). */
export function joinTraces(conversations: readonly RecordedConversation[], cases: readonly EvalCase[]): TraceJoin {
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
    const ci = byId.get(caseIdOf(conv.id));
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
      if (normalize(turn.user) !== normalize(rec.user)) {
        out.mismatchCount++;
        if (out.mismatches.length < JOIN_LIST_MAX) out.mismatches.push({ case: c.id, turn: ti, recorded: rec.user, expected: turn.user, where: rec.where });
        return;
      }
      out.joined.push({ caseIndex: ci, turnIndex: ti, recorded: rec });
    });
    out.caseTurnsWithoutTrace += Math.max(0, c.turns.length - conv.turns.length);
  }
  cases.forEach((c, i) => {
    if (seen.has(i)) return;
    out.casesWithoutTraceCount++;
    if (out.casesWithoutTrace.length < JOIN_LIST_MAX) out.casesWithoutTrace.push(c.id);
  });
  out.joined.sort((a, b) => a.caseIndex - b.caseIndex || a.turnIndex - b.turnIndex);
  return out;
}
