/**
 * A report's retrieval as TREC files (docs/langchain-integration.md), so
 * `retrace score`, trec_eval, ranx or ir_measures can read a sweep:
 *
 * - run:   `qid Q0 docno rank score tag`, one line per retrieved card of each
 *          turn whose retrieval ran, qid `caseId#turn` (turn 0-based), docno
 *          the card id, rank 1-based, score `n − rank + 1` (strictly
 *          decreasing, so trec_eval's score order is the retrieval order);
 * - qrels: `qid 0 docno 1`, one line per gold card of each gold-bearing turn
 *          the report scores (gold is binary: every acceptable card has
 *          relevance 1). No-match turns (empty gold) have no judgments, so
 *          trec tools skip them, as the report does; turns the report does not
 *          score (a `--graph` turn that errored) have none either.
 *
 * A scored turn whose ranking is empty has judgments and no run line: TREC
 * files cannot hold an empty ranking, so trec_eval and `retrace score` leave
 * such a query out unless told to score it as 0 — `-c`, as the report does.
 * With `-c` the means are the report's exactly (SCORE_HINT).
 *
 * Ids are deduplicated by first occurrence (as the metrics do). An id with
 * white space (a line break included) cannot be a TREC field: it is refused
 * (InvalidArgumentError, exit 2, naming the turn), never written split
 * (docs/reliability.md, "Hostile ids in every output"). Pure.
 */
import { InvalidArgumentError } from "../../errors.js";
import { HIT_KEY } from "../measures/metrics.js";
import type { Report } from "../report/types.js";

export const DEFAULT_RUN_TAG = "retrace";

/** How the exported files give the report's means: `-c`, since a turn with an empty ranking has no run line (it scores 0 in the report). */
export function scoreHint(dir: { qrels: string; run: string }, k: number): string {
  return `retrace score -c -k ${k} ${dir.qrels} ${dir.run}   (or trec_eval -c -m success.${k} -m recall.${k} -m ndcg_cut.${k} ${dir.qrels} ${dir.run})`;
}

function checkToken(what: string, s: string): string {
  if (s === "" || /\s/.test(s))
    throw new InvalidArgumentError(what, "a non-empty id without whitespace (TREC fields are whitespace-separated)", s);
  return s;
}

export function trecFiles(
  report: Report,
  opts: { tag?: string } = {},
): { run: string; qrels: string; queries: number; judged: number } {
  const tag = checkToken("tag", opts.tag ?? DEFAULT_RUN_TAG);
  const run: string[] = [];
  const qrels: string[] = [];
  let queries = 0;
  let judged = 0;
  for (const t of report.turns) {
    const qid = checkToken("query id (caseId#turn)", `${t.caseId}#${t.turn}`);
    if (t.retrievedIds !== null) {
      const ids = [...new Set(t.retrievedIds)];
      ids.forEach((id, i) =>
        run.push(`${qid} Q0 ${checkToken(`card id retrieved at ${qid}`, id)} ${i + 1} ${ids.length - i} ${tag}`),
      );
      queries++;
    }
    // Judged only where the report scores the turn: an errored --graph turn is in neither the means nor the qrels.
    const gold = t.results.some((r) => r.key === HIT_KEY) ? [...new Set(t.gold)] : [];
    for (const g of gold) qrels.push(`${qid} 0 ${checkToken(`gold card id of ${qid}`, g)} 1`);
    if (gold.length > 0) judged++;
  }
  return {
    run: run.length === 0 ? "" : `${run.join("\n")}\n`,
    qrels: qrels.length === 0 ? "" : `${qrels.join("\n")}\n`,
    queries,
    judged,
  };
}
