/**
 * A large run for the off-thread report build (test/eval/build-thread.test.ts,
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
