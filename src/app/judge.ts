/**
 * The groundedness judge of an eval (`judge` option, `retrace eval --judge
 * MODULE`): the chat model from the user's module, wrapped as the judge over
 * the system's cards, with its on-disk cache (docs/langchain-integration.md).
 */
import { loadJudgeModel } from "../eval/measures/judge-module.js";
import { chatModelJudge } from "../eval/measures/judge.js";
import type { RetraceSystem } from "../system.js";

export async function openJudge(spec: string, system: Pick<RetraceSystem, "kb" | "cases">, cacheDir: string | undefined) {
  const model = await loadJudgeModel(spec);
  const questions = new Map<string, string>();
  for (const c of system.cases) c.turns.forEach((t, i) => questions.set(`${c.id}#${i}`, t.user));
  return chatModelJudge({ model, cards: system.kb.byId, questions, ...(cacheDir !== undefined ? { cacheDir } : {}) });
}
