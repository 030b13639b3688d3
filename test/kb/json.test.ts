/**
 * JSON syntax errors name file:line:column (src/kb/json.ts; docs/reliability.md,
 * "One text loader for every input file"): the position is found by
 * jsonc-parser (not JSON.parse's message), the line and column counted from it
 * (1-based, a CRLF's \r belonging to its line); through the bin, a
 * pretty-printed report, baseline and LangSmith export broken on line N.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DataValidationError, formatIssue } from "../../src/errors.js";
import { findJsonSyntaxError, lineColumnOf, MAX_JSON_DEPTH, parseJsonOrThrow } from "../../src/kb/json.js";
import { resolvePooling } from "../../src/retrieval/embedders/transformers.js";
import { runCli } from "../helpers/cli.js";

/** The issue `parseJsonOrThrow` throws for `text`, formatted as the CLI prints it. */
function issueOf(text: string, file = "x.json"): string {
  try {
    parseJsonOrThrow(text, { file, expected: "a test file" });
  } catch (e) {
    expect(e).toBeInstanceOf(DataValidationError);
    return formatIssue((e as DataValidationError).issues[0]!);
  }
  throw new Error("expected a syntax error");
}

describe("findJsonSyntaxError", () => {
  it("is null for every valid JSON text (what JSON.parse accepts)", () => {
    for (const t of ['{"a":[1,-2.5e+3,true,false,null,"\\u00e9\\n"]}', " [ ] ", '"x"', "0", "{}", '{"a":{"b":[[{}]]}}']) {
      expect(() => JSON.parse(t)).not.toThrow();
      expect(findJsonSyntaxError(t), t).toBeNull();
    }
  });

  it("finds the offset and the reason of the first error", () => {
    expect(findJsonSyntaxError('{"a": 1,}')).toEqual({ offset: 8, reason: "expected a property name in double quotes, got '}'" });
    expect(findJsonSyntaxError('{"a": 1 "b": 2}')).toEqual({ offset: 8, reason: "expected ',' or '}' after a property value, got '\"'" });
    expect(findJsonSyntaxError("[1, 2")).toEqual({ offset: 5, reason: "expected ',' or ']' after an array element, got the end of the input" });
    expect(findJsonSyntaxError('{"a": tru}')).toEqual({ offset: 9, reason: "expected 'true', got '}'" });
    expect(findJsonSyntaxError('{"a": 01}')).toEqual({ offset: 7, reason: "expected ',' or '}' after a property value, got '1'" });
    expect(findJsonSyntaxError('"a\tb"')).toEqual({ offset: 2, reason: "control character U+0009 in a string (write it escaped)" });
    expect(findJsonSyntaxError("{} x")).toEqual({ offset: 3, reason: "unexpected 'x' after the JSON value" });
    expect(findJsonSyntaxError("")).toEqual({ offset: 0, reason: "expected a JSON value, got the end of the input" });
  });

  it("agrees with JSON.parse on which texts are invalid (a fixed sample of truncations of a valid text)", () => {
    const valid = JSON.stringify({ id: "c-1", turns: [{ user: "hé \"q\"", n: -1.5e3, ok: [true, false, null] }] }, null, 2);
    for (let cut = 0; cut < valid.length; cut++) {
      const t = valid.slice(0, cut);
      let parses = true;
      try {
        JSON.parse(t);
      } catch {
        parses = false;
      }
      expect(findJsonSyntaxError(t) === null, JSON.stringify(t)).toBe(parses);
    }
  });
});

describe("findJsonSyntaxError on jsonc-parser", () => {
  it("an error inside a string or number names the character at fault; a token where none may stand names the token", () => {
    expect(findJsonSyntaxError('["ok", "a\\qb"]')).toEqual({ offset: 10, reason: "invalid escape \\q in a string" });
    expect(findJsonSyntaxError('"\\u12g4"')).toEqual({ offset: 5, reason: "expected 4 hex digits after \\u, got 'g'" });
    expect(findJsonSyntaxError('{"a": "x\ny"}')).toEqual({ offset: 8, reason: "control character U+000A in a string (write it escaped)" });
    expect(findJsonSyntaxError('{"a": "x')).toEqual({ offset: 8, reason: "unterminated string, got the end of the input" });
    expect(findJsonSyntaxError("[1.]")).toEqual({ offset: 3, reason: "expected a digit after the decimal point, got ']'" });
    expect(findJsonSyntaxError("[1e+]")).toEqual({ offset: 4, reason: "expected a digit in the exponent, got ']'" });
    expect(findJsonSyntaxError("[-x]")).toEqual({ offset: 2, reason: "expected a digit in a number, got 'x'" });
    // The string after a value is the error, whatever is wrong inside it.
    expect(findJsonSyntaxError('[1 "a\n')).toEqual({ offset: 3, reason: "expected ',' or ']' after an array element, got '\"'" });
    expect(findJsonSyntaxError("{1.}")).toEqual({ offset: 1, reason: "expected a property name in double quotes, got '1'" });
    // Comments and trailing commas are not JSON (jsonc-parser would take them).
    expect(findJsonSyntaxError("[1, // c\n2]")).toEqual({ offset: 4, reason: "expected a JSON value, got '/'" });
    expect(findJsonSyntaxError("[1,]")).toEqual({ offset: 3, reason: "expected a JSON value, got ']'" });
    expect(findJsonSyntaxError("{")).toEqual({ offset: 1, reason: "expected a property name in double quotes, got the end of the input" });
  });

  it("a syntax error before JSON nested too deeply is named, not the depth", () => {
    const text = `[1 2, ${"[".repeat(600)}`;
    expect(findJsonSyntaxError(text)).toEqual({ offset: 3, reason: "expected ',' or ']' after an array element, got '2'" });
    expect(findJsonSyntaxError(`[1, ${"[".repeat(600)}`)?.offset).toBe(4 + MAX_JSON_DEPTH - 1);
  });

  it("agrees with JSON.parse on which texts are invalid (property, fixed seed: mutated JSON documents)", () => {
    const alphabet = fc.constantFrom(...'{}[]:,"\\ \n\t-0123456789.eE+truefalsnxu/\u0001\u00a0ab'.split(""));
    const mutated = fc
      .jsonValue()
      .map((v) => JSON.stringify(v, null, 1))
      .chain((t) => fc.tuple(fc.constant(t), fc.nat(t.length), fc.nat(3), alphabet))
      .map(([t, i, drop, c]) => t.slice(0, i) + c + t.slice(i + drop));
    fc.assert(
      fc.property(fc.oneof(mutated, fc.array(alphabet, { maxLength: 25 }).map((a) => a.join(""))), (t) => {
        let parses = true;
        try {
          JSON.parse(t);
        } catch {
          parses = false;
        }
        const at = findJsonSyntaxError(t);
        expect(at === null, JSON.stringify(t)).toBe(parses);
        if (at !== null) expect(at.offset).toBeLessThanOrEqual(t.length);
      }),
      { numRuns: 3000, seed: 55 },
    );
  });
});

describe("file:line:column", () => {
  it("lineColumnOf counts lines at \\n and columns from 1", () => {
    expect(lineColumnOf("ab\ncd\r\nef", 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumnOf("ab\ncd\r\nef", 4)).toEqual({ line: 2, column: 2 });
    expect(lineColumnOf("ab\ncd\r\nef", 8)).toEqual({ line: 3, column: 2 });
  });

  it("a pretty-printed file with a trailing comma on line 4 is named at the '}' that follows it (line 5, column 1)", () => {
    const text = '{\n  "a": 1,\n  "b": [1, 2],\n  "c": true,\n}\n';
    // Line 5 column 1 is the `}` after the trailing comma of line 4.
    expect(issueOf(text)).toBe("x.json:5:1: malformed JSON (expected a property name in double quotes, got '}'); expected a test file");
    expect(issueOf('{\r\n  "a": 1\r\n  "b": 2\r\n}')).toBe("x.json:3:3: malformed JSON (expected ',' or '}' after a property value, got '\"'); expected a test file");
  });

  it("a JSON line of a JSONL file keeps its line number; the column is within the line", () => {
    try {
      parseJsonOrThrow('{"id": x}', { file: "c.jsonl", line: 7, expected: "one JSON object per line" });
    } catch (e) {
      expect(formatIssue((e as DataValidationError).issues[0]!)).toBe("c.jsonl:7:8: malformed JSON (expected a JSON value, got 'x'); expected one JSON object per line");
      return;
    }
    throw new Error("expected a syntax error");
  });
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "retrace-json-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("a model folder's JSON (sentence-transformers modules.json)", () => {
  it("a syntax error names modules.json:line:column", async () => {
    const model = path.join(dir, "model");
    await mkdir(model, { recursive: true });
    // Line 3 ends `"type": "sentence_transformers.models.Pooling"` with no comma; line 4's first quote is at column 5.
    await writeFile(path.join(model, "modules.json"), '[\n  {\n    "type": "sentence_transformers.models.Pooling"\n    "path": "1_Pooling"\n  }\n]\n');
    const e = await resolvePooling("tiny", model).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DataValidationError);
    expect(formatIssue((e as DataValidationError).issues[0]!)).toBe(
      `${path.join(model, "modules.json")}:4:5: malformed JSON (expected ',' or '}' after a property value, got '"'); expected a sentence-transformers modules.json (a JSON array of modules)`,
    );
  });
});

describe("through the bin", () => {
  // Line 3 of each file lacks the comma after its value: the error is at the next line's first quote, column 3.
  const broken = '{\n  "schemaVersion": 1,\n  "k": 5\n  "turns": []\n}\n';

  it("retrace report and retrace compare: exit 2 naming file:4:3", async () => {
    const file = path.join(dir, "report.json");
    await writeFile(file, broken);
    for (const args of [
      ["report", file, "--out", `markdown:${path.join(dir, "out.md")}`],
      ["compare", file, file],
    ]) {
      const r = await runCli(args);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${file}:4:3: malformed JSON (expected ',' or '}' after a property value, got '"'); expected a retrace report`);
      expect(r.stdout).toBe("");
    }
  });

  it("retrace cases import of a pretty-printed LangSmith export: exit 2 naming file:line:column", async () => {
    const file = path.join(dir, "runs.json");
    await writeFile(file, '[\n  {\n    "id": "r1",\n    "inputs": {"messages": []},\n    "outputs": {} ,,\n  }\n]\n');
    const r = await runCli(["cases", "import", file]);
    expect(r.exitCode, r.stderr).toBe(2);
    // Line 5 is `    "outputs": {} ,,`: 4 spaces, `"outputs":` to column 14, `{}` at 16–17, the separating comma at 19, the stray one at 20.
    expect(r.stderr).toContain(`${file}:5:20: malformed JSON (expected a property name in double quotes, got ','); expected a JSON array of runs or one JSON object a line`);
  });
});
