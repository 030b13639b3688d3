/**
 * `retrace compare A B --html`: both runs side by side (docs/html-report.md):
 * the paired comparison per metric (B − A, its interval, the randomization
 * p-value, all from ../compare.ts), both runs' summaries, and the turns whose
 * hit@k flipped — hit→miss first, then miss→hit, each in dataset order — each
 * opening both runs' turn views.
 */
import type { KeyComparison } from "../compare.js";
import { SIGNIFICANCE_LEVEL } from "../report.js";
import type { Report, TurnReport } from "../types.js";
import { renderPage } from "./page.js";
import { runPageData } from "./report-page.js";

const HIT_KEY = "retrieval_hit_at_k";

export interface Flip {
  /** `caseId#turn` */
  id: string;
  direction: "hit→miss" | "miss→hit";
  /** Index of the turn in A's and in B's `turns`. */
  a: number;
  b: number;
}

function hit(t: TurnReport): number | undefined {
  return t.results.find((r) => r.key === HIT_KEY)?.score;
}

/**
 * Turns scored in both runs whose hit@k differs: hit→miss (A 1, B 0) first,
 * then miss→hit, each group in A's order. Turns only one run scored are left out.
 */
export function flippedTurns(a: Report, b: Report): Flip[] {
  const inB = new Map(b.turns.map((t, i) => [`${t.caseId}#${t.turn}`, i]));
  const lost: Flip[] = [];
  const gained: Flip[] = [];
  a.turns.forEach((t, i) => {
    const id = `${t.caseId}#${t.turn}`;
    const j = inB.get(id);
    if (j === undefined) return;
    const ha = hit(t);
    const hb = hit(b.turns[j]!);
    if (ha === 1 && hb === 0) lost.push({ id, direction: "hit→miss", a: i, b: j });
    else if (ha === 0 && hb === 1) gained.push({ id, direction: "miss→hit", a: i, b: j });
  });
  return [...lost, ...gained];
}

export function renderHtmlComparison(a: { name: string; report: Report }, b: { name: string; report: Report }, comparisons: KeyComparison[], opts: { seed: number }): string {
  return renderPage(`retrace compare: ${a.name} vs ${b.name}`, {
    kind: "compare",
    significance: SIGNIFICANCE_LEVEL,
    seed: opts.seed,
    a: runPageData(a.report, a.name),
    b: runPageData(b.report, b.name),
    comparisons,
    flips: flippedTurns(a.report, b.report),
  });
}
