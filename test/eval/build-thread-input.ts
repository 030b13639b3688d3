/**
 * A large run for the stepped report build (test/eval/build-thread.test.ts,
 * test/fixtures/faults/build-interrupt.ts): the hand-checked fixture's turns
 * (./report-fixture.ts) copied `copies` times under new case ids, every third
 * copy store-less (its retrieval keys not measured), the copies split into
 * tune and holdout parts and two locales.
 */
import { allEvaluators } from "../../src/eval/measures/evaluators.js";
import type { BuildReportInput } from "../../src/eval/report/aggregate.js";
import type { TurnReport } from "../../src/eval/report/types.js";
import { K, ROWS, runInfo, turnReports } from "./report-fixture.js";

export async function largeInput(copies: number): Promise<BuildReportInput> {
  const evaluators = allEvaluators({ k: K });
  const stored = await turnReports(ROWS, evaluators);
  const storeless = await turnReports(
    ROWS.map((r) => ({ ...r, retrievedIds: null })),
    evaluators,
  );
  const turns: TurnReport[] = [];
  for (let j = 0; j < copies; j++)
    for (const t of j % 3 === 2 ? storeless : stored)
      turns.push({
        ...t,
        caseId: `${t.caseId}-${j}`,
        locale: j % 4 === 1 ? "de" : t.locale,
        part: j % 2 === 0 ? "tune" : "holdout",
      });
  return {
    run: runInfo(),
    turns,
    evaluators,
    seed: 7,
    cardsPerLocale: { en: 40, de: 30 },
    counterfactual: { enabled: true },
  };
}

/**
 * `largeInput` with every part of a turn the report build might read, and
 * the texts it must not need: every fourth turn captured from a user's
 * graph's retriever runs (stages with a child run, documents with their
 * texts), the traced turns with ranked stage heads and sizes, gold-bearing
 * turns with query attributions (some lost by the rewrite).
 */
export async function richInput(copies: number): Promise<BuildReportInput> {
  const input = await largeInput(copies);
  const turns = input.turns.map((t, i): TurnReport => {
    const ids = t.retrievedIds ?? [];
    const out: TurnReport = { ...t };
    if (t.trace !== undefined)
      out.trace = {
        ...t.trace,
        stages: { bm25: ids.map((id, r) => [id, 1 / (r + 1)]), fused: ids.slice(1).map((id) => [id, 0.25]) },
        stageSizes: { bm25: ids.length + 7, fused: ids.length + 2 },
      };
    if (i % 4 === 1 && t.trace !== undefined) {
      // As a recorded or `--graph` turn: the trace's gold positions by retriever, no ranked heads.
      out.trace = { ...t.trace, goldPositions: Object.fromEntries(t.gold.map((g) => [g, { Hybrid: rankOf(ids, g) }])) };
      out.captured = {
        source: "callbacks",
        retrievers: ["Hybrid"],
        topLevelRuns: 1,
        steps: 1,
        stages: [
          { key: "Dense", role: "child", ids: [...ids.slice(1), "x"], error: null, step: 1 },
          { key: "Hybrid", role: "final", ids, error: null, step: 1 },
        ],
        noChildRuns: [],
        unknownIds: [],
        documents: ids.map((id, r) => ({ rank: r + 1, id, text: `the text of ${id}, `.repeat(20) })),
      };
    }
    if (t.gold.length > 0 && t.retrievedIds !== null && i % 3 !== 2) {
      const rank = t.gold.some((g) => ids.includes(g)) ? 1 : null;
      const outcome = (query: string) => ({ query, rank, scores: { retrieval_hit_at_k: rank === null ? 0 : 1 } });
      out.queries = {
        attribution: i % 5 === 0 ? "rewrite_lost_it" : "ok",
        graph: outcome(`rewritten ${t.user}`),
        raw: outcome(t.user),
      };
    }
    return out;
  });
  return { ...input, turns };
}

const rankOf = (ids: readonly string[], id: string) => (ids.includes(id) ? ids.indexOf(id) + 1 : null);
