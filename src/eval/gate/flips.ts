/**
 * Hit@k flips against a baseline (./gate.ts, `--gate max-flips`): the turns
 * whose hit@k was 1 in the baseline and is 0 now, and their one-line text
 * (also GitHub's annotations, ./github.ts). Pure.
 */
import type { Baseline } from "./baseline.js";
import { HIT_KEY } from "../measures/metrics.js";
import { turnKey } from "../stats/bootstrap.js";
import { goldPositionsWords } from "../report/stages.js";
import type { GateFlip, Report } from "../report/types.js";

/** Turns whose hit@k was 1 in the baseline and is 0 in the report, in report order. */
export function hitFlips(report: Report, baseline: Baseline): GateFlip[] {
  const flips: GateFlip[] = [];
  for (const t of report.turns) {
    const now = t.results.find((r) => r.key === HIT_KEY)?.score;
    const before = baseline.perTurn[turnKey(t.caseId, t.turn)]?.[HIT_KEY];
    if (now !== 0 || before !== 1) continue;
    const flip: GateFlip = {
      caseId: t.caseId,
      turn: t.turn,
      locale: t.locale,
      kind: t.kind,
      user: t.user,
      gold: t.gold,
      retrievedIds: t.retrievedIds ?? [],
    };
    if (t.trace !== undefined) flip.goldPositions = t.trace.goldPositions;
    flips.push(flip);
  }
  return flips;
}

/** `caseId#turn (locale): gold [a] now dense 7, bm25 —, fused 9` */
export function flipText(f: GateFlip): string {
  const where = f.goldPositions === undefined ? "no trace" : goldPositionsWords(f.goldPositions);
  return `${f.caseId}#${f.turn} (${f.locale}, ${f.kind}) gold=[${f.gold.join(", ")}] top=[${f.retrievedIds.join(", ")}] now ${where}`;
}
