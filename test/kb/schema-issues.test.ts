import { describe, expect, it } from "vitest";
import { z } from "zod";
import { formatIssue } from "../../src/errors.js";
import { fieldPath, parseWithSchema, showValue, valueAt, zodIssuesToDataIssues } from "../../src/kb/schema-issues.js";

const issuesOf = (schema: z.ZodTypeAny, input: unknown, line?: number) => {
  const r = schema.safeParse(input);
  if (r.success) throw new Error("expected the parse to fail");
  return zodIssuesToDataIssues(r.error, input, { file: "f.jsonl", line });
};

describe("fieldPath / valueAt / showValue", () => {
  it("writes dotted and bracketed paths", () => {
    expect(fieldPath(["turns", 1, "must_cite_one_of", 0])).toBe("turns[1].must_cite_one_of[0]");
    expect(fieldPath(["perTurn", "g1#0", "hit"])).toBe("perTurn.g1#0.hit");
    expect(fieldPath([])).toBeUndefined();
  });

  it("reads the value at a path, undefined past a missing step", () => {
    expect(valueAt({ a: [{ b: 3 }] }, ["a", 0, "b"])).toBe(3);
    expect(valueAt({ a: null }, ["a", "b"])).toBeUndefined();
  });

  it("shows values as JSON, cut at 80 characters", () => {
    expect(showValue("x")).toBe('"x"');
    expect(showValue(undefined)).toBe("nothing");
    expect(showValue(Number.NaN)).toBe("NaN");
    expect(showValue("y".repeat(100))).toHaveLength(80);
  });
});

describe("zodIssuesToDataIssues", () => {
  const turn = z.object({ user: z.string(), gold: z.array(z.string({ message: "a card id" })) }).strict("expected only `user`, `gold`");
  const schema = z.object({ kind: z.enum(["golden", "adversarial"]), n: z.number().int().min(1), turns: z.array(turn).max(2), version: z.literal(2) }).strict();

  it("maps a nested element issue to its bracketed path, with expected and received", () => {
    const input = { kind: "golden", n: 1, version: 2, turns: [{ user: "a", gold: [] }, { user: "b", gold: ["x", 7] }] };
    expect(issuesOf(schema, input, 4)).toEqual([{ file: "f.jsonl", line: 4, field: "turns[1].gold[1]", message: "expected a card id, got 7" }]);
  });

  it("derives the expectation from zod's default messages (type, enum, literal, bounds)", () => {
    const input = { kind: "gold", n: 0, version: 1, turns: [{ user: 5, gold: [] }, { user: "", gold: [] }, { user: "", gold: [] }] };
    expect(issuesOf(schema, input).map((i) => [i.field, i.message])).toEqual([
      ["kind", 'expected "golden" or "adversarial", got "gold"'],
      ["n", "expected a number >= 1, got 0"],
      ["turns", `expected an array of at most 2 items, got ${JSON.stringify(input.turns)}`],
      ["turns[0].user", "expected a string, got 5"],
      ["version", "expected 2, got 1"],
    ]);
  });

  it("says a missing field is missing, and lists each unknown key with the schema's message", () => {
    const issues = issuesOf(turn, { gold: [], extra: 1, more: 2 }, 9);
    expect(issues).toEqual([
      { file: "f.jsonl", line: 9, field: "user", message: "missing required field; expected a string" },
      { file: "f.jsonl", line: 9, field: "extra", message: "unknown field; expected only `user`, `gold`" },
      { file: "f.jsonl", line: 9, field: "more", message: "unknown field; expected only `user`, `gold`" },
    ]);
    expect(formatIssue(issues[0]!)).toBe("f.jsonl:9: field `user` missing required field; expected a string");
  });

  it("keeps a refinement's message verbatim and leaves field out for a whole-value issue", () => {
    const s = z.array(z.string()).superRefine((xs, ctx) => {
      if (new Set(xs).size !== xs.length) ctx.addIssue({ code: z.ZodIssueCode.custom, path: [1], message: 'duplicate id "a"' });
    });
    expect(issuesOf(s, ["a", "a"])).toEqual([{ file: "f.jsonl", field: "[1]", message: 'duplicate id "a"' }]);
    expect(issuesOf(z.object({}), [1])).toEqual([{ file: "f.jsonl", message: "expected an object, got [1]" }]);
  });

  it("takes the line per field path when given a function", () => {
    const r = parseWithSchema(z.object({ a: z.string(), b: z.string() }), { a: 1, b: 2 }, { file: "c.md", line: (p) => (p[0] === "a" ? 2 : 3) });
    expect(r.data).toBeUndefined();
    expect(r.issues.map((i) => [i.field, i.line])).toEqual([["a", 2], ["b", 3]]);
    expect(parseWithSchema(z.object({ a: z.string() }), { a: "x" }, { file: "c.md" })).toEqual({ data: { a: "x" }, issues: [] });
  });
});
