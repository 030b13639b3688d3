/**
 * The groundedness judge of an eval (`judge` option, `retrace eval --judge
 * MODULE`): the chat model from the user's module, wrapped as the judge over
 * the data's cards, with its on-disk cache (docs/langchain-integration.md).
 * Needs only the KB and cases, so `runEval` opens it before any store starts.
 */
import { loadJudgeModel } from "../eval/measures/judge-module.js";
import { chatModelJudge } from "../eval/measures/judge.js";
import type { LoadedData } from "../system.js";

export async function openJudge(spec: string, data: Pick<LoadedData, "kb" | "cases">, cacheDir: string | undefined) {
  const model = await loadJudgeModel(spec);
  const questions = new Map<string, string>();
  for (const c of data.cases) c.turns.forEach((t, i) => questions.set(`${c.id}#${i}`, t.user));
  return chatModelJudge({ model, cards: data.kb.byId, questions, ...(cacheDir !== undefined ? { cacheDir } : {}) });
}
