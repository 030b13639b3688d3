/**
 * Any thrown value becomes a string message (docs/reliability.md): a node
 * that throws `Object.create(null)` or `{message: 42}` gives an error turn,
 * never an internal error, and the message is redacted like any text.
 */
import { describe, expect, it } from "vitest";
import { thrownMessage } from "../src/errors.js";
import { invokeTurn, TurnGuard } from "../src/eval/sweep/turn-guard.js";
import { secretRedactor } from "../src/redact.js";

describe("thrownMessage", () => {
  it("a string for every kind of thrown value", () => {
    expect(thrownMessage(new Error("boom"))).toBe("boom");
    expect(thrownMessage("plain")).toBe("plain");
    expect(thrownMessage({ message: 42 })).toBe("42");
    expect(thrownMessage({ message: { nested: true } })).toBe("[object Object]");
    expect(thrownMessage(Object.create(null))).toBe("a thrown object with no message: {}");
    expect(thrownMessage(Object.assign(Object.create(null), { why: "x" }))).toContain('{"why":"x"}');
    expect(thrownMessage(undefined)).toBe("undefined");
    expect(thrownMessage(null)).toBe("null");
    expect(thrownMessage(10n)).toBe("10");
    const getter = Object.defineProperty({}, "message", {
      get() {
        throw new Error("no");
      },
    });
    expect(typeof thrownMessage(getter)).toBe("string");
    const noString = { toString: () => ({}) };
    expect(typeof thrownMessage(noString)).toBe("string");
  });
});

describe("a turn that throws a value that is not an Error", () => {
  for (const [name, value] of [
    ["Object.create(null)", () => Object.create(null) as unknown],
    ["{message: 42}", () => ({ message: 42 })],
    ["a Symbol", () => Symbol("s")],
  ] as const)
    it(`${name}: an error turn with a string message, redactable`, async () => {
      const outcome = await invokeTurn(
        () => {
          throw value();
        },
        {},
        { timeoutMs: 10_000, guard: new TurnGuard(), where: "t" },
      );
      expect(outcome.kind).toBe("threw");
      const error = (outcome as { error: unknown }).error;
      expect(typeof error).toBe("string");
      expect(typeof secretRedactor({ OPENAI_API_KEY: "sk-abcdefgh12345" })(error as string)).toBe("string");
    });
});
