/**
 * The groundedness judge of an eval (`judge` option, `retrace eval --judge
 * MODULE`): the chat model from the user's module, wrapped as the judge over
 * the data's cards, with its on-disk cache (docs/langchain-integration.md).
 * Needs only the KB and cases, so `runEval` opens it before any store starts.
 */
import path from "node:path";
import { checkWritable } from "../atomic.js";
import { InvalidArgumentError } from "../errors.js";
import { loadJudgeModel } from "../eval/measures/judge-module.js";
import { chatModelJudge } from "../eval/measures/judge.js";
import type { JudgeCost } from "../eval/measures/types.js";
import type { Report } from "../eval/report/types.js";
import { log } from "../log.js";
import type { LoadedData } from "../system.js";

export async function openJudge(spec: string, data: Pick<LoadedData, "kb" | "cases">, cacheDir: string | undefined) {
  // Checked before the judge loads and the sweep starts: a file where the folder should be, or a folder no file can be created in, is exit 2 naming --judge-cache.
  if (cacheDir !== undefined)
    await checkWritable(path.join(cacheDir, "entry.json"), "--judge-cache").catch((e: unknown) => {
      if (!(e instanceof InvalidArgumentError)) throw e;
      throw new InvalidArgumentError(
        "--judge-cache",
        `a folder retrace can write verdicts into (${e.expected.replace(/^a path retrace can write \((.*)\)$/s, "$1")})`,
        cacheDir,
      );
    });
  const model = await loadJudgeModel(spec);
  const questions = new Map<string, string>();
  for (const c of data.cases) c.turns.forEach((t, i) => questions.set(`${c.id}#${i}`, t.user));
  return chatModelJudge({ model, cards: data.kb.byId, questions, ...(cacheDir !== undefined ? { cacheDir } : {}) });
}

/**
 * Puts the judge's cost into a finished report: its model, prompt and
 * unparsable count in `judge`; what this run cost (it depends on the cache)
 * in `timings.judge`, `timings` kept last (docs/determinism.md). Logs one line.
 */
export function recordJudgeCost(report: Report, cost: JudgeCost): void {
  const { calls, cached, inputTokens, outputTokens, ...info } = cost;
  const { timings } = report;
  delete report.timings;
  report.judge = info;
  if (timings !== undefined) report.timings = { ...timings, judge: { calls, cached, inputTokens, outputTokens } };
  log.info(
    `judge ${cost.model}: ${calls} calls, ${cached} cached${inputTokens !== null ? `, ${inputTokens} input + ${outputTokens ?? 0} output tokens` : ", tokens not reported"}`,
  );
}
