/**
 * `run.replay: recorded` pieces (src/eval/sweep/replay.ts, src/kb/hash.ts): the recorded
 * conversation before a turn, in order, with each turn's assistant `context` in its place;
 * the dataset hash takes `context` in that mode only (the default's hash is unchanged).
 */
import { describe, expect, it } from "vitest";
import { datasetHash } from "../../src/kb/hash.js";
import type { EvalCase } from "../../src/kb/types.js";
import { historyMessages, recordedHistory } from "../../src/eval/sweep/replay.js";

const c: EvalCase = {
  id: "c1",
  line: 1,
  locale: "en",
  kind: "golden",
  turns: [
    { user: "hi", context: [{ role: "assistant", content: "Welcome!" }] },
    { user: "I booked a room", context: [{ role: "assistant", content: "How can I help?" }] },
    {
      user: "are their bathrooms clean?",
      context: [{ role: "assistant", content: "The Acorn Guest House is booked." }],
    },
  ],
};

describe("recordedHistory", () => {
  it("is the conversation before the turn: each turn's context before its user message, the turn's own context last", () => {
    expect(recordedHistory(c, 0)).toEqual([{ role: "assistant", content: "Welcome!" }]);
    expect(recordedHistory(c, 2)).toEqual([
      { role: "assistant", content: "Welcome!" },
      { role: "user", content: "hi" },
      { role: "assistant", content: "How can I help?" },
      { role: "user", content: "I booked a room" },
      { role: "assistant", content: "The Acorn Guest House is booked." },
    ]);
    const msgs = historyMessages(recordedHistory(c, 1));
    expect(msgs.map((m) => [m.getType(), m.text])).toEqual([
      ["ai", "Welcome!"],
      ["human", "hi"],
      ["ai", "How can I help?"],
    ]);
  });
});

describe("datasetHash with recorded context", () => {
  it("leaves the default hash alone and takes context only in recorded mode", () => {
    const without: EvalCase = { ...c, turns: c.turns.map(({ context: _c, ...t }) => t) };
    expect(datasetHash([c])).toBe(datasetHash([without]));
    expect(datasetHash([c], { recordedContext: true })).not.toBe(datasetHash([c]));
    expect(datasetHash([without], { recordedContext: true })).not.toBe(datasetHash([without])); // the mode itself is marked
    const edited: EvalCase = {
      ...c,
      turns: c.turns.map((t, i) =>
        i === 2 ? { ...t, context: [{ role: "assistant" as const, content: "The Ritz is booked." }] } : t,
      ),
    };
    expect(datasetHash([edited])).toBe(datasetHash([c]));
    expect(datasetHash([edited], { recordedContext: true })).not.toBe(datasetHash([c], { recordedContext: true }));
  });
});
