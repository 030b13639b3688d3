/**
 * The groundedness judge of an eval (`judge` option, `retrace eval --judge
 * MODULE`): the chat model from the user's module, wrapped as the judge over
 * the data's cards, with its on-disk cache (docs/langchain-integration.md).
 * Needs only the KB and cases, so `runEval` opens it before any store starts.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { checkWritable } from "../atomic.js";
import { InvalidArgumentError } from "../errors.js";
import { chatModelJudge, type ChatModelLike } from "../eval/measures/judge.js";
import type { JudgeCost } from "../eval/measures/types.js";
import type { Report } from "../eval/report/types.js";
import { log } from "../log.js";
import type { LoadedData } from "../system.js";
import { isolationLimits, type IsolationLimits } from "./graph-isolation.js";
import { hostModule } from "./module-isolation.js";

/**
 * The chat model of a `--judge` module, loaded, built and called in a thread
 * of its own (src/app/module-isolation.ts): what it does cannot end, hang or
 * flood the run. Its `invoke` sends the messages' roles and texts and
 * answers the reply's text and token counts; `getName()` is the model id the
 * module's model gave (`modelId`), so verdict cache keys are unchanged.
 * `close()` ends the thread (it never holds the process between calls).
 */
export async function isolatedJudgeModel(
  spec: string,
  limits: IsolationLimits,
): Promise<ChatModelLike & { close(): Promise<void> }> {
  const hosted = await hostModule({ kind: "judge", spec, cwd: process.cwd() }, `--judge ${spec}`, limits);
  const id = hosted.info.id ?? "chat-model";
  let calls = 0;
  return {
    getName: () => id,
    invoke: async (messages) => {
      const n = ++calls;
      const plain = messages.map((m) => ({
        role: m.getType() === "system" ? "system" : "human",
        content: typeof m.content === "string" ? m.content : JSON.stringify(m.content),
      }));
      return (await hosted.call({ messages: plain }, `judge call ${n}`)) as Awaited<
        ReturnType<ChatModelLike["invoke"]>
      >;
    },
    close: () => hosted.close(),
  };
}

export async function openJudge(
  spec: string,
  data: Pick<LoadedData, "kb" | "cases">,
  cacheDir: string | undefined,
  /** The judge thread's limits (`isolationLimits` of the run's options: `run.turnTimeout` is each call's deadline). */
  limits: IsolationLimits = isolationLimits({}),
) {
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
  if (!existsSync(path.resolve(spec)))
    throw new InvalidArgumentError(
      "--judge",
      "a module file exporting a LangChain chat model or a factory of one",
      spec,
    );
  const model = await isolatedJudgeModel(spec, limits);
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
