/**
 * Deep nesting anywhere is exit 2 with file:line:column, never a stack
 * overflow (docs/reliability.md): a JSONL line of 10^5 unclosed `[` in the
 * error scanner (`check`, `cases import`), valid JSON nested past the
 * limit, and a 10^5-deep `run.configurable`.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfigurable } from "../../src/app/graph-eval.js";
import { exitCodeOf } from "../../src/errors.js";
import { findJsonSyntaxError, MAX_JSON_DEPTH, parseJsonOrIssue, valueTooDeep } from "../../src/kb/json.js";
import { tempDir } from "../helpers/chroma.js";
import { runCli } from "../helpers/cli.js";
import { MINI_KB } from "../helpers/fixtures.js";

const DEEP = 100_000;
let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("deep-json"));
});
afterAll(() => cleanup());

const deepObject = (n: number) => {
  let v: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
};

describe("the JSON scanner and reader", () => {
  it("10^5 unclosed [ on line 3: the scanner names the column where it goes too deep", () => {
    const at = findJsonSyntaxError("[".repeat(DEEP));
    expect(at?.reason).toMatch(/nested too deeply/);
    const r = parseJsonOrIssue("[".repeat(DEEP), { file: "c.jsonl", line: 3, expected: "one JSON object per line" });
    expect("issue" in r && r.issue).toMatchObject({ file: "c.jsonl", line: 3, column: MAX_JSON_DEPTH + 1 });
  });

  it("valid JSON nested past the limit is refused at its line and column; at the limit it is read", () => {
    const deep = `${"[".repeat(DEEP)}${"]".repeat(DEEP)}`;
    const r = parseJsonOrIssue(`\n  ${deep}`, { file: "x.json", expected: "a file" });
    expect("issue" in r && r.issue).toMatchObject({ file: "x.json", line: 2, column: 3 + MAX_JSON_DEPTH });
    const ok = `${"[".repeat(MAX_JSON_DEPTH)}${"]".repeat(MAX_JSON_DEPTH)}`;
    expect("value" in parseJsonOrIssue(ok, { file: "x.json", expected: "a file" })).toBe(true);
  });

  it("valueTooDeep measures any depth without recursion", () => {
    expect(valueTooDeep(deepObject(DEEP))).toBe(true);
    expect(valueTooDeep(deepObject(10))).toBe(false);
  });

  it("a 10^5-deep run.configurable is exit 2 naming run.configurable, as an object or a file", async () => {
    const e = await parseConfigurable(deepObject(DEEP)).catch((x: unknown) => x);
    expect(exitCodeOf(e)).toBe(2);
    expect((e as Error).message).toContain("run.configurable");
    const file = path.join(dir, "configurable.json");
    await writeFile(file, `{"a":\n${"[".repeat(DEEP)}${"]".repeat(DEEP)}}`);
    const f = await parseConfigurable(file).catch((x: unknown) => x);
    expect(exitCodeOf(f)).toBe(2);
    expect((f as Error).message).toMatch(/configurable\.json:2:\d+/);
  });
});

describe("retrace check", () => {
  it("a cases line of 10^5 unclosed [: exit 2 with file:line:column", async () => {
    const cases = path.join(dir, "cases.jsonl");
    await writeFile(cases, `${"[".repeat(DEEP)}\n`);
    const r = await runCli(["check", "--kb", MINI_KB, "--cases", cases]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${cases}:1:${MAX_JSON_DEPTH + 1}`);
    expect(r.stderr).toContain("nested too deeply");
    expect(r.stderr).not.toMatch(/internal error|Maximum call stack/);
  });
});
