/**
 * `--judge MODULE` for `retrace eval`: the chat model from the user's module,
 * wrapped as the groundedness judge over the session's cards, with its
 * on-disk cache (docs/langchain-integration.md).
 */
import { loadJudgeModel } from "../eval/measures/judge-module.js";
import { chatModelJudge } from "../eval/measures/judge.js";
import type { RetraceSystem as Session } from "../system.js";

export async function openJudge(spec: string, session: Pick<Session, "kb" | "cases">, cacheDir: string | undefined) {
  const model = await loadJudgeModel(spec);
  const questions = new Map<string, string>();
  for (const c of session.cases) c.turns.forEach((t, i) => questions.set(`${c.id}#${i}`, t.user));
  return chatModelJudge({ model, cards: session.kb.byId, questions, ...(cacheDir !== undefined ? { cacheDir } : {}) });
}
