/**
 * The groundedness judge over a scripted fake chat model (LangChain's
 * FakeListChatModel): verdict parsing, the prompt it sends, the on-disk cache
 * by (model, prompt, inputs) and the cost it reports; and `--judge MODULE`
 * loading.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import type { BaseMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { groundednessEvaluator, runEvaluators } from "../../src/eval/measures/evaluators.js";
import { loadJudgeModel } from "../../src/eval/measures/judge-module.js";
import { chatModelJudge, JUDGE_SYSTEM_PROMPT, parseVerdict } from "../../src/eval/measures/judge.js";
import type { TurnArtifacts } from "../../src/eval/measures/types.js";
import { tempDir } from "../helpers/chroma.js";
import { ROOT } from "../helpers/cli.js";

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir("judge")));
afterAll(() => cleanup());

const cards = new Map([
  ["card-freeze", { title: "Freeze your card", body: "Open the app, tap Card, then Freeze." }],
  ["fees", { title: "Fees", body: "No monthly fee." }],
]);
const questions = new Map([
  ["c1#0", "how do I lock my card?"],
  ["c1#1", "any fee?"],
]);
const turn = (t: number, answer: string, over: Partial<TurnArtifacts> = {}): TurnArtifacts => ({
  caseId: "c1",
  turn: t,
  locale: "en",
  kind: "golden",
  gold: ["card-freeze"],
  expect: "answer",
  retrievedIds: ["card-freeze", "fees", "card-freeze"],
  citedIds: [],
  answer,
  refused: false,
  ...over,
});

describe("parseVerdict", () => {
  it("reads a JSON verdict, in prose or a fence, or a plain `score: x`", () => {
    expect(parseVerdict('{"score": 1, "reason": "ok"}')).toEqual({ score: 1, comment: "ok" });
    expect(parseVerdict('Here:\n```json\n{"score": "0.5"}\n```')).toEqual({ score: 0.5 });
    expect(parseVerdict("Score: 0")).toEqual({ score: 0 });
    expect(parseVerdict('{"score": 2}')).toBeNull();
    expect(parseVerdict("I cannot tell")).toBeNull();
  });
});

describe("chatModelJudge with a scripted fake chat model", () => {
  it("scores answered turns, sends the documented prompt, caches verdicts so a re-run makes no call", async () => {
    const cacheDir = path.join(dir, "cache");
    const seen: BaseMessage[][] = [];
    const fake = new FakeListChatModel({ responses: ['{"score": 1, "reason": "supported"}', "no idea"] });
    const recording = { invoke: (m: BaseMessage[]) => (seen.push(m), fake.invoke(m)), getName: () => fake.getName() };
    const first = chatModelJudge({ model: recording, cards, questions, cacheDir });
    const ev = groundednessEvaluator({ judge: first.judge });
    expect(await runEvaluators([ev], turn(0, "Tap Card, then Freeze. [card-freeze]"))).toEqual([
      { key: "groundedness", score: 1, comment: "supported" },
    ]);
    expect(await runEvaluators([ev], turn(1, "It costs $5."))).toEqual([]); // unparsable reply: no key, counted
    expect(await runEvaluators([ev], turn(2, "x", { refused: true }))).toEqual([]); // refused: not judged, no call
    expect(first.cost()).toEqual({
      model: "FakeListChatModel",
      prompt: "groundedness-v1",
      calls: 2,
      cached: 0,
      inputTokens: null,
      outputTokens: null,
      unparsable: 1,
    });
    expect(seen[0]![0]!.content).toBe(JUDGE_SYSTEM_PROMPT);
    // Each retrieved card once, with its title and text.
    expect(seen[0]![1]!.content).toBe(
      "Question:\nhow do I lock my card?\n\nAnswer:\nTap Card, then Freeze. [card-freeze]\n\nCards:\n[card-freeze] Freeze your card\nOpen the app, tap Card, then Freeze.\n\n[fees] Fees\nNo monthly fee.",
    );

    const throwing = {
      invoke: () => Promise.reject(new Error("must not be called")),
      getName: () => "FakeListChatModel",
    };
    const again = chatModelJudge({ model: throwing, cards, questions, cacheDir });
    const ev2 = groundednessEvaluator({ judge: again.judge });
    expect(await runEvaluators([ev2], turn(0, "Tap Card, then Freeze. [card-freeze]"))).toEqual([
      { key: "groundedness", score: 1, comment: "supported" },
    ]);
    expect(await runEvaluators([ev2], turn(1, "It costs $5."))).toEqual([]);
    expect(again.cost()).toMatchObject({ calls: 0, cached: 2, unparsable: 1 });
    // A different answer is a different input: not cached, so the (failing) model is called → exit 3.
    await expect(runEvaluators([ev2], turn(0, "Call us."))).rejects.toMatchObject({ exitCode: 3 });
  });

  it("never uses a corrupt or foreign cache entry: it warns naming the file, asks the model and rewrites the entry", async () => {
    const cacheDir = path.join(dir, "cache-corrupt");
    const seed = chatModelJudge({
      model: new FakeListChatModel({ responses: ['{"score": 1}'] }),
      cards,
      questions,
      cacheDir,
    });
    await seed.judge(turn(0, "Tap Card, then Freeze."));
    const [entry] = await readdir(cacheDir);
    const file = path.join(cacheDir, entry!);
    const warnings: string[] = [];
    const spy = vi
      .spyOn(process.stderr, "write")
      .mockImplementation((chunk: string | Uint8Array) => (warnings.push(String(chunk)), true));
    try {
      for (const corrupt of [
        '{"model": "FakeListChatModel", "prompt": "groundedness-v1", "verd',
        '{"model": "FakeListChatModel", "prompt": "groundedness-v1", "verdict": {"score": 7}}',
        '{"model": "OtherModel", "prompt": "groundedness-v1", "verdict": {"score": 1}}',
      ]) {
        await writeFile(file, corrupt);
        const j = chatModelJudge({
          model: new FakeListChatModel({ responses: ['{"score": 0, "reason": "asked again"}'] }),
          cards,
          questions,
          cacheDir,
        });
        expect(await j.judge(turn(0, "Tap Card, then Freeze."))).toEqual({ score: 0, comment: "asked again" });
        expect(j.cost()).toMatchObject({ calls: 1, cached: 0 });
        expect(JSON.parse(await readFile(file, "utf8"))).toMatchObject({ verdict: { score: 0 } });
      }
    } finally {
      spy.mockRestore();
    }
    expect(warnings.filter((w) => w.includes(`judge cache: ignoring ${file}`))).toHaveLength(3);
  });

  it("sums the tokens a model reports", async () => {
    const usageReportingFake = {
      invoke: async () => ({ content: '{"score": 0}', usage_metadata: { input_tokens: 120, output_tokens: 7 } }),
      getName: () => "UsageReportingChatModelFake",
    };
    const j = chatModelJudge({ model: usageReportingFake, cards, questions });
    await j.judge(turn(0, "a"));
    await j.judge(turn(1, "b"));
    expect(j.cost()).toMatchObject({ calls: 2, inputTokens: 240, outputTokens: 14 });
  });
});

describe("loadJudgeModel", () => {
  it("loads a module whose default export is a factory of a chat model", async () => {
    const m = await loadJudgeModel(path.join(ROOT, "test/fixtures/judge/scripted-judge.mjs"));
    expect(typeof m.invoke).toBe("function");
    expect(m.getName?.()).toBe("FakeListChatModel");
  });
  it("exits 2 naming --judge for a missing file or a module without a chat model", async () => {
    await expect(loadJudgeModel(path.join(dir, "nope.mjs"))).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/--judge/),
    });
    await expect(loadJudgeModel(path.join(ROOT, "test/fixtures/judge/../../helpers/cli.ts"))).rejects.toMatchObject({
      exitCode: 2,
    });
  });
});
