/**
 * The quarantine file (`--quarantine FILE`, docs/ci.md): turns known to be
 * flaky, kept in the report but out of the gate. One entry a line:
 *
 * ```
 * # comments start with #, blank lines are ignored
 * en-refund-003#1	the answer depends on the LLM's rewrite; issue #123
 * es-spei-error-009#0 reranker ties
 * ```
 *
 * `caseId#turn` (turn 0-based, as in the report), then a tab or spaces, then
 * the reason (required, free text). Checked against the cases file: an
 * unknown case, a turn the case does not have, a missing reason or an entry
 * listed twice is an error naming file and line (exit 2).
 *
 * What the gate does with it (./gate.ts): a quarantined turn stays in the
 * report, its aggregates, splits, intervals and renderings; the gate reads
 * every check without it — floor means, baseline drops (both sides' means
 * over the remaining turns), hit@k flips, and a `--graph` run's turn errors
 * and turns without retrieval — and records which turns it left out
 * (`gate.quarantine`).
 */
import { DataValidationError, type DataIssue } from "../../errors.js";
import type { CaseIndex } from "../../kb/cases.js";
import { readTextFileOrThrow } from "../../kb/text.js";
import { turnKey } from "../stats/bootstrap.js";

export interface QuarantineEntry {
  caseId: string;
  turn: number;
  reason: string;
  /** 1-based line in the quarantine file. */
  line: number;
}

export interface Quarantine {
  file: string;
  entries: QuarantineEntry[];
}

const ENTRY = /^(\S+)#(\d+)(?:[ \t]+(.*))?$/;

/** Parses and checks a quarantine file's text against the cases (`index`); throws DataValidationError listing every bad line. */
export function parseQuarantine(text: string, file: string, index: CaseIndex): Quarantine {
  const issues: DataIssue[] = [];
  const entries: QuarantineEntry[] = [];
  const first = new Map<string, number>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1;
    const s = raw.trim();
    if (s === "" || s.startsWith("#")) return;
    const m = ENTRY.exec(s);
    if (m === null) {
      issues.push({
        file,
        line,
        message: `expected \`caseId#turn<TAB or spaces>reason\` (turn 0-based), got ${JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s)}`,
      });
      return;
    }
    const [, caseId, turnText, reasonText] = m as unknown as [string, string, string, string | undefined];
    const turn = Number(turnText);
    const reason = (reasonText ?? "").trim();
    const c = index.get(caseId);
    if (c === undefined)
      issues.push({ file, line, field: "caseId", message: `case "${caseId}" is not in the cases file` });
    else if (turn >= c.turns)
      issues.push({ file, line, field: "turn", message: `case "${caseId}" has turns 0-${c.turns - 1}, got ${turn}` });
    if (reason === "")
      issues.push({
        file,
        line,
        field: "reason",
        message: `expected a reason after ${caseId}#${turn} (why the turn is quarantined)`,
      });
    const id = turnKey(caseId, turn);
    const prior = first.get(id);
    if (prior !== undefined) issues.push({ file, line, message: `${id} is listed twice, first on line ${prior}` });
    else first.set(id, line);
    entries.push({ caseId, turn, reason, line });
  });
  if (issues.length > 0) throw new DataValidationError(issues);
  return { file, entries };
}

/** Reads and checks a quarantine file (the strict text loader: exit 2 naming the file when it cannot be read). */
export async function readQuarantine(file: string, index: CaseIndex): Promise<Quarantine> {
  return parseQuarantine(await readTextFileOrThrow(file), file, index);
}

/** `caseId#turn` → reason. */
export function quarantinedTurns(q: Quarantine | undefined): ReadonlyMap<string, string> {
  return new Map((q?.entries ?? []).map((e) => [turnKey(e.caseId, e.turn), e.reason]));
}
