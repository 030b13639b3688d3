/**
 * `retrace compare A B --out html:`: both runs side by side (docs/html-report.md):
 * the paired comparison per metric (B − A, its paired bootstrap interval, p
 * and verdict), both runs' summaries, the turns whose hit@k flipped —
 * hit→miss first, then miss→hit, each in dataset order — and, below them,
 * the turns whose hit@k held but whose recall@k or nDCG@k moved by at least
 * the comparison's threshold, biggest drop first; each row opens both runs'
 * turn views; and both runs' stage funnels with their intervals and the
 * paired difference per stage. All of it is the Comparison that
 * src/eval/gate/compare.ts `buildComparison` computed (../comparison.ts),
 * in its order: the page computes no statistic and orders no list itself.
 */
import type { Comparison } from "../comparison.js";
import type { Report, TurnReport } from "../types.js";
import { renderPage } from "./page.js";
import type { ComparePageData } from "./page-data.js";
import { registryPageData, runPageData, type RunPageData } from "./report-page.js";

/** The index of each turn (`caseId#turn`) in a report's `turns`. */
function indexOf(r: Report): Map<string, number> {
  return new Map(r.turns.map((t, i) => [`${t.caseId}#${t.turn}`, i]));
}

/** The comparison's turns (flips or moved turns), in its order, with each turn's index in A's and in B's `turns`. */
function located<T extends { id: string }>(
  a: Report,
  b: Report,
  turns: readonly T[],
): (T & { a: number; b: number })[] {
  const [ia, ib] = [indexOf(a), indexOf(b)];
  return turns.flatMap((f) => {
    const [i, j] = [ia.get(f.id), ib.get(f.id)];
    return i === undefined || j === undefined ? [] : [{ ...f, a: i, b: j }];
  });
}

/**
 * A run's page data holding only what the compare page's turn views need:
 * the turns at `open` (indices into `report.turns`) in full, and the earlier
 * turns of the same cases (the conversation so far) with only their user
 * text, answer and refusal — no trace, scores or citations. Dataset order is
 * kept; `index` maps an index in `report.turns` to its index in the kept list.
 * Summary figures, counts and the funnel stay those of the whole run.
 */
function keptRun(
  report: Report,
  name: string,
  open: ReadonlySet<number>,
): { run: RunPageData; index: Map<number, number> } {
  const full = runPageData(report, name);
  const lastOpen = new Map<string, number>();
  for (const i of open) {
    const t = report.turns[i]!;
    lastOpen.set(t.caseId, Math.max(lastOpen.get(t.caseId) ?? -1, t.turn));
  }
  const kept = report.turns.flatMap((t, i) => (open.has(i) || t.turn < (lastOpen.get(t.caseId) ?? -1) ? [i] : []));
  const index = new Map(kept.map((i, j) => [i, j]));
  const turns = kept.map((i): TurnReport => {
    const t = report.turns[i]!;
    if (open.has(i)) return t;
    const { trace: _trace, goldLostAt: _lost, ...rest } = t;
    return { ...rest, retrievedIds: [], citedIds: [], results: [] };
  });
  const ids = new Set(
    kept.filter((i) => open.has(i)).map((i) => `${report.turns[i]!.caseId}#${report.turns[i]!.turn}`),
  );
  const timings =
    report.timings === undefined
      ? undefined
      : {
          ...report.timings,
          turns: Object.fromEntries(Object.entries(report.timings.turns).filter(([id]) => ids.has(id))),
        };
  // The missed turns the page embeds, as indices into the kept turns (the counts stay the whole run's).
  const to = report.turnOutcomes;
  const turnOutcomes =
    to === undefined
      ? undefined
      : { ...to, missedTurns: to.missedTurns.flatMap((i) => (open.has(i) ? [index.get(i)!] : [])) };
  return {
    run: {
      ...full,
      report: {
        ...full.report,
        turns,
        ...(timings === undefined ? {} : { timings }),
        ...(turnOutcomes === undefined ? {} : { turnOutcomes }),
      },
      view: full.view,
    },
    index,
  };
}

/**
 * The compare page. To stay small it embeds, of each run's turns, only the
 * flipped and shifted ones and their conversations (docs/html-report.md);
 * everything else it shows comes from the aggregates and `comparisons`.
 */
export function renderHtmlComparison(
  a: { name: string; report: Report },
  b: { name: string; report: Report },
  comparison: Comparison,
): string {
  const flips = located(a.report, b.report, comparison.flips.turns).map(({ id, direction, a, b }) => ({
    id,
    direction,
    a,
    b,
  }));
  const shifts = located(a.report, b.report, comparison.moved.turns).map(
    ({ id, hit, recall, ndcg, largest, change, a, b }) => ({ id, a, b, hit, recall, ndcg, largest, change }),
  );
  const ka = keptRun(a.report, a.name, new Set([...flips, ...shifts].map((f) => f.a)));
  const kb = keptRun(b.report, b.name, new Set([...flips, ...shifts].map((f) => f.b)));
  const remap = <T extends { a: number; b: number }>(f: T): T => ({
    ...f,
    a: ka.index.get(f.a)!,
    b: kb.index.get(f.b)!,
  });
  const data: ComparePageData = {
    kind: "compare",
    registry: registryPageData(),
    a: ka.run,
    b: kb.run,
    comparisons: comparison.comparisons,
    method: comparison.method,
    note: comparison.note,
    flips: flips.map(remap),
    flipCounts: { hitToMiss: comparison.flips.hitToMiss, missToHit: comparison.flips.missToHit },
    shiftThreshold: comparison.moved.threshold,
    shifts: shifts.map(remap),
    funnels: comparison.funnels ?? null,
  };
  return renderPage(`retrace compare: ${a.name} vs ${b.name}`, data);
}
